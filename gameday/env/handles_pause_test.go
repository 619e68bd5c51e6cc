package env

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/system"
	"github.com/gameday-dev/gameday/internal/owner"
)

// stopped reports whether pid is stopped (state T in /proc/PID/stat).
func stopped(t *testing.T, pid int) bool {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return f[0] == "T"
}

// sleeper is a process of the test's own, its pid in a pid file, killed
// when the test ends.
func sleeper(t *testing.T, dir string) (pid int, pidFile string) {
	t.Helper()
	cmd := exec.Command("sleep", "120")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	pidFile = filepath.Join(dir, "sleep.pid")
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid, pidFile
}

// waitStopped waits (up to 5 s) until pid's state is want: a signal
// stops or continues a sleeping process a moment after kill returns.
func waitStopped(t *testing.T, pid int, want bool) bool {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); stopped(t, pid) != want; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}

// journalStub records what a handle journals: the claim is about the
// handle's own order of steps, not about the journal. With fail set,
// Pausing fails, as a journal that cannot be written does.
type journalStub struct {
	paused map[string]Paused
	events []string
	fail   bool
}

func (j *journalStub) Pausing(dep string, p Paused) error {
	if j.fail {
		return os.ErrPermission
	}
	j.paused[dep] = p
	j.events = append(j.events, "pausing "+dep)
	return nil
}

func (j *journalStub) Resumed(dep string) error {
	delete(j.paused, dep)
	j.events = append(j.events, "resumed "+dep)
	return nil
}

// A pause through a pid file handle is journaled before the process is
// stopped (a journal that cannot be written stops nothing), with the
// process as it was (pid and start time), and forgotten after it runs
// again; the record resumes it from outside the handle, as a cleanup
// after the runner was killed does.
func TestPIDFilePauseIsJournaledFirst(t *testing.T) {
	dir := t.TempDir()
	pid, pidFile := sleeper(t, dir)
	h, err := newHandle(context.Background(), "cache", &system.Process{PIDFile: "sleep.pid", Start: []string{"sleep", "120"}, Timeout: system.Duration(10 * time.Second)}, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	j := &journalStub{paused: map[string]Paused{}, fail: true}
	d := &Described{procs: map[string]*handle{"cache": h}}
	if !JournalPauses(d, j) {
		t.Fatal("JournalPauses found no handle to journal")
	}
	if err := h.Pause(); err == nil || !strings.Contains(err.Error(), "journal it first") {
		t.Errorf("pause with a journal that fails: %v, want the journal's error", err)
	}
	time.Sleep(100 * time.Millisecond)
	if stopped(t, pid) {
		t.Fatal("a pause whose journal failed stopped the process")
	}
	j.fail = false
	if err := h.Pause(); err != nil {
		t.Fatal(err)
	}
	p := j.paused["cache"]
	if o, ok := owner.Parse(p.Process); !ok || o != owner.Of(pid) || p.Handle != "pid_file" || p.PIDFile != pidFile || p.Where != owner.Self().Where {
		t.Errorf("journaled %+v; want pid %d of %s as owner.Of has it", p, pid, pidFile)
	}
	if !waitStopped(t, pid, true) {
		t.Fatal("paused, but not stopped")
	}
	if err := p.Resume(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !waitStopped(t, pid, false) {
		t.Error("the record's Resume left the process stopped")
	}
	if err := h.Pause(); err != nil {
		t.Fatal(err)
	}
	if err := h.Resume(); err != nil {
		t.Fatal(err)
	}
	if !waitStopped(t, pid, false) {
		t.Error("resumed, but stopped")
	}
	if got, want := strings.Join(j.events, "|"), "pausing cache|pausing cache|resumed cache"; got != want {
		t.Errorf("journal saw %q, want %q", got, want)
	}
	if len(j.paused) != 0 {
		t.Errorf("still journaled after resume: %+v", j.paused)
	}
}

// A record resumes only the process it paused: if the pid now belongs to
// another process (another start time), or the process ran in another
// pid namespace or on another host, nothing is signalled; from another
// host a systemd or command record refuses, naming the host.
func TestPausedResumesOnlyWhatItPaused(t *testing.T) {
	dir := t.TempDir()
	pid, pidFile := sleeper(t, dir)
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	o := owner.Of(pid)
	reused := o
	reused.Started = "1" // the pid, but a process started at boot
	if !waitStopped(t, pid, true) {
		t.Fatal("SIGSTOP did not stop it")
	}
	if err := (Paused{Handle: "pid_file", PIDFile: pidFile, Process: reused.String(), Where: o.Where}).Resume(context.Background()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if !stopped(t, pid) {
		t.Error("SIGCONT went to a pid that now belongs to another process")
	}
	elsewhere := o
	elsewhere.Where = "pod-x@pid:[4026532999]"
	err := (Paused{Handle: "pid_file", PIDFile: pidFile, Process: elsewhere.String(), Where: elsewhere.Where}).Resume(context.Background())
	if err == nil || !strings.Contains(err.Error(), "pod-x") || !stopped(t, pid) {
		t.Errorf("a pause in another pid namespace: %v (stopped %v); want a refusal naming the host", err, stopped(t, pid))
	}
	for _, p := range []Paused{
		{Handle: "systemd", Systemd: "postgresql.service", Where: "db-7@pid:[1]"},
		{Handle: "command", Command: []string{"kill", "-CONT", strconv.Itoa(pid)}, Where: "db-7@pid:[1]"},
	} {
		if err := p.Resume(context.Background()); err == nil || !strings.Contains(err.Error(), "on host db-7") {
			t.Errorf("%s from another host: %v; want a refusal naming the host", p, err)
		}
	}
	if !stopped(t, pid) {
		t.Error("a refused resume signalled the process")
	}
	cmd := Paused{Handle: "command", Command: []string{"kill", "-CONT", strconv.Itoa(pid)}, Dir: dir, Where: owner.Self().Where}
	if err := cmd.Resume(context.Background()); err != nil || !waitStopped(t, pid, false) {
		t.Errorf("a command record on this host: %v (stopped %v)", err, stopped(t, pid))
	}
	if err := (Paused{Handle: "command", Where: owner.Self().Where}).Resume(context.Background()); err == nil || !strings.Contains(err.Error(), "by hand") {
		t.Errorf("a command handle with no resume program: %v; want a refusal saying to resume by hand", err)
	}
}

// A command handle's record carries its resume program and directory, and
// shows the program with its secrets masked; a systemd handle's, its unit.
func TestPausedRecordsOfOtherHandles(t *testing.T) {
	dir := t.TempDir()
	h, err := newHandle(context.Background(), "db", &system.Process{Command: &system.Commands{
		Pause: []string{"true"}, Resume: []string{"/usr/local/bin/db-ctl", "resume", "--token", "s3cret"}}, Timeout: system.Duration(5 * time.Second)}, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := h.record()
	if err != nil || p.Handle != "command" || p.Dir != dir || len(p.Command) != 4 {
		t.Fatalf("command record %+v, %v", p, err)
	}
	if s := p.String(); strings.Contains(s, "s3cret") || !strings.Contains(s, "db-ctl resume --token") {
		t.Errorf("command record shown as %q", s)
	}
	h, err = newHandle(context.Background(), "db", &system.Process{Systemd: "postgresql@15-main.service", Timeout: system.Duration(5 * time.Second)}, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p, err := h.record(); err != nil || p.Handle != "systemd" || p.Systemd != "postgresql@15-main.service" || !(owner.Owner{Where: p.Where}).SameHost() {
		t.Errorf("systemd record %+v, %v", p, err)
	}
}
