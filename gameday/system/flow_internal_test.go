package system

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// An answer is read whole however the body hands it over, cut at
// maxAnswer, and a broken read is an error.
func TestReadAnswer(t *testing.T) {
	long := strings.Repeat("x", maxAnswer+100)
	for _, c := range []struct {
		name string
		r    io.Reader
		want string
	}{
		{"whole", strings.NewReader(`{"ok":true}`), `{"ok":true}`},
		{"a byte at a time", iotest.OneByteReader(strings.NewReader(`{"ok":true}`)), `{"ok":true}`},
		{"end with the data", iotest.DataErrReader(strings.NewReader("0123456789")), "0123456789"},
		{"past the bound", strings.NewReader(long), long[:maxAnswer]},
	} {
		got, err := readAnswer(make([]byte, 0, 4), c.r)
		if err != nil || string(got) != c.want {
			t.Errorf("%s: %d bytes, %v; want %d bytes", c.name, len(got), err, len(c.want))
		}
	}
	broken := errors.New("reset")
	if _, err := readAnswer(nil, io.MultiReader(strings.NewReader("ab"), iotest.ErrReader(broken))); !errors.Is(err, broken) {
		t.Errorf("a broken read: %v, want %v", err, broken)
	}
}
