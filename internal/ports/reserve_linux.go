//go:build linux

package ports

import (
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// holds: on Linux a bound socket that never listens holds the port.
const holds = true

// bind binds a TCP socket that never listens to ip:port (port 0: the
// kernel's choice) and returns it and its port. A shared socket has
// SO_REUSEADDR: set after the bind, so that the bind itself fails on a
// port anyone else has bound, or, with reuseFirst, before it, so that it
// joins a reservation of the port (a server's earlier one) and the
// TIME_WAIT of its old connections. The socket is close-on-exec (no child
// inherits a reservation) and closed when garbage-collected.
func bind(ip net.IP, port int, shared, reuseFirst bool) (io.Closer, int, error) {
	family, sa := syscall.AF_INET, syscall.Sockaddr(nil)
	if ip4 := ip.To4(); ip4 != nil {
		a := &syscall.SockaddrInet4{Port: port}
		copy(a.Addr[:], ip4)
		sa = a
	} else {
		family = syscall.AF_INET6
		a := &syscall.SockaddrInet6{Port: port}
		copy(a.Addr[:], ip.To16())
		sa = a
	}
	fd, err := syscall.Socket(family, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, syscall.IPPROTO_TCP)
	if err != nil {
		return nil, 0, os.NewSyscallError("socket", err)
	}
	f := os.NewFile(uintptr(fd), "port reservation")
	reuse := func() error {
		return os.NewSyscallError("setsockopt SO_REUSEADDR", syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1))
	}
	if shared && reuseFirst {
		if err := reuse(); err != nil {
			f.Close()
			return nil, 0, err
		}
	}
	if err := syscall.Bind(fd, sa); err != nil {
		f.Close()
		return nil, 0, os.NewSyscallError("bind", err)
	}
	if shared && !reuseFirst {
		if err := reuse(); err != nil {
			f.Close()
			return nil, 0, err
		}
	}
	got, err := syscall.Getsockname(fd)
	if err != nil {
		f.Close()
		return nil, 0, os.NewSyscallError("getsockname", err)
	}
	switch a := got.(type) {
	case *syscall.SockaddrInet4:
		port = a.Port
	case *syscall.SockaddrInet6:
		port = a.Port
	}
	return f, port, nil
}

// ephemeral is the kernel's range for ":0" (net.ipv4.ip_local_port_range)
// and a test for the ports in it the kernel keeps for explicit use
// (net.ipv4.ip_local_reserved_ports).
func ephemeral() (lo, hi int, skip func(int) bool, ok bool) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, 0, nil, false
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0, 0, nil, false
	}
	lo, err1 := strconv.Atoi(f[0])
	hi, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || lo < 1 || hi > 65535 || lo > hi {
		return 0, 0, nil, false
	}
	type span struct{ from, to int }
	var kept []span
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_reserved_ports"); err == nil {
		for _, r := range strings.Split(strings.TrimSpace(string(b)), ",") {
			from, to, _ := strings.Cut(r, "-")
			a, err := strconv.Atoi(from)
			if err != nil {
				continue
			}
			z := a
			if to != "" {
				if z, err = strconv.Atoi(to); err != nil {
					continue
				}
			}
			kept = append(kept, span{a, z})
		}
	}
	return lo, hi, func(port int) bool {
		for _, s := range kept {
			if port >= s.from && port <= s.to {
				return true
			}
		}
		return false
	}, true
}
