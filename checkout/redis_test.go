package checkout_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gameday-dev/gameday/checkout"
	"github.com/gameday-dev/gameday/gameday/toxi"
	"github.com/gameday-dev/gameday/internal/testenv"
)

// go-redis v9 re-sends a command whose reply was lost (three retries by
// default), so a write is applied again. The checkout's client does not:
// the INCR below is applied exactly once. The default client is measured on
// the same fault to show the trap is real.
func TestRedisWritesAreNotRetriedByTheDriver(t *testing.T) {
	rs := testenv.Redis(t)
	tc := testenv.Toxiproxy(t)
	addr := testenv.Proxy(t, tc, "redis", rs.Addr())
	direct := redis.NewClient(&redis.Options{Addr: rs.Addr()})
	t.Cleanup(func() { _ = direct.Close() })
	ctx := context.Background()

	// go-redis greets every new connection with HELLO. Each connection may
	// receive the HELLO reply and two bytes more: the INCR that follows runs,
	// and its four-byte answer never arrives whole. (Two, because the HELLO
	// reply carries the connection id, which may gain a digit.)
	testenv.AddToxic(t, tc, "redis", toxi.Toxic{Name: "cut", Type: "limit_data", Stream: "downstream",
		Attributes: map[string]any{"bytes": helloReplyLen(t, rs.Addr()) + 2}})

	cases := []struct {
		name    string
		client  *redis.Client
		applied func(n int64) bool
		want    string
	}{
		// go-redis defaults: the lost reply is retried and INCR runs again.
		{"go-redis defaults", redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, DisableIdentity: true, MaxRetryBackoff: time.Millisecond}),
			func(n int64) bool { return n > 1 }, "more than once"},
		// The checkout's client: one send, an error, and the caller decides.
		{"checkout client", checkout.NewRedisClient(addr, time.Second),
			func(n int64) bool { return n == 1 }, "exactly once"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Cleanup(func() { _ = c.client.Close() })
			key := "counter:" + c.name
			if err := c.client.Incr(ctx, key).Err(); err == nil {
				t.Fatal("INCR with its reply cut succeeded")
			}
			n, err := direct.Get(ctx, key).Int64()
			if err != nil {
				t.Fatal(err)
			}
			if !c.applied(n) {
				t.Errorf("INCR applied %d times, want %s", n, c.want)
			}
			t.Logf("%s: INCR applied %d times", c.name, n)
		})
	}
}

// Without ContextTimeoutEnabled go-redis ignores the caller's deadline for
// socket reads. The checkout's client honours it: a 50ms deadline behind
// 1s of latency fails in about 50ms, not after 1s.
func TestRedisHonoursCallerDeadline(t *testing.T) {
	rs := testenv.Redis(t)
	tc := testenv.Toxiproxy(t)
	addr := testenv.Proxy(t, tc, "redis", rs.Addr())
	rdb := checkout.NewRedisClient(addr, 5*time.Second)
	t.Cleanup(func() { _ = rdb.Close() })
	if err := rdb.Ping(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	testenv.AddToxic(t, tc, "redis", toxi.Toxic{Name: "slow", Type: "latency", Stream: "downstream", Attributes: map[string]any{"latency": 1000}})

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := rdb.Get(ctx, "anything").Err()
	took := time.Since(start)
	if err == nil || errors.Is(err, redis.Nil) {
		t.Fatalf("GET behind 1s latency with a 50ms deadline: err = %v", err)
	}
	if took > 500*time.Millisecond {
		t.Errorf("GET took %s; the 50ms deadline was not honoured", took)
	}
}

// helloReplyLen measures the bytes of redis-server's reply to "HELLO 2".
func helloReplyLen(t *testing.T, addr string) int {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("*2\r\n$5\r\nHELLO\r\n$1\r\n2\r\n")); err != nil {
		t.Fatal(err)
	}
	n := 0
	buf := make([]byte, 4096)
	for {
		// The reply is one small write; wait for quiet after it.
		_ = conn.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		m, err := conn.Read(buf)
		n += m
		if err != nil {
			break
		}
	}
	if n == 0 {
		t.Fatal("no reply to HELLO 2")
	}
	return n
}
