package toxi_test

import (
	"context"
	"errors"
	"net"
	"net/http"
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
