// Package inputfile reads the files a user hands to gameday (scenarios,
// system descriptions, the matrix, run records) without trusting them to
// be ordinary files: a FIFO, a device or a directory is refused at once
// instead of blocking the command forever or reading without end.
package inputfile

import (
	"fmt"
	"io"
	"os"
)

// Read reads at most max+1 bytes of the regular file at path: enough for
// the caller to tell a file that is too large, never more. Anything but a
// regular file (after following symbolic links) is an error naming what
// it is, returned before the file is opened, so that opening a FIFO never
// waits for a writer.
func Read(path string, max int64) ([]byte, error) {
	before, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := regular(path, before); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// The path may have been swapped between the Stat and the Open.
	after, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !os.SameFile(before, after) {
		return nil, fmt.Errorf("%s: changed while being opened", path)
	}
	return io.ReadAll(io.LimitReader(f, max+1))
}

func regular(path string, fi os.FileInfo) error {
	m := fi.Mode()
	if m.IsRegular() {
		return nil
	}
	what := "not a regular file"
	switch {
	case m.IsDir():
		what = "a directory, not a file"
	case m&os.ModeNamedPipe != 0:
		what = "a named pipe (FIFO), not a regular file"
	case m&os.ModeSocket != 0:
		what = "a socket, not a regular file"
	case m&os.ModeDevice != 0:
		what = "a device, not a regular file"
	}
	return fmt.Errorf("%s: %s", path, what)
}
