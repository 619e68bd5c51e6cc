package redisserver_test

import (
	"context"
	"errors"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/redisserver"
)

// plainBind binds a socket without SO_REUSEADDR to 127.0.0.1:port, as a
// program that does not share ports does, and reports the error. The
// kernel's ":0" picks no port that such a bind is refused.
func plainBind(t *testing.T, port int) error {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	return syscall.Bind(fd, &syscall.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}})
}

// A server's port stays reserved while it is killed, for its restart (a
// drill that kills Redis and brings it back on its address): nobody else
// can take it meanwhile. Close gives it back.
func TestAKilledServerKeepsItsPort(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := redisserver.Start(ctx, redisserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := plainBind(t, s.Port()); !errors.Is(err, syscall.EADDRINUSE) {
		t.Fatalf("bind %s while its server is killed: %v, want address in use (the port is the server's)", s.Addr(), err)
	}
	s2, err := s.Restart(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s2.Close() })
	if s2.Addr() != s.Addr() {
		t.Fatalf("restarted on %s, want %s", s2.Addr(), s.Addr())
	}
	if err := s2.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := plainBind(t, s.Port()); !errors.Is(err, syscall.EADDRINUSE) {
		t.Fatalf("bind %s while its restarted server is killed: %v, want address in use", s.Addr(), err)
	}
	s.Close()
	s2.Close()
	if err := plainBind(t, s.Port()); err != nil {
		t.Errorf("bind %s after Close: %v, want the port given back", s.Addr(), err)
	}
	if c, err := net.DialTimeout("tcp", s.Addr(), time.Second); err == nil {
		c.Close()
		t.Error("a closed server's port answers")
	}
}
