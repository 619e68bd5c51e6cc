// Package ports hands out loopback TCP ports that are given to someone
// else: a child process's --port, a proxy's listen address, a port a test
// needs nobody to listen on.
//
// A port taken by listening on ":0" and closing can be handed to anybody
// between the close and its use: the next ":0" of this process or of any
// other (a test's redis-server got the port another test relied on being
// closed). Here a port stays reserved, by a socket bound to it and never
// listened on, until its Reservation is closed, and a process never hands
// out the same port twice:
//
//   - Closed: nobody listens there and nobody can: connecting is refused,
//     and binding it fails, explicitly or by ":0".
//   - Shared: connecting is refused until someone listens, and the
//     kernel's ":0" never picks it (bind and connect's ephemeral ports skip
//     a bound port), but a program that sets SO_REUSEADDR itself can bind
//     and listen on it explicitly: Go's net.Listen, redis-server,
//     PostgreSQL, MariaDB, Prometheus and Python's http.server all do. So a
//     port given to a child stays reserved while the child listens on it,
//     and after the child dies, until it is started again on the same port.
//
// Reserving is Linux's (the socket semantics above are its). Elsewhere a
// port is chosen as it always was, by listening on ":0" and closing, and is
// not held; it is still never handed out twice by one process.
package ports

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
)

// kernelOffers is how many ports the kernel's ":0" is asked for before
// the ephemeral range is tried port by port (probes at most): each offer
// that this process handed out before is held while the next is asked
// for, so every offer is a new port.
const (
	kernelOffers = 16
	probes       = 1 << 16
)

// A Reservation holds one port of one loopback address until Close.
type Reservation struct {
	host string
	port int

	mu   sync.Mutex
	sock io.Closer // the reserving socket; nil when nothing holds the port
}

// Port is the reserved port.
func (r *Reservation) Port() int { return r.port }

// Addr is host:port.
func (r *Reservation) Addr() string { return net.JoinHostPort(r.host, strconv.Itoa(r.port)) }

// Held reports whether a socket of this process holds the port: false
// after Close, and always where reserving is not supported.
func (r *Reservation) Held() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sock != nil
}

// Close gives the port back to the kernel (this process still never hands
// it out again). A Reservation that is dropped without Close is closed when
// it is garbage-collected. Closing twice is harmless.
func (r *Reservation) Close() error {
	r.mu.Lock()
	sock := r.sock
	r.sock = nil
	r.mu.Unlock()
	if sock == nil {
		return nil
	}
	return sock.Close()
}

// An Allocator hands out ports, each once: it remembers every port it
// handed out. The package's functions use one for the whole process;
// the zero value is ready to use.
type Allocator struct {
	mu     sync.Mutex
	handed map[int]bool
}

var process Allocator

// Shared reserves a port of host (an IP address or a name; "" means
// 127.0.0.1) that this process never handed out before, for someone who
// will listen on it with SO_REUSEADDR. See the package comment.
func Shared(host string) (*Reservation, error) { return process.Shared(host) }

// Closed reserves a port of host ("" means 127.0.0.1) that this process
// never handed out before, where nobody listens or can listen until
// Close. See the package comment.
func Closed(host string) (*Reservation, error) { return process.Closed(host) }

// Keep reserves port of host as Shared does, a port chosen before (a
// server started again on the port it had). It fails when the port is
// bound by a socket that is listening or does not share it.
func Keep(host string, port int) (*Reservation, error) { return process.Keep(host, port) }

// HandedOut is how many ports this process has handed out.
func HandedOut() int { return process.HandedOut() }

// Shared is as the package's Shared, never handing out a port a handed
// out before.
func (a *Allocator) Shared(host string) (*Reservation, error) { return a.take(host, true) }

// Closed is as the package's Closed, never handing out a port a handed
// out before.
func (a *Allocator) Closed(host string) (*Reservation, error) { return a.take(host, false) }

// Keep is as the package's Keep; a remembers the port as handed out.
func (a *Allocator) Keep(host string, port int) (*Reservation, error) {
	if port <= 0 || port > 65535 {
		return nil, fmt.Errorf("reserve port %d: not a TCP port", port)
	}
	h, ip, err := resolve(host)
	if err != nil {
		return nil, err
	}
	sock, _, err := bind(ip, port, true, true)
	if err != nil {
		return nil, fmt.Errorf("reserve %s: %w", net.JoinHostPort(h, strconv.Itoa(port)), err)
	}
	a.claim(port)
	return newReservation(h, port, sock), nil
}

// HandedOut is how many ports a has handed out.
func (a *Allocator) HandedOut() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.handed)
}

// claim records port as handed out and reports whether it was new.
func (a *Allocator) claim(port int) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.handed == nil {
		a.handed = map[int]bool{}
	}
	if a.handed[port] {
		return false
	}
	a.handed[port] = true
	return true
}

func (a *Allocator) handedBefore(port int) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.handed[port]
}

func (a *Allocator) take(host string, shared bool) (*Reservation, error) {
	h, ip, err := resolve(host)
	if err != nil {
		return nil, err
	}
	var offered []io.Closer
	defer func() {
		for _, s := range offered {
			s.Close()
		}
	}()
	for range kernelOffers {
		sock, port, err := bind(ip, 0, shared, false)
		if err != nil {
			return nil, fmt.Errorf("reserve a port on %s: %w", h, err)
		}
		if a.claim(port) {
			return newReservation(h, port, sock), nil
		}
		// Held until a new port is found, so the kernel offers another.
		offered = append(offered, sock)
	}
	// The kernel keeps offering ports handed out before (it looks in part
	// of its range first): try the range's other ports, at random.
	if lo, hi, skip, ok := ephemeral(); ok {
		for range probes {
			port := lo + rand.IntN(hi-lo+1)
			if skip(port) || a.handedBefore(port) {
				continue
			}
			sock, _, err := bind(ip, port, shared, false)
			if err != nil {
				continue // someone has it
			}
			if a.claim(port) {
				return newReservation(h, port, sock), nil
			}
			sock.Close()
		}
	}
	return nil, fmt.Errorf("reserve a port on %s: no port found that was not handed out before (%d in all)", h, a.HandedOut())
}

func newReservation(host string, port int, sock io.Closer) *Reservation {
	r := &Reservation{host: host, port: port}
	if holds {
		r.sock = sock
	} else {
		sock.Close()
	}
	return r
}

// resolve is the address to bind for host, as net.Listen would choose it,
// and host as it is shown ("" is 127.0.0.1).
func resolve(host string) (string, net.IP, error) {
	if host == "" {
		host = "127.0.0.1"
	}
	if ip := net.ParseIP(host); ip != nil {
		return host, ip, nil
	}
	a, err := net.ResolveTCPAddr("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return "", nil, fmt.Errorf("reserve a port on %s: %w", host, err)
	}
	if a.IP == nil {
		return "", nil, errors.New("reserve a port on " + host + ": no address")
	}
	return host, a.IP, nil
}
