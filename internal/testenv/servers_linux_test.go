//go:build linux

package testenv_test

import (
	"bytes"
	"net"
	"net/http"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/internal/testenv"
)

// Every server the tests start listens on a port reserved for it (a
// shared reservation, held by the test while the server binds it): each
// sets SO_REUSEADDR, which is what lets it. A server that did not would
// fail to start here.
func TestServersListenOnReservedPorts(t *testing.T) {
	dialable := func(t *testing.T, addr string) {
		t.Helper()
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatalf("dial %s: %v", addr, err)
		}
		c.Close()
	}
	t.Run("redis-server", func(t *testing.T) { dialable(t, testenv.Redis(t).Addr()) })
	t.Run("postgres", func(t *testing.T) { dialable(t, testenv.PostgresServer(t).Addr) })
	t.Run("mariadbd", func(t *testing.T) { dialable(t, testenv.MySQLServer(t).Addr) })
	t.Run("prometheus", func(t *testing.T) {
		resp, err := http.Get(testenv.PrometheusServer(t) + "/-/ready")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	})
	// The Python example shop serves with http.server, as here.
	t.Run("python http.server", func(t *testing.T) {
		addr := testenv.FreeAddr(t)
		host, port, _ := net.SplitHostPort(addr)
		cmd := exec.Command("/usr/bin/python3", "-m", "http.server", "--bind", host, "--directory", t.TempDir(), port)
		out := &lockedBuffer{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			if resp, err := http.Get("http://" + addr + "/"); err == nil {
				resp.Body.Close()
				return
			}
			select {
			case <-exited:
				t.Fatalf("python3 -m http.server on %s exited:\n%s", addr, out.String())
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("python3 -m http.server not answering on %s within 20s:\n%s", addr, out.String())
			}
		}
	})
}

// lockedBuffer is a child's output, written by os/exec's copier and read
// by the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
