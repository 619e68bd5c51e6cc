//go:build !unix

package load

import "net"

// sock, where the transport cannot peek: an idle connection is taken to
// be open, and the first read takes its buffer before it waits.
type sock struct {
	c    net.Conn
	take func() *[]byte
}

func (s *sock) init(c net.Conn, take func() *[]byte) { s.c, s.take = c, take }

func (s *sock) open() bool { return true }

func (s *sock) readFirst() (*[]byte, int, error) {
	return readWaiting(s.c, s.take)
}

func (s *sock) Write(p []byte) (int, error) { return s.c.Write(p) }
