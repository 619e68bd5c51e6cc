package checkout

import (
	"net"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gameday-dev/gameday/internal/rawsock"
)

// NewRedisClient returns a go-redis client configured for a network that
// misbehaves during a drill:
//
//   - ContextTimeoutEnabled: the caller's context deadline bounds socket reads
//     and writes. Without it go-redis ignores the deadline and a GET with a
//     50ms deadline behind 1s of latency succeeds after 1s.
//   - MaxRetries -1: no command is re-sent by the client. go-redis v9 retries
//     three times by default on read timeouts and dropped connections, so a
//     write whose reply was lost is applied again (an INCR returns 2). Every
//     write the checkout makes is keyed by checkout id and safe to repeat, but
//     the checkout repeats it itself, deliberately, never the driver.
//   - Short dial, read, write and pool timeouts, so a dead dependency is
//     noticed in milliseconds rather than seconds.
//   - Connections whose reads and writes are raw system calls
//     (internal/rawsock): each command is a write and a read, and made the
//     ordinary way each wakes the Go scheduler's monitor between arrivals.
func NewRedisClient(addr string, timeout time.Duration) *redis.Client {
	return newRedisClient(addr, "", timeout)
}

// newRedisClient is NewRedisClient for a Redis that wants a password
// ("" sends none).
func newRedisClient(addr, password string, timeout time.Duration) *redis.Client {
	if timeout <= 0 {
		timeout = 250 * time.Millisecond
	}
	return redis.NewClient(&redis.Options{
		Addr:                  addr,
		Password:              password,
		Protocol:              2,
		DisableIdentity:       true,
		MaxRetries:            -1,
		ContextTimeoutEnabled: true,
		DialTimeout:           timeout,
		ReadTimeout:           timeout,
		WriteTimeout:          timeout,
		PoolTimeout:           timeout,
		PoolSize:              64,
		MinIdleConns:          0,
		Dialer: rawsock.Dialer(&net.Dialer{Timeout: timeout, KeepAliveConfig: net.KeepAliveConfig{
			Enable: true, Idle: 30 * time.Second, Interval: 5 * time.Second, Count: 3, // go-redis's own
		}}),
	})
}
