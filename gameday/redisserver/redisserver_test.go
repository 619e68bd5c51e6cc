package redisserver_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/redisserver"
)

func TestStartKillRestart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := redisserver.Start(ctx, redisserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Kill() })
	if host, _, _ := net.SplitHostPort(s.Addr()); host != "127.0.0.1" {
		t.Errorf("bound to %s, want loopback", s.Addr())
	}
	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.Done():
	default:
		t.Fatal("Kill returned before the process exited")
	}
	if c, err := net.DialTimeout("tcp", s.Addr(), time.Second); err == nil {
		c.Close()
		t.Fatal("killed server still accepts connections")
	}
	s2, err := s.Restart(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s2.Stop() })
	if s2.Addr() != s.Addr() {
		t.Errorf("restarted on %s, want %s", s2.Addr(), s.Addr())
	}
}

func TestMissingBinary(t *testing.T) {
	_, err := redisserver.Start(context.Background(), redisserver.Options{Bin: "no-such-redis-server"})
	if err != redisserver.ErrNotInstalled {
		t.Errorf("err = %v, want ErrNotInstalled", err)
	}
}
