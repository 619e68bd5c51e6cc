package toxi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"

	"github.com/gameday-dev/gameday/gameday/toxi"
	"github.com/gameday-dev/gameday/internal/testenv"
)

// A toxic's toxicity is the share of connections it acts on, in gameday's
// Toxiproxy (whose toxics draw it themselves, once per connection) as in
// Toxiproxy's own, and a change of it applies to the connections after it.
// Each share is measured on 160 connections; the bound is four standard
// deviations and more.
func TestToxicityIsTheShareOfConnectionsHit(t *testing.T) {
	for _, whose := range []string{"gameday's", "Toxiproxy's"} {
		t.Run(whose, func(t *testing.T) {
			if whose == "Toxiproxy's" {
				stockToxics(t)
			}
			c := testenv.Toxiproxy(t)
			listen := testenv.Proxy(t, c, "share", echo(t))
			testenv.AddToxic(t, c, "share", toxi.Toxic{Name: "slow", Type: "latency", Toxicity: 0.3, Attributes: map[string]any{"latency": 200}})
			for _, want := range []float64{0.3, 0.8} {
				if want != 0.3 {
					if err := patchToxic(c, "share", "slow", fmt.Sprintf(`{"toxicity":%g}`, want)); err != nil {
						t.Fatal(err)
					}
				}
				got := hitShare(t, listen, 100*time.Millisecond)
				t.Logf("toxicity %g: %.2f of the connections hit", want, got)
				if math.Abs(got-want) > 0.15 {
					t.Errorf("toxicity %g: %.2f of the connections were hit", want, got)
				}
			}
		})
	}
}

// hitShare is the share of 160 new connections through listen, to an echo,
// whose round trip takes slow or more; each has ended when it returns.
func hitShare(t *testing.T, listen string, slow time.Duration) float64 {
	t.Helper()
	const n, atOnce = 160, 40
	var hit atomic.Int64
	var wg sync.WaitGroup
	sem := make(chan struct{}, atOnce)
	for range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			conn, err := net.DialTimeout("tcp", listen, 2*time.Second)
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
			start := time.Now()
			if _, err := conn.Write([]byte("x")); err != nil {
				t.Error(err)
				return
			}
			if _, err := io.ReadFull(conn, make([]byte, 1)); err != nil {
				t.Error(err)
				return
			}
			if time.Since(start) >= slow {
				hit.Add(1)
			}
			// The connection ends, through the proxy, before the next
			// change of the toxic: Toxiproxy's update writes what its
			// running stubs read.
			_ = conn.(*net.TCPConn).CloseWrite()
			_, _ = io.Copy(io.Discard, conn)
		}()
	}
	wg.Wait()
	return float64(hit.Load()) / n
}

// Every route of gameday's Toxiproxy that shows a toxic shows the toxicity
// its client set, to gameday's client and to Toxiproxy's (toxiproxy-cli's),
// though a toxic of gameday's draws it itself; and none shows gameday's
// heads, whose names answer as toxics that are not there. A reset removes
// every toxic and keeps the heads.
func TestTheAPIShowsTheToxicitySet(t *testing.T) {
	c := testenv.Toxiproxy(t)
	ctx := context.Background()
	upstream := echo(t)
	relayedProxy(t, c, "shown", upstream)
	want := map[string]float64{"slow": 0.25, "held": 0.5, "lost": 0.75, "reset": 0.125, "plain": 1}
	var bodies []string // every answer, to look for what must not show
	call := func(method, path, body string, status int) []byte {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, method, c.Addr()+path, strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		bodies = append(bodies, string(b))
		if resp.StatusCode != status {
			t.Errorf("%s %s: %d %s, want %d", method, path, resp.StatusCode, b, status)
		}
		return b
	}
	// shows checks the toxics in an answer (a list of them, or a proxy
	// with its toxics under "toxics").
	shows := func(what string, b []byte) {
		t.Helper()
		var p struct {
			Toxics []toxi.Toxic `json:"toxics"`
		}
		if err := json.Unmarshal(b, &p.Toxics); err != nil {
			if err := json.Unmarshal(b, &p); err != nil {
				t.Fatalf("%s: %v in %s", what, err, b)
			}
		}
		if len(p.Toxics) != len(want) {
			t.Errorf("%s shows %d toxics, want %d: %s", what, len(p.Toxics), len(want), b)
		}
		for _, x := range p.Toxics {
			if w, ok := want[x.Name]; !ok || x.Toxicity != w {
				t.Errorf("%s shows %s with toxicity %v, want %v", what, x.Name, x.Toxicity, w)
			}
		}
	}
	for _, tx := range []toxi.Toxic{
		{Name: "slow", Type: "latency", Toxicity: 0.25, Attributes: map[string]any{"latency": 10}},
		{Name: "held", Type: "timeout", Stream: "upstream", Toxicity: 0.5, Attributes: map[string]any{"timeout": 100}},
		{Name: "lost", Type: "lost_reply", Toxicity: 0.75, Attributes: map[string]any{"match": "^never$"}},
		{Name: "reset", Type: "reset_peer", Toxicity: 0.125, Attributes: map[string]any{"timeout": 100}},
		{Name: "plain", Type: "noop"},
	} {
		b, _ := json.Marshal(tx)
		if tx.Toxicity == 0 {
			b = []byte(`{"name":"plain","type":"noop"}`) // no toxicity: Toxiproxy's 1
		}
		var got toxi.Toxic
		if err := json.Unmarshal(call("POST", "/proxies/shown/toxics", string(b), http.StatusOK), &got); err != nil || got.Toxicity != want[tx.Name] {
			t.Errorf("adding %s answered %+v, %v", tx.Name, got, err)
		}
	}
	shows("the toxics", call("GET", "/proxies/shown/toxics", "", http.StatusOK))
	shows("the proxy", call("GET", "/proxies/shown", "", http.StatusOK))
	var all map[string]json.RawMessage
	if err := json.Unmarshal(call("GET", "/proxies", "", http.StatusOK), &all); err != nil {
		t.Fatal(err)
	}
	shows("the proxies", all["shown"])
	shows("the proxy changed", call("PATCH", "/proxies/shown", `{"enabled":true}`, http.StatusOK))
	var populated struct {
		Proxies []json.RawMessage `json:"proxies"`
	}
	if err := json.Unmarshal(call("POST", "/populate", fmt.Sprintf(`[{"name":"shown","listen":%q,"upstream":%q,"request_aware":true}]`, listenOf(t, c, "shown"), upstream), http.StatusCreated), &populated); err != nil || len(populated.Proxies) != 1 {
		t.Fatalf("populate: %+v, %v", populated, err)
	}
	shows("the proxy populated again", populated.Proxies[0])
	for name, w := range want {
		var got toxi.Toxic
		if err := json.Unmarshal(call("GET", "/proxies/shown/toxics/"+name, "", http.StatusOK), &got); err != nil || got.Toxicity != w {
			t.Errorf("toxic %s shows %+v, %v; want toxicity %v", name, got, err, w)
		}
	}
	// Toxiproxy's client, toxiproxy-cli's, reads and sets the same.
	tc := toxiclient.NewClient(c.Addr())
	p, err := tc.Proxy("shown")
	if err != nil {
		t.Fatal(err)
	}
	ts, err := p.Toxics()
	if err != nil || len(ts) != len(want) {
		t.Fatalf("toxiproxy's client: %+v, %v", ts, err)
	}
	for _, x := range ts {
		if float64(x.Toxicity) != want[x.Name] {
			t.Errorf("toxiproxy's client reads %s with toxicity %v, want %v", x.Name, x.Toxicity, want[x.Name])
		}
	}
	if x, err := p.UpdateToxic("slow", 0.5, toxiclient.Attributes{"latency": 20}); err != nil || x.Toxicity != 0.5 || x.Attributes["latency"] != 20.0 {
		t.Errorf("toxiproxy's client changed slow: %+v, %v", x, err)
	}
	want["slow"] = 0.5
	// A change of the attributes alone keeps the toxicity.
	var got toxi.Toxic
	if err := json.Unmarshal(call("PATCH", "/proxies/shown/toxics/slow", `{"attributes":{"latency":30}}`, http.StatusOK), &got); err != nil || got.Toxicity != 0.5 || got.Attributes["latency"] != 30.0 {
		t.Errorf("slow changed: %+v, %v; want toxicity 0.5, latency 30", got, err)
	}
	shows("the toxics changed", call("GET", "/proxies/shown/toxics", "", http.StatusOK))

	// gameday's heads are not there for a client.
	for _, dir := range []string{"upstream", "downstream"} {
		head := "gameday.head." + dir
		call("GET", "/proxies/shown/toxics/"+head, "", http.StatusNotFound)
		call("PATCH", "/proxies/shown/toxics/"+head, `{"toxicity":0.5}`, http.StatusNotFound)
		call("DELETE", "/proxies/shown/toxics/"+head, "", http.StatusNotFound)
		call("POST", "/proxies/shown/toxics", fmt.Sprintf(`{"name":%q,"type":"latency","stream":%q}`, head, dir), http.StatusConflict)
	}
	for _, b := range bodies {
		for _, hidden := range []string{"gameday_toxicity", "gameday.head"} {
			if strings.Contains(b, hidden) {
				t.Errorf("an answer shows %s: %s", hidden, b)
			}
		}
	}

	call("POST", "/reset", "", http.StatusNoContent)
	if ts, err := c.Toxics(ctx, "shown"); err != nil || len(ts) != 0 {
		t.Errorf("toxics after a reset: %+v, %v", ts, err)
	}
}

// listenOf is where proxy name listens.
func listenOf(t *testing.T, c *toxi.Client, name string) string {
	t.Helper()
	p, err := c.Proxy(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return p.Listen
}

// patchToxic changes a toxic through the API (gameday's client has no
// call for it), within 10 s.
func patchToxic(c *toxi.Client, proxy, toxic, body string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPatch, c.Addr()+"/proxies/"+proxy+"/toxics/"+toxic, strings.NewReader(body))
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("PATCH %s/%s: %d %s", proxy, toxic, resp.StatusCode, b)
	}
	return nil
}
