//go:build unix

package load

import (
	"net"
	"syscall"
)

// open reports whether an idle connection is still open and quiet: a
// peek that does not wait finds nothing to read. A server that closed it
// (its idle timeout) shows as end of file, and the connection is not
// reused: sending on it would fail, or worse, send a POST into the void.
// net/http learns the same from its reader goroutine; this costs one
// system call.
func open(c net.Conn) bool {
	raw, err := rawConn(c)
	if raw == nil {
		return err == nil
	}
	quiet := false
	err = raw.Read(func(fd uintptr) bool {
		quiet = !peek(fd)
		return true
	})
	return err == nil && quiet
}

// readable waits, holding no buffer, until c has something to read (or
// has ended, or its deadline passed): a shopper waiting for its answer
// holds its connection and nothing more.
func readable(c net.Conn) error {
	raw, err := rawConn(c)
	if raw == nil {
		return err
	}
	return raw.Read(peek)
}

// rawConn is c's socket; nil, nil for a connection that has none.
func rawConn(c net.Conn) (syscall.RawConn, error) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil, nil
	}
	return sc.SyscallConn()
}

// peek reports whether the socket has something to say — bytes, end of
// file or an error — without taking it and without waiting.
func peek(fd uintptr) bool {
	var b [1]byte
	_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	return err != syscall.EAGAIN && err != syscall.EWOULDBLOCK
}
