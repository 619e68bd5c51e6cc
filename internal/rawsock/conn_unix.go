//go:build unix

package rawsock

import (
	"io"
	"net"
	"os"
	"sync"
	"syscall"
)

// Conn is a TCP connection whose Read and Write are raw system calls,
// waiting through the runtime's poller (and so honouring the connection's
// deadlines) when the socket has nothing to read or no room to write.
// Everything else — deadlines, Close, CloseWrite, addresses, SyscallConn —
// is the *net.TCPConn's own. Its errors are those a *net.TCPConn's Read
// and Write return: io.EOF at the end, a *net.OpError that wraps the
// system call's error, os.ErrDeadlineExceeded or net.ErrClosed.
//
// Reads may be made from several goroutines, and so may writes, as on any
// net.Conn: a read and a write run at once, two reads one after the other.
type Conn struct {
	*net.TCPConn
	raw syscall.RawConn

	rmu   sync.Mutex
	readF func(uintptr) bool
	in    []byte
	got   int
	rerr  syscall.Errno

	wmu    sync.Mutex
	writeF func(uintptr) bool
	out    []byte
	sent   int
	werr   syscall.Errno
	short  bool
}

// Wrap returns c as a *Conn where c is a *net.TCPConn whose descriptor
// can be had, and c itself otherwise.
func Wrap(c net.Conn) net.Conn {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return c
	}
	rc := &Conn{TCPConn: tc, raw: raw}
	rc.readF, rc.writeF = rc.read, rc.write
	return rc
}

// Read reads up to len(p) bytes with one read(2), once the socket has
// something to read.
func (c *Conn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return c.TCPConn.Read(p) // nothing to read; a closed connection still says so
	}
	c.rmu.Lock()
	defer c.rmu.Unlock()
	c.in, c.got, c.rerr = p, 0, 0
	err := c.raw.Read(c.readF)
	n, e := c.got, c.rerr
	c.in = nil
	switch {
	case err != nil:
		return 0, c.opError("read", err)
	case e != 0:
		return 0, c.opError("read", os.NewSyscallError("read", e))
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

func (c *Conn) read(fd uintptr) bool {
	for {
		n, e := Read(fd, c.in)
		switch {
		case e == 0:
			c.got = n
			return true
		case e == syscall.EINTR:
		case Again(e):
			return false // the poller waits until there is something
		default:
			c.rerr = e
			return true
		}
	}
}

// Write writes p whole, waiting through the poller whenever the socket's
// buffer is full.
func (c *Conn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.out, c.sent, c.werr, c.short = p, 0, 0, false
	err := c.raw.Write(c.writeF)
	n, e, short := c.sent, c.werr, c.short
	c.out = nil
	switch {
	case err != nil:
		return n, c.opError("write", err)
	case e != 0:
		return n, c.opError("write", os.NewSyscallError("write", e))
	case short:
		return n, io.ErrUnexpectedEOF
	}
	return n, nil
}

func (c *Conn) write(fd uintptr) bool {
	for c.sent < len(c.out) {
		n, e := Write(fd, c.out[c.sent:])
		switch {
		case e == 0 && n > 0:
			c.sent += n
		case e == 0:
			// Nothing written and no error: give up rather than spin, as
			// net.Conn's Write does.
			c.short = true
			return true
		case e == syscall.EINTR:
		case Again(e):
			return false // the poller waits until there is room
		default:
			c.werr = e
			return true
		}
	}
	return true
}

// opError says err as a *net.TCPConn's Read or Write would: the raw
// connection's own error names its operation "raw-read" or "raw-write".
func (c *Conn) opError(op string, err error) error {
	network := "tcp"
	if oe, ok := err.(*net.OpError); ok {
		err, network = oe.Err, oe.Net
	}
	return &net.OpError{Op: op, Net: network, Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}

// ReadFrom and WriteTo are io.Copy's, through Read and Write: the
// *net.TCPConn's own (splice, sendfile) would take the ordinary path.
func (c *Conn) ReadFrom(r io.Reader) (int64, error) { return io.Copy(writerOnly{c}, r) }
func (c *Conn) WriteTo(w io.Writer) (int64, error)  { return io.Copy(w, readerOnly{c}) }

type writerOnly struct{ io.Writer }
type readerOnly struct{ io.Reader }
