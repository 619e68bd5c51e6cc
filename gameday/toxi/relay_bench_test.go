package toxi_test

import (
	"bufio"
	"context"
	"net"
	"testing"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/gameday-dev/gameday/gameday/toxi"
	"github.com/gameday-dev/gameday/internal/testenv"
)

// BenchmarkProxyRoundTrip is one Redis PING and its answer over one open
// connection, side by side in one run: straight to Redis; through
// Toxiproxy's own server (its library, no gameday routes); through a
// proxy of gameday's Toxiproxy (no relay: what every proxy is unless a
// drill puts a request-aware toxic on it); through one with a relay and
// no toxic; and through one with a relay and a lost_reply toxic that
// matches nothing (the relay judging every request).
//
//	go test -run '^$' -bench ProxyRoundTrip -benchtime 20000x -count 5 ./gameday/toxi/
func BenchmarkProxyRoundTrip(b *testing.B) {
	rs := testenv.Redis(b)
	own := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	p := toxiproxy.NewProxy(own, "redis", "127.0.0.1:0", rs.Addr())
	if err := own.Collection.Add(p, true); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = own.Collection.Clear() })
	c := testenv.Toxiproxy(b)
	ctx := context.Background()
	plain, err := c.CreateProxy(ctx, "plain", "127.0.0.1:0", rs.Addr())
	if err != nil {
		b.Fatal(err)
	}
	relayed, err := c.Create(ctx, toxi.Proxy{Name: "relayed", Listen: "127.0.0.1:0", Upstream: rs.Addr(), Enabled: true, RequestAware: true})
	if err != nil {
		b.Fatal(err)
	}
	judged, err := c.Create(ctx, toxi.Proxy{Name: "judged", Listen: "127.0.0.1:0", Upstream: rs.Addr(), Enabled: true, RequestAware: true})
	if err != nil {
		b.Fatal(err)
	}
	testenv.AddToxic(b, c, "judged", toxi.Toxic{Name: "never", Type: "lost_reply", Attributes: map[string]any{"match": "^NEVER"}})
	for _, w := range []struct{ name, addr string }{
		{"direct", rs.Addr()},
		{"toxiproxy", p.Listen},
		{"gameday-plain", plain.Listen},
		{"gameday-relay", relayed.Listen},
		{"gameday-relay-lost_reply", judged.Listen},
	} {
		b.Run(w.name, func(b *testing.B) {
			conn, err := net.Dial("tcp", w.addr)
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close()
			rd := bufio.NewReader(conn)
			ping := []byte("PING\r\n")
			for b.Loop() {
				if _, err := conn.Write(ping); err != nil {
					b.Fatal(err)
				}
				if line, err := rd.ReadString('\n'); err != nil || line != "+PONG\r\n" {
					b.Fatalf("%q, %v", line, err)
				}
			}
		})
	}
}
