//go:build unix

package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// gameday validate given a FIFO, as a scenario or as a system file, says
// so at once and exits 2; it once waited forever for a writer.
func TestValidateRefusesAFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "drill.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	for _, args := range [][]string{{fifo}, {"--system", fifo}} {
		var stdout, stderr bytes.Buffer
		done := make(chan error, 1)
		go func() { done <- validateCmd(args, &stdout, &stderr) }()
		select {
		case err := <-done:
			if _, usage := err.(usageError); !usage || !strings.Contains(stderr.String(), fifo+": a named pipe (FIFO), not a regular file") {
				t.Errorf("validate %v: error %v, stderr %q", args, err, stderr.String())
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("validate %v still waiting after 5s", args)
		}
	}
}
