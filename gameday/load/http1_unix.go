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
	sc, ok := c.(syscall.Conn)
	if !ok {
		return true
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	alive := false
	err = raw.Read(func(fd uintptr) bool {
		var b [1]byte
		_, _, rerr := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		alive = rerr == syscall.EAGAIN || rerr == syscall.EWOULDBLOCK
		return true
	})
	return err == nil && alive
}

// readable waits, holding no buffer, until c has something to read (or
// has ended, or its deadline passed): a shopper waiting for its answer
// holds its connection and nothing more.
func readable(c net.Conn) error {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return err
	}
	return raw.Read(func(fd uintptr) bool {
		var b [1]byte
		_, _, rerr := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		return rerr != syscall.EAGAIN && rerr != syscall.EWOULDBLOCK
	})
}
