package testenv

import (
	"testing"

	"github.com/gameday-dev/gameday/internal/ports"
)

// FreeAddr is a loopback address for a server the test starts or gives it
// to (a proxy's listen, a child process's port): reserved until the test
// ends (ports.Shared), so nobody listens there until that server does, the
// kernel's ":0" never hands it to anyone else, and this test binary never
// hands it out again. Servers that set SO_REUSEADDR (Go's, redis-server,
// PostgreSQL, MariaDB, Prometheus, Python's http.server) can listen on it.
func FreeAddr(tb testing.TB) string {
	tb.Helper()
	return reserve(tb, ports.Shared).Addr()
}

// ClosedAddr is a loopback address nobody listens on, or can listen on,
// until the test ends (ports.Closed): connecting to it is refused.
func ClosedAddr(tb testing.TB) string {
	tb.Helper()
	return reserve(tb, ports.Closed).Addr()
}

// freePort is FreeAddr's port, for a server the helpers here start.
func freePort(tb testing.TB) int {
	tb.Helper()
	return reserve(tb, ports.Shared).Port()
}

func reserve(tb testing.TB, take func(host string) (*ports.Reservation, error)) *ports.Reservation {
	tb.Helper()
	r, err := take("127.0.0.1")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = r.Close() })
	return r
}
