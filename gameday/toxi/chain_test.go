package toxi_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/toxi"
	"github.com/gameday-dev/gameday/internal/testenv"
)

// A toxic whose toxicity spares a connection is removed, or has a toxic
// added after it, at once while nothing reads that connection's data, and
// the API goes on answering. Toxiproxy passes a connection a toxic spares
// through a pass-through of its own, whose send nothing interrupts: each
// of these waited for ever holding the proxy's lock, and every call after
// it hung. (A change of the toxic interrupts it as its removal does; it is
// not tried under traffic here, as Toxiproxy's update writes the toxicity
// its running stubs read, a race of its own.)
func TestToxicThatSparesAConnectionDoesNotHang(t *testing.T) {
	c := testenv.Toxiproxy(t)
	ctx := context.Background()
	// The toxic spares every connection but one in a million.
	const spares = 1e-6
	actions := []struct {
		name string
		do   func(proxy string) error
	}{
		{"removed", func(proxy string) error {
			rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			return c.RemoveToxic(rctx, proxy, "spares")
		}},
		{"a toxic added after it", func(proxy string) error {
			rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			_, err := c.AddToxic(rctx, proxy, toxi.Toxic{Name: "after", Type: "latency", Attributes: map[string]any{"latency": 0}})
			return err
		}},
	}
	n := 0
	for _, tx := range []toxi.Toxic{
		{Type: "latency", Attributes: map[string]any{"latency": 1}},
		{Type: "bandwidth", Attributes: map[string]any{"rate": 100_000}},
		{Type: "slicer", Attributes: map[string]any{"average_size": 1024, "size_variation": 256, "delay": 1}},
		{Type: "slow_close", Attributes: map[string]any{"delay": 10}},
		{Type: "limit_data", Attributes: map[string]any{"bytes": 1 << 40}},
		{Type: "noop"},
		{Type: "timeout", Attributes: map[string]any{"timeout": 60_000}},
		{Type: "lost_reply", Attributes: map[string]any{"match": "^never$"}},
	} {
		for _, a := range actions {
			t.Run(tx.Type+", "+a.name, func(t *testing.T) {
				n++
				proxy := fmt.Sprintf("spared-%d", n)
				up, written := countingStreamer(t)
				var listen string
				if tx.Type == "lost_reply" {
					listen = relayedProxy(t, c, proxy, up)
				} else {
					listen = testenv.Proxy(t, c, proxy, up)
				}
				tx.Name, tx.Toxicity = "spares", spares
				testenv.AddToxic(t, c, proxy, tx)
				conn, err := net.Dial("tcp", listen)
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close() // and reads nothing
				stalled(t, written)
				within(t, 4*time.Second, tx.Type+" "+a.name, func() error { return a.do(proxy) })
				within(t, 2*time.Second, "list the proxies after it", func() error {
					rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
					defer cancel()
					_, err := c.Proxies(rctx)
					return err
				})
			})
		}
	}
}

// The first toxic added to a direction of a proxy is added at once while
// that direction's data backs up — the client reads nothing of a large
// answer, the upstream nothing of a large request — and the API goes on
// answering; also after a reset. Toxiproxy's chain starts with a
// pass-through of its own whose send nothing interrupts, which the first
// toxic's addition interrupts: it waited for the reader holding the
// proxy's lock (for ever once the client closed: the proxy's writer then
// waits for that lock to drop the connection).
func TestFirstToxicOnABackedUpProxyDoesNotHang(t *testing.T) {
	c := testenv.Toxiproxy(t)
	ctx := context.Background()
	for i, how := range []string{"the client reads nothing", "after a reset", "the upstream reads nothing"} {
		t.Run(how, func(t *testing.T) {
			proxy := fmt.Sprintf("backed-up-%d", i)
			stream := "downstream"
			if how == "the upstream reads nothing" {
				stream = "upstream"
				listen := testenv.Proxy(t, c, proxy, sink(t))
				conn, err := net.Dial("tcp", listen)
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close()
				var sent atomic.Int64
				go func() {
					buf := make([]byte, 32<<10)
					_ = conn.SetWriteDeadline(time.Now().Add(30 * time.Second))
					for {
						n, err := conn.Write(buf)
						sent.Add(int64(n))
						if err != nil {
							return
						}
					}
				}()
				stalled(t, &sent)
			} else {
				up, written := countingStreamer(t)
				listen := testenv.Proxy(t, c, proxy, up)
				if how == "after a reset" {
					resp, err := http.Post(c.Addr()+"/reset", "application/json", nil)
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
					if resp.StatusCode != http.StatusNoContent {
						t.Fatalf("reset: %d", resp.StatusCode)
					}
				}
				conn, err := net.Dial("tcp", listen)
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close() // and reads nothing
				stalled(t, written)
			}
			within(t, 4*time.Second, "add the first "+stream+" toxic", func() error {
				rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				defer cancel()
				_, err := c.AddToxic(rctx, proxy, toxi.Toxic{Name: "first", Type: "latency", Stream: stream, Attributes: map[string]any{"latency": 1}})
				return err
			})
			within(t, 2*time.Second, "list the proxies after it", func() error {
				rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				defer cancel()
				_, err := c.Proxies(rctx)
				return err
			})
		})
	}
}

// sink is an upstream that takes connections and reads nothing from them
// until the test ends; it returns its address.
func sink(t *testing.T) string {
	t.Helper()
	stop := make(chan struct{})
	addr := serveEach(t, func(net.Conn) { <-stop })
	t.Cleanup(func() { close(stop) })
	return addr
}
