package toxi_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
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

// BenchmarkHTTPRoundTrip is one HTTP/1.1 POST and its JSON answer over one
// kept-alive connection, side by side in one run: straight to the server;
// through Toxiproxy's own server; through a plain proxy of gameday's;
// through one with a relay (which reads an HTTP connection as HTTP,
// framing every request and answer) and no toxic; and through one with a
// relay and an http_error toxic that matches nothing (every request
// judged against it); and through one with a relay and a lost_reply toxic
// whose match finds nothing (every request read whole to be matched).
//
//	go test -run '^$' -bench HTTPRoundTrip -benchtime 20000x -count 5 ./gameday/toxi/
func BenchmarkHTTPRoundTrip(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"ch_1","status":"approved","amount_cents":4500}`)
	}))
	b.Cleanup(srv.Close)
	up := srv.Listener.Addr().String()
	own := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	p := toxiproxy.NewProxy(own, "http", "127.0.0.1:0", up)
	if err := own.Collection.Add(p, true); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = own.Collection.Clear() })
	c := testenv.Toxiproxy(b)
	ctx := context.Background()
	plain, err := c.CreateProxy(ctx, "plain", "127.0.0.1:0", up)
	if err != nil {
		b.Fatal(err)
	}
	relayed, err := c.Create(ctx, toxi.Proxy{Name: "relayed", Listen: "127.0.0.1:0", Upstream: up, Enabled: true, RequestAware: true})
	if err != nil {
		b.Fatal(err)
	}
	judged, err := c.Create(ctx, toxi.Proxy{Name: "judged", Listen: "127.0.0.1:0", Upstream: up, Enabled: true, RequestAware: true})
	if err != nil {
		b.Fatal(err)
	}
	testenv.AddToxic(b, c, "judged", toxi.Toxic{Name: "never", Type: "http_error", Attributes: map[string]any{"path": "^/never", "status": 503}})
	matched, err := c.Create(ctx, toxi.Proxy{Name: "matched", Listen: "127.0.0.1:0", Upstream: up, Enabled: true, RequestAware: true})
	if err != nil {
		b.Fatal(err)
	}
	testenv.AddToxic(b, c, "matched", toxi.Toxic{Name: "never", Type: "lost_reply", Attributes: map[string]any{"match": `"key":"never"`}})
	for _, w := range []struct{ name, addr string }{
		{"direct", up},
		{"toxiproxy", p.Listen},
		{"gameday-plain", plain.Listen},
		{"gameday-relay", relayed.Listen},
		{"gameday-relay-http_error", judged.Listen},
		{"gameday-relay-lost_reply", matched.Listen},
	} {
		b.Run(w.name, func(b *testing.B) {
			tr := &http.Transport{MaxIdleConnsPerHost: 1, MaxConnsPerHost: 1, DisableCompression: true}
			defer tr.CloseIdleConnections()
			hc := &http.Client{Transport: tr}
			url := "http://" + w.addr + "/charges"
			body := []byte(`{"key":"co-1","amount_cents":4500}`)
			for b.Loop() {
				resp, err := hc.Post(url, "application/json", bytes.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Fatalf("status %d", resp.StatusCode)
				}
			}
		})
	}
}
