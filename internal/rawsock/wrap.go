package rawsock

import (
	"context"
	"net"
)

// Listener accepts connections as *Conn.
type Listener struct{ net.Listener }

// Accept waits for the next connection and wraps it.
func (l Listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return Wrap(c), nil
}

// Dialer returns d's DialContext with every connection wrapped, for a
// client's transport (an http.Transport's DialContext, go-redis's Dialer).
func Dialer(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return Wrap(c), nil
	}
}
