//go:build linux

package ports_test

import (
	"errors"
	"net"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/internal/ports"
)

// dial connects to addr and returns the error (nil: someone listens).
func dial(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err == nil {
		c.Close()
	}
	return err
}

// bindPlain binds a socket without SO_REUSEADDR to addr's port, as a
// program that does not share ports does, and reports the error.
func bindPlain(t *testing.T, port int) error {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	return syscall.Bind(fd, &syscall.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}})
}

// A closed port refuses connections and cannot be listened on, by Go's
// net.Listen (which sets SO_REUSEADDR) or by a plain bind, while it is
// reserved; given back, it can.
func TestAClosedPortStaysClosed(t *testing.T) {
	r, err := ports.Closed("")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if !r.Held() {
		t.Error("a closed port on Linux is not held")
	}
	if err := dial(r.Addr()); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("dial %s: %v, want connection refused", r.Addr(), err)
	}
	if ln, err := net.Listen("tcp", r.Addr()); err == nil {
		ln.Close()
		t.Errorf("listened on the closed port %s", r.Addr())
	} else if !errors.Is(err, syscall.EADDRINUSE) {
		t.Errorf("listen on %s: %v, want address in use", r.Addr(), err)
	}
	if err := bindPlain(t, r.Port()); !errors.Is(err, syscall.EADDRINUSE) {
		t.Errorf("plain bind of %s: %v, want address in use", r.Addr(), err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", r.Addr())
	if err != nil {
		t.Fatalf("listen on %s once given back: %v", r.Addr(), err)
	}
	ln.Close()
}

// A shared port refuses connections until someone listens on it with
// SO_REUSEADDR (Go's net.Listen, as redis-server and the other servers
// the tests start); a program that does not share cannot bind it; and it
// stays reserved after the listener closes.
func TestASharedPortIsForWhoeverItIsGivenTo(t *testing.T) {
	r, err := ports.Shared("")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := dial(r.Addr()); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("dial %s before anyone listens: %v, want connection refused", r.Addr(), err)
	}
	if err := bindPlain(t, r.Port()); !errors.Is(err, syscall.EADDRINUSE) {
		t.Errorf("plain bind of %s: %v, want address in use", r.Addr(), err)
	}
	for round := range 2 { // a server started, stopped and started again
		ln, err := net.Listen("tcp", r.Addr())
		if err != nil {
			t.Fatalf("round %d: listen on the shared port %s: %v", round, r.Addr(), err)
		}
		if err := dial(r.Addr()); err != nil {
			t.Errorf("round %d: dial %s while it listens: %v", round, r.Addr(), err)
		}
		ln.Close()
		if err := dial(r.Addr()); !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("round %d: dial %s after the listener closed: %v, want connection refused", round, r.Addr(), err)
		}
		if err := bindPlain(t, r.Port()); !errors.Is(err, syscall.EADDRINUSE) {
			t.Errorf("round %d: plain bind of %s after the listener closed: %v, want address in use", round, r.Addr(), err)
		}
	}
}

// The kernel's ":0" never picks a reserved port: neither Go's net.Listen
// (SO_REUSEADDR, as redisserver chose ports before), nor a plain bind, nor
// a connection's own port. Were the reservations not respected, a thousand
// listeners beside three hundred reservations would land on some of them
// (Linux looks for a SO_REUSEADDR socket's port in a range of about 7,000
// first: some twenty would collide).
func TestTheKernelNeverPicksAReservedPort(t *testing.T) {
	reserved := map[int]string{}
	for i := range 300 {
		take, kind := ports.Shared, "shared"
		if i%2 == 1 {
			take, kind = ports.Closed, "closed"
		}
		r, err := take("")
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		reserved[r.Port()] = kind
	}
	srv, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	go func() {
		for {
			c, err := srv.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	check := func(what string, port int) {
		t.Helper()
		if kind, ok := reserved[port]; ok {
			t.Errorf("%s got port %d, reserved (%s)", what, port, kind)
		}
	}
	for range 1000 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		check("net.Listen on :0", ln.Addr().(*net.TCPAddr).Port)
	}
	for range 300 {
		fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		f := os.NewFile(uintptr(fd), "plain")
		defer f.Close()
		if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
			t.Fatal(err)
		}
		sa, _ := syscall.Getsockname(fd)
		check("a plain bind of :0", sa.(*syscall.SockaddrInet4).Port)
	}
	for range 300 {
		c, err := net.DialTimeout("tcp", srv.Addr().String(), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		check("a connection's own port", c.LocalAddr().(*net.TCPAddr).Port)
	}
}

// A server started again on its port (redisserver's Restart) keeps it:
// Keep joins the port's earlier shared reservation, and the server can
// listen on it beside both.
func TestKeepJoinsASharedReservation(t *testing.T) {
	r, err := ports.Shared("")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	k, err := ports.Keep("", r.Port())
	if err != nil {
		t.Fatalf("keep port %d beside its reservation: %v", r.Port(), err)
	}
	defer k.Close()
	ln, err := net.Listen("tcp", k.Addr())
	if err != nil {
		t.Fatalf("listen on %s: %v", k.Addr(), err)
	}
	defer ln.Close()
	c, err := ports.Closed("")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := ports.Keep("", c.Port()); err == nil {
		t.Errorf("kept port %d, reserved closed", c.Port())
	}
	if _, err := ports.Keep("", ln.Addr().(*net.TCPAddr).Port); err == nil {
		t.Errorf("kept port %s, listened on", ln.Addr())
	}
}

// IPv6 loopback is reserved the same way.
func TestIPv6Loopback(t *testing.T) {
	r, err := ports.Closed("::1")
	if err != nil {
		t.Skipf("no IPv6 loopback here: %v", err)
	}
	defer r.Close()
	if want := "[::1]:" + strconv.Itoa(r.Port()); r.Addr() != want {
		t.Errorf("Addr %s, want %s", r.Addr(), want)
	}
	if ln, err := net.Listen("tcp", r.Addr()); err == nil {
		ln.Close()
		t.Errorf("listened on the closed port %s", r.Addr())
	}
}
