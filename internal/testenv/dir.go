package testenv

import (
	"errors"
	"io/fs"
	"os"
	"testing"
)

// DirNames lists the names in dir, in order; none for a directory that
// does not exist (it holds nothing), and the test fails on any other
// error. For tests that check what a command or a cleanup left behind.
func DirNames(tb testing.TB, dir string) []string {
	tb.Helper()
	des, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		tb.Fatal(err)
	}
	var names []string
	for _, d := range des {
		names = append(names, d.Name())
	}
	return names
}
