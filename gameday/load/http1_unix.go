//go:build unix

package load

import (
	"io"
	"net"
	"os"
	"syscall"
)

// sock is a connection's socket as the transport waits on it: its raw
// descriptor and the two functions the poller calls, made once for the
// connection rather than once a request (a request would otherwise
// allocate them, and the raw connection, every time).
type sock struct {
	raw   syscall.RawConn // nil: the connection has no socket (a test's pipe)
	c     net.Conn
	take  func() *[]byte
	peekF func(uintptr) bool
	readF func(uintptr) bool

	// What the last call of peekF or readF found.
	quiet bool
	buf   *[]byte
	n     int
	err   error
}

func (s *sock) init(c net.Conn, take func() *[]byte) {
	s.c, s.take = c, take
	if sc, ok := c.(syscall.Conn); ok {
		if raw, err := sc.SyscallConn(); err == nil {
			s.raw = raw
			s.peekF, s.readF = s.peek, s.read
		}
	}
}

// open reports whether an idle connection is still open and quiet: a
// peek that does not wait finds nothing to read. A server that closed it
// (its idle timeout) shows as end of file, and the connection is not
// reused: sending on it would fail, or worse, send a POST into the void.
// net/http learns the same from its reader goroutine; this costs one
// system call.
func (s *sock) open() bool {
	if s.raw == nil {
		return true
	}
	s.quiet = false
	err := s.raw.Read(s.peekF)
	return err == nil && s.quiet
}

func (s *sock) peek(fd uintptr) bool {
	var b [1]byte
	_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	s.quiet = err == syscall.EAGAIN || err == syscall.EWOULDBLOCK
	return true
}

// readFirst waits, holding no buffer, until the connection has something
// to say, and reads it into a buffer from the pool: a shopper waiting for
// its answer holds its connection and nothing more (the read that finds
// nothing gives its buffer back before the wait). Its errors are what
// reading the answer through net/http's ReadResponse said before: a
// connection that ends before any answer is io.ErrUnexpectedEOF, a socket
// error is the *net.OpError a read of the connection returns.
func (s *sock) readFirst() (*[]byte, int, error) {
	if s.raw == nil {
		return readWaiting(s.c, s.take)
	}
	s.buf, s.n, s.err = nil, 0, nil
	err := s.raw.Read(s.readF)
	buf, n := s.buf, s.n
	s.buf = nil
	switch {
	case err != nil:
		// The wait failed (a deadline, a closed connection): nothing was read.
		if buf != nil {
			firsts.Put(buf)
		}
		return nil, 0, err
	case s.err != nil:
		firsts.Put(buf)
		return nil, 0, &net.OpError{Op: "read", Net: "tcp", Source: s.c.LocalAddr(), Addr: s.c.RemoteAddr(), Err: os.NewSyscallError("read", s.err)}
	case n == 0:
		firsts.Put(buf)
		return nil, 0, io.ErrUnexpectedEOF
	}
	return buf, n, nil
}

func (s *sock) read(fd uintptr) bool {
	s.buf = s.take()
	for {
		s.n, s.err = syscall.Read(int(fd), *s.buf)
		if s.err != syscall.EINTR {
			break
		}
	}
	if s.err == syscall.EAGAIN || s.err == syscall.EWOULDBLOCK {
		firsts.Put(s.buf)
		s.buf, s.n, s.err = nil, 0, nil
		return false
	}
	return true
}
