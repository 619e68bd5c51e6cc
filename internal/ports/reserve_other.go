//go:build !linux

package ports

import (
	"io"
	"net"
	"strconv"
)

// holds: elsewhere than Linux nothing holds a port; it is chosen as it
// always was, by listening on it and closing.
const holds = false

// bind listens on ip:port (port 0: the kernel's choice) and returns the
// listener, which the caller closes, and its port.
func bind(ip net.IP, port int, shared, reuseFirst bool) (io.Closer, int, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(ip.String(), strconv.Itoa(port)))
	if err != nil {
		return nil, 0, err
	}
	return ln, ln.Addr().(*net.TCPAddr).Port, nil
}

// ephemeral: the range is not known here; only the kernel's ":0" is asked.
func ephemeral() (lo, hi int, skip func(int) bool, ok bool) { return 0, 0, nil, false }
