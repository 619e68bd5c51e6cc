package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/env"
	"github.com/gameday-dev/gameday/gameday/faults"
	"github.com/gameday-dev/gameday/internal/owner"
)

// procStopped reports whether pid is stopped (state T).
func procStopped(t *testing.T, pid int) bool {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	return strings.Fields(s[strings.LastIndexByte(s, ')')+1:])[0] == "T"
}

// gameday cleanup shows a user what a journal holds beyond toxics: a
// killed runner's pause through a pid_file handle is undone (the real
// process runs again) and said so; a pause on another host cannot be
// undone here, is set aside (exit 1) and says where to undo it, with the
// resume program's secret masked; a runner in a pod whose lease still
// runs is left alone and listed with its lease.
func TestCleanupShowsPausesAndLeases(t *testing.T) {
	dir := t.TempDir()
	target := exec.Command("sleep", "120")
	if err := target.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = target.Process.Kill(); _ = target.Wait() })
	pid := target.Process.Pid
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); !procStopped(t, pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("SIGSTOP did not stop the process")
		}
	}
	self := owner.Self()
	lease := time.Now().Add(time.Hour).UTC().Format(time.RFC3339Nano)
	pidFile := filepath.Join(dir, "cache.pid")
	// As runners left it: one killed here mid-pause (pid 1 of this boot
	// started at another time is not that runner), one on another host
	// mid-pause, one in a pod with its lease still running.
	es := []faults.Entry{
		{RunID: "dead", Pid: 1, Started: "12345", Boot: self.Boot, Where: self.Where, Lease: lease, Dependency: "cache", Action: "pause",
			Paused: &env.Paused{Handle: "pid_file", PIDFile: pidFile, Process: owner.Of(pid).String(), Where: self.Where}},
		{RunID: "far", Pid: 1, Started: "12345", Boot: "b", Where: "db-7@pid:[4026531836]", Lease: "2001-01-01T00:00:00Z", Dependency: "db", Action: "pause",
			Paused: &env.Paused{Handle: "command", Command: []string{"/usr/local/bin/db-ctl", "resume", "--token", "s3cret"}, Where: "db-7@pid:[4026531836]"}},
		{RunID: "pod", Pid: 1, Started: "999", Boot: "b", Where: "gameday-coordinator-x7k2q@pid:[4026532501]", Lease: lease,
			Toxiproxy: "http://toxiproxy.drills:8474", Proxy: "inventory", Toxic: "gameday-pod-slow"},
	}
	data, err := json.Marshal(es)
	if err != nil {
		t.Fatal(err)
	}
	journal := filepath.Join(dir, "journal.json")
	if err := os.WriteFile(journal, data, 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run([]string{"cleanup", "-containers=false", "-journal", journal}, &stdout, &stderr)
	out := stdout.String() + stderr.String()
	if code != exitFailed {
		t.Errorf("exit %d, want 1 (a fault set aside)\n%s", code, out)
	}
	for _, want := range []string{
		"undid the pause of cache (pid " + strconv.Itoa(pid) + " of " + pidFile + ") (run dead)",
		"set aside: pause of db (resume program /usr/local/bin/db-ctl resume --token xxxxx) (run far) could not be undone",
		"paused on host db-7: resume it there",
		"gameday cleanup -drop far",
		"left alone: toxic gameday-pod-slow on http://toxiproxy.drills:8474/inventory (run pod): its runner is pid 1 on gameday-coordinator-x7k2q, alive: its lease runs until " + lease,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "s3cret") {
		t.Errorf("output shows the resume program's secret:\n%s", out)
	}
	for deadline := time.Now().Add(5 * time.Second); procStopped(t, pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("cleanup said it undid the pause, but the process is still stopped")
		}
	}
	left, err := faults.OpenJournal(journal).Entries()
	if err != nil || len(left) != 2 {
		t.Errorf("the journal keeps %+v, %v; want the set-aside pause and the pod's toxic", left, err)
	}
}
