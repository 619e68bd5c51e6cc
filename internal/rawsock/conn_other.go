//go:build !unix

package rawsock

import "net"

// Wrap returns c: off Unix the connection's own calls are used.
func Wrap(c net.Conn) net.Conn { return c }
