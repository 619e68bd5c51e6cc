package docker

import (
	"os"
	"path"
	"strings"
	"testing"
)

// A container's process is taken only where this host's /proc knows it as
// the container's: its cgroup names the container. Read from the real
// /proc: this process's own cgroup stands for a container's.
func TestOwnsProcessReadsTheCgroup(t *testing.T) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Skip("no /proc/PID/cgroup here")
	}
	var id string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if i := strings.LastIndexByte(line, ':'); i >= 0 && len(path.Base(line[i+1:])) > 1 {
			id = path.Base(line[i+1:]) // the innermost group, as a container's id would be
			break
		}
	}
	if id == "" {
		t.Skip("this process is in the root cgroup only")
	}
	pid := os.Getpid()
	if !ownsProcess(id, pid) {
		t.Errorf("process %d is in %s (%s), but not found there", pid, id, b)
	}
	if ownsProcess("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", pid) {
		t.Errorf("process %d taken for another container's", pid)
	}
	if ownsProcess(id, 1<<30) {
		t.Error("a process that does not exist taken for the container's")
	}
}
