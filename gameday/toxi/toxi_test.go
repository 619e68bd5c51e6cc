package toxi_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/toxi"
	"github.com/gameday-dev/gameday/internal/testenv"
)

// The embedded server speaks Toxiproxy's API: proxies, toxics that really
// slow the traffic, disable and enable, and clean removal.
func TestEmbeddedToxiproxyAPI(t *testing.T) {
	rs := testenv.Redis(t)
	c := testenv.Toxiproxy(t)
	ctx := context.Background()

	p, err := c.CreateProxy(ctx, "redis", "127.0.0.1:0", rs.Addr())
	if err != nil {
		t.Fatal(err)
	}
	if _, port, _ := net.SplitHostPort(p.Listen); port == "0" || !p.Enabled {
		t.Fatalf("proxy = %+v, want a bound port and enabled", p)
	}
	if rtt := ping(t, p.Listen); rtt > 200*time.Millisecond {
		t.Fatalf("healthy round trip %s", rtt)
	}

	if _, err := c.AddToxic(ctx, "redis", toxi.Toxic{Name: "slow", Type: "latency", Attributes: map[string]any{"latency": 300}}); err != nil {
		t.Fatal(err)
	}
	if rtt := ping(t, p.Listen); rtt < 300*time.Millisecond {
		t.Errorf("round trip with a 300ms latency toxic took %s", rtt)
	}
	ts, err := c.Toxics(ctx, "redis")
	if err != nil || len(ts) != 1 || ts[0].Stream != "downstream" || ts[0].Toxicity != 1 {
		t.Errorf("toxics = %+v, %v", ts, err)
	}
	if err := c.RemoveToxic(ctx, "redis", "slow"); err != nil {
		t.Fatal(err)
	}
	if err := c.RemoveToxic(ctx, "redis", "slow"); !errors.Is(err, toxi.ErrNotFound) {
		t.Errorf("removing a missing toxic: %v, want ErrNotFound", err)
	}

	if err := c.SetEnabled(ctx, "redis", false); err != nil {
		t.Fatal(err)
	}
	if conn, err := net.DialTimeout("tcp", p.Listen, time.Second); err == nil {
		conn.Close()
		t.Error("a disabled proxy still accepts connections")
	}
	if err := c.SetEnabled(ctx, "redis", true); err != nil {
		t.Fatal(err)
	}
	ping(t, p.Listen)
}

// The API refuses browsers, so a web page cannot drive it through loopback.
func TestEmbeddedRefusesBrowsers(t *testing.T) {
	c := testenv.Toxiproxy(t)
	req, _ := http.NewRequest(http.MethodGet, c.Addr()+"/proxies", nil)
	req.Header.Set("User-Agent", "Mozilla/5.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("browser request answered %d", resp.StatusCode)
	}
}

// Every call has a deadline: a server that never answers cannot hang the
// caller past it.
func TestClientCallsHaveDeadlines(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			defer conn.Close() // accept, never answer
		}
	}()
	c := toxi.NewClient(ln.Addr().String())
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := c.RemoveToxic(ctx, "p", "t"); err == nil {
		t.Fatal("a silent server answered")
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("call took %s past its 100ms deadline", took)
	}
}

func ping(t *testing.T, addr string) time.Duration {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	start := time.Now()
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 7)
	if _, err := conn.Read(buf); err != nil || string(buf) != "+PONG\r\n" {
		t.Fatalf("PING through proxy: %q, %v", buf, err)
	}
	return time.Since(start)
}

// The API opens proxies on loopback only: any local user can reach it, and
// a proxy on every interface would relay the network to services that
// listen on loopback. Addresses the operator named, or --allow-remote-listen,
// open more.
func TestEmbeddedProxiesStayOnLoopback(t *testing.T) {
	ctx := context.Background()
	start := func(o toxi.EmbeddedOptions) *toxi.Client {
		e, err := toxi.StartEmbedded("127.0.0.1:0", o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.Close() })
		return toxi.NewClient(e.APIAddr())
	}
	post := func(c *toxi.Client, path, body string) int {
		resp, err := http.Post(c.Addr()+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	c := start(toxi.EmbeddedOptions{})
	for _, listen := range []string{"0.0.0.0:0", ":0", "[::]:0", "example.com:0", "10.1.2.3:0"} {
		_, err := c.CreateProxy(ctx, "p", listen, "127.0.0.1:1")
		var apiErr *toxi.APIError
		if !errors.As(err, &apiErr) || apiErr.Status != http.StatusForbidden || !strings.Contains(apiErr.Message, "not a loopback address") {
			t.Errorf("proxy on %s: %v, want refused", listen, err)
		}
	}
	if code := post(c, "/populate", `[{"name":"a","listen":"127.0.0.1:0","upstream":"127.0.0.1:1"},{"name":"b","listen":"0.0.0.0:0","upstream":"127.0.0.1:1"}]`); code != http.StatusForbidden {
		t.Errorf("populate with one proxy on 0.0.0.0: %d, want 403", code)
	}
	if ps, err := c.Proxies(ctx); err != nil || len(ps) != 0 {
		t.Errorf("after refusals: proxies %v, %v; want none", ps, err)
	}
	for _, listen := range []string{"127.0.0.1:0", "127.0.0.2:0", "localhost:0", "[::1]:0"} {
		if _, err := c.CreateProxy(ctx, "p"+strings.NewReplacer(".", "", ":", "", "[", "", "]", "").Replace(listen), listen, "127.0.0.1:1"); err != nil {
			t.Errorf("proxy on %s: %v", listen, err)
		}
	}
	if code := post(c, "/proxies/p127001"+"0", `{"listen":"0.0.0.0:0"}`); code != http.StatusForbidden {
		t.Errorf("moving a proxy to 0.0.0.0: %d, want 403", code)
	}
	// PATCH, Toxiproxy's update since 2.6, is guarded as POST is.
	patch := func(path, body string) int {
		req, _ := http.NewRequest(http.MethodPatch, c.Addr()+path, strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := patch("/proxies/p127001"+"0", `{"listen":"0.0.0.0:0"}`); code != http.StatusForbidden {
		t.Errorf("moving a proxy to 0.0.0.0 with PATCH: %d, want 403", code)
	}
	if code := patch("/proxies/p127001"+"0", `{"enabled":false}`); code != http.StatusOK {
		t.Errorf("disabling a proxy with PATCH: %d, want 200", code)
	}

	named := start(toxi.EmbeddedOptions{Listen: []string{"0.0.0.0:0"}})
	if _, err := named.CreateProxy(ctx, "p", "0.0.0.0:0", "127.0.0.1:1"); err != nil {
		t.Errorf("the address the operator named: %v", err)
	}
	if _, err := named.CreateProxy(ctx, "q", "[::]:0", "127.0.0.1:1"); err == nil {
		t.Error("an address the operator did not name was allowed")
	}
	anyL := start(toxi.EmbeddedOptions{AnyListen: true})
	if _, err := anyL.CreateProxy(ctx, "p", "0.0.0.0:0", "127.0.0.1:1"); err != nil {
		t.Errorf("with AnyListen: %v", err)
	}
}
