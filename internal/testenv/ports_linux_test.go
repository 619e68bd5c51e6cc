//go:build linux

package testenv_test

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/internal/testenv"
)

// The health command's test once found its closed port answered by the
// redis-server it started next: the port had been taken from ":0" and
// closed, and redis-server's ":0" picked it. Here the same shape, on a
// machine whose kernel has few ports left to pick (every port of the
// closed one's parity in the ephemeral range is taken, but for the closed
// one and three others spread around the range, and Linux's ":0" looks at
// one parity first): a closed port reserved, then a redis-server started
// through testenv.Redis twenty times. None is on the closed port, which
// still refuses connections at the end.
func TestNoRedisOnAClosedPort(t *testing.T) {
	closed := testenv.ClosedAddr(t)
	_, p, _ := net.SplitHostPort(closed)
	port, _ := strconv.Atoi(p)
	crowd(t, port, 3)
	for i := range 20 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			if rs := testenv.Redis(t); rs.Addr() == closed {
				t.Fatalf("redis-server %d started on the closed port %s", i, closed)
			}
		})
	}
	c, err := net.DialTimeout("tcp", closed, 2*time.Second)
	if err == nil {
		c.Close()
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("dial the closed port %s: %v, want connection refused", closed, err)
	}
}

// crowd binds, until the test ends, every port of the ephemeral range
// with keep's parity but keep and free others spread evenly around the
// range with it, as far as the test's open files allow.
func crowd(t *testing.T, keep, free int) {
	t.Helper()
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		t.Fatal(err)
	}
	var lo, hi int
	if _, err := fmt.Sscan(strings.TrimSpace(string(b)), &lo, &hi); err != nil {
		t.Fatalf("ip_local_port_range %q: %v", b, err)
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	budget := int(lim.Cur) - 1024
	// The range's ports of keep's parity, in the order the kernel looks at
	// them (up, around), from keep on.
	var same []int
	for q := keep; q <= hi; q += 2 {
		same = append(same, q)
	}
	for q := lo + (keep-lo)%2; q < keep; q += 2 {
		same = append(same, q)
	}
	spared := map[int]bool{}
	for k := 0; k <= free; k++ {
		spared[same[k*len(same)/(free+1)]] = true
	}
	held := 0
	for _, q := range same {
		if spared[q] || held >= budget {
			continue
		}
		fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		if syscall.Bind(fd, &syscall.SockaddrInet4{Port: q, Addr: [4]byte{127, 0, 0, 1}}) != nil {
			syscall.Close(fd) // taken already
			continue
		}
		held++
		t.Cleanup(func() { syscall.Close(fd) })
	}
	t.Logf("%d ports of %d bound", held, len(same)-len(spared))
}
