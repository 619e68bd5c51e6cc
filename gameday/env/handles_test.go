package env

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/redisserver"
	"github.com/gameday-dev/gameday/gameday/system"
	"github.com/gameday-dev/gameday/internal/health"
	"github.com/gameday-dev/gameday/internal/testenv"
)

// redisArgv is a redis-server of the test's own on a free loopback port,
// writing its pid to pidFile: what a user's start command would run.
func redisArgv(t *testing.T, dir string) (argv []string, addr, pidFile string) {
	t.Helper()
	bin, err := redisserver.Find("")
	if err != nil {
		t.Fatalf("%v; the README's test command installs redis-server", err)
	}
	addr = testenv.FreeAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	pidFile = filepath.Join(dir, "redis.pid")
	return []string{bin, "--bind", "127.0.0.1", "--port", port, "--save", "", "--appendonly", "no",
		"--dir", dir, "--pidfile", pidFile, "--daemonize", "no"}, addr, pidFile
}

func answers(addr string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := health.Check(ctx, "redis://"+addr)
	return err == nil
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10s", what)
		}
	}
}

// A pid file handle kills, pauses, resumes and starts a real process, and
// a start waits until the process answers at its ready URL.
func TestPIDFileHandle(t *testing.T) {
	dir := t.TempDir()
	argv, addr, pidFile := redisArgv(t, dir)
	h, err := newHandle(context.Background(), "cache", &system.Process{PIDFile: pidFile, Start: argv, Ready: "redis://" + addr, Timeout: system.Duration(10 * time.Second)}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Kill() })
	if !answers(addr) {
		t.Fatal("started, but not answering")
	}
	if err := h.Pause(); err != nil {
		t.Fatal(err)
	}
	if answers(addr) {
		t.Error("paused, but answering")
	}
	if err := h.Resume(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "answering after resume", func() bool { return answers(addr) })
	if err := h.Kill(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "gone after kill", func() bool { return !answers(addr) })
	if err := h.Start(context.Background()); err != nil || !answers(addr) {
		t.Fatalf("start again: %v", err)
	}
}

// A command handle runs the user's programs (no shell), bounded by its
// timeout; an action it has no program for is refused, naming where to
// add one.
func TestCommandHandle(t *testing.T) {
	dir := t.TempDir()
	argv, addr, pidFile := redisArgv(t, dir)
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		t.Fatalf("redis-cli: %v", err)
	}
	_, port, _ := net.SplitHostPort(addr)
	// redis-server detaches itself: the start program returns once the
	// server runs, as a service's start command does.
	start := append(argv[:len(argv)-1:len(argv)-1], "yes")
	h, err := newHandle(context.Background(), "cache", &system.Process{
		Command: &system.Commands{Start: start, Kill: []string{cli, "-h", "127.0.0.1", "-p", port, "shutdown", "nosave"}},
		Ready:   "redis://" + addr, Timeout: system.Duration(10 * time.Second),
	}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if b, err := os.ReadFile(pidFile); err == nil {
			if pid, err := strconv.Atoi(string(b[:len(b)-1])); err == nil {
				if p, err := os.FindProcess(pid); err == nil {
					_ = p.Kill()
				}
			}
		}
	})
	if err := h.Kill(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "gone after kill", func() bool { return !answers(addr) })
	if err := h.Pause(); err == nil || !strings.Contains(err.Error(), "dependencies.cache.process") {
		t.Errorf("pause without a program: %v", err)
	}
	slow, err := newHandle(context.Background(), "cache", &system.Process{Command: &system.Commands{Kill: []string{"sleep", "10"}}, Timeout: system.Duration(200 * time.Millisecond)}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	if err := slow.Kill(); err == nil || time.Since(began) > 3*time.Second {
		t.Errorf("a command past its timeout: %v after %s", err, time.Since(began))
	}
}
