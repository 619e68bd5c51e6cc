//go:build unix

package inputfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A FIFO, a directory and a device are refused at once; a regular file is
// read up to one byte past the limit.
func TestReadRefusesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "scenario.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	for path, want := range map[string]string{fifo: "named pipe", dir: "directory", "/dev/null": "device"} {
		done := make(chan error, 1)
		go func() { _, err := Read(path, 10); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), path) {
				t.Errorf("Read(%s) = %v, want an error naming the path and %q", path, err, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("Read(%s) still waiting after 5s", path)
		}
	}
	file := filepath.Join(dir, "ok.yaml")
	if err := os.WriteFile(file, []byte("0123456789abc"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := Read(file, 10)
	if err != nil || string(b) != "0123456789a" {
		t.Errorf("Read = %q, %v; want the first 11 bytes", b, err)
	}
	link := filepath.Join(dir, "link.yaml")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(link, 100); err != nil {
		t.Errorf("a symbolic link to a regular file: %v", err)
	}
}
