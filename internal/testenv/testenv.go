// Package testenv gives tests real dependencies: redis-server processes and
// an embedded Toxiproxy, on loopback, removed when the test ends.
//
// Tests that make claims about Redis or the network use these, never a fake.
// When redis-server is missing the test fails with a hint instead of
// skipping: a green run must mean the claims were checked.
package testenv

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/redisserver"
	"github.com/gameday-dev/gameday/gameday/toxi"
)

// Redis starts a real redis-server on a loopback port reserved for it
// (FreeAddr's kind: no other server of the test binary, nor the kernel's
// ":0", gets it, even while a test has it killed), and stops it and gives
// the port back when the test ends.
func Redis(tb testing.TB) *redisserver.Server {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := redisserver.Start(ctx, redisserver.Options{})
	if errors.Is(err, redisserver.ErrNotInstalled) {
		tb.Fatalf("%v; the README's test command installs it", err)
	}
	if err != nil {
		tb.Fatalf("start redis-server: %v", err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	return s
}

// Toxiproxy starts an embedded Toxiproxy on a free loopback port and returns
// a client for its API. Every proxy is removed when the test ends.
func Toxiproxy(tb testing.TB) *toxi.Client {
	tb.Helper()
	e, err := toxi.StartEmbedded("127.0.0.1:0", toxi.EmbeddedOptions{})
	if err != nil {
		tb.Fatalf("start embedded toxiproxy: %v", err)
	}
	tb.Cleanup(func() { _ = e.Close() })
	c := toxi.NewClient(e.APIAddr())
	if _, err := c.Version(context.Background()); err != nil {
		tb.Fatalf("toxiproxy api not answering: %v", err)
	}
	return c
}

// Proxy creates a proxy named name in front of upstream, listening on a free
// loopback port, and returns the address to dial.
func Proxy(tb testing.TB, c *toxi.Client, name, upstream string) string {
	tb.Helper()
	p, err := c.CreateProxy(context.Background(), name, "127.0.0.1:0", upstream)
	if err != nil {
		tb.Fatalf("create proxy %s: %v", name, err)
	}
	return p.Listen
}

// AddToxic adds a toxic and fails the test on error.
func AddToxic(tb testing.TB, c *toxi.Client, proxy string, t toxi.Toxic) {
	tb.Helper()
	if _, err := c.AddToxic(context.Background(), proxy, t); err != nil {
		tb.Fatalf("add toxic %s to %s: %v", t.Name, proxy, err)
	}
}

// RemoveToxic removes a toxic and fails the test on error.
func RemoveToxic(tb testing.TB, c *toxi.Client, proxy, name string) {
	tb.Helper()
	if err := c.RemoveToxic(context.Background(), proxy, name); err != nil {
		tb.Fatalf("remove toxic %s from %s: %v", name, proxy, err)
	}
}

// SetEnabled enables or disables a proxy and fails the test on error.
func SetEnabled(tb testing.TB, c *toxi.Client, proxy string, enabled bool) {
	tb.Helper()
	if err := c.SetEnabled(context.Background(), proxy, enabled); err != nil {
		tb.Fatalf("set proxy %s enabled=%v: %v", proxy, enabled, err)
	}
}

// serve starts a server process for a test: in its own process group, its
// output kept for the test's messages, and stopped when the test ends
// (SIGTERM, then after 10s SIGKILL to the whole group). done is closed when
// it exits.
func serve(tb testing.TB, cmd *exec.Cmd) (done <-chan struct{}, output *bytes.Buffer) {
	tb.Helper()
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	out := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start %s: %v", filepath.Base(cmd.Path), err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	tb.Cleanup(func() {
		_ = syscall.Kill(cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	})
	return exited, out
}
