package toxi_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/redis/go-redis/v9"

	"github.com/gameday-dev/gameday/gameday/toxi"
	"github.com/gameday-dev/gameday/internal/testenv"
)

// relayedProxy creates a proxy with a relay behind it and returns the
// address to dial.
func relayedProxy(t *testing.T, c *toxi.Client, name, upstream string) string {
	t.Helper()
	p, err := c.Create(context.Background(), toxi.Proxy{Name: name, Listen: "127.0.0.1:0", Upstream: upstream, Enabled: true, RequestAware: true})
	if err != nil || !p.RequestAware || p.Upstream != upstream {
		t.Fatalf("create proxy %s: %+v, %v; want it request-aware, upstream %s", name, p, err, upstream)
	}
	return p.Listen
}

// lostHits reads a lost_reply toxic's hits back through the API.
func lostHits(t *testing.T, c *toxi.Client, proxy, name string) (matched, lost float64, first []any) {
	t.Helper()
	ts, err := c.Toxics(context.Background(), proxy)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range ts {
		if x.Name == name {
			h, _ := x.Attributes["hits"].(map[string]any)
			first, _ = h["first"].([]any)
			matched, _ = h["matched"].(float64)
			lost, _ = h["lost"].(float64)
			return matched, lost, first
		}
	}
	t.Fatalf("no toxic %s on %s: %+v", name, proxy, ts)
	return 0, 0, nil
}

// Redis: an EVAL whose answer is lost ran all the same — the counter it
// increments moved — and the client was told its connection broke.
func TestLostReplyRedisEvalRan(t *testing.T) {
	rs := testenv.Redis(t)
	c := testenv.Toxiproxy(t)
	ctx := context.Background()
	addr := relayedProxy(t, c, "redis", rs.Addr())
	testenv.AddToxic(t, c, "redis", toxi.Toxic{Name: "lost", Type: "lost_reply", Attributes: map[string]any{"match": "(?i)eval", "first": 1}})

	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, ReadTimeout: 2 * time.Second})
	defer rdb.Close()
	direct := redis.NewClient(&redis.Options{Addr: rs.Addr()})
	defer direct.Close()
	reserve := redis.NewScript(`return redis.call('INCR', KEYS[1])`)
	if err := rdb.Set(ctx, "before", "1", 0).Err(); err != nil {
		t.Fatalf("a SET the toxic does not match: %v", err)
	}
	if n, err := reserve.Eval(ctx, rdb, []string{"reserved"}).Int(); err == nil {
		t.Fatalf("EVAL answered %d: its answer was not lost", n)
	}
	if n, err := direct.Get(ctx, "reserved").Int(); err != nil || n != 1 {
		t.Fatalf("reserved = %d, %v: the EVAL whose answer was lost did not run", n, err)
	}
	if n, err := reserve.Eval(ctx, rdb, []string{"reserved"}).Int(); err != nil || n != 2 {
		t.Fatalf("the second EVAL (first: 1 spent): %d, %v", n, err)
	}
	matched, lost, first := lostHits(t, c, "redis", "lost")
	if matched != 2 || lost != 1 || len(first) != 1 || !strings.Contains(first[0].(string), "eval") {
		t.Errorf("hits: %v matched, %v lost, first %q", matched, lost, first)
	}
}

// Postgres: a COMMIT whose answer is lost committed — the row is there —
// while the client got an error for it, which is the moment a checkout
// that "gives the unit back" on a failed COMMIT sells it twice.
func TestLostReplyPostgresCommitHappened(t *testing.T) {
	pg := testenv.PostgresServer(t)
	c := testenv.Toxiproxy(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	addr := relayedProxy(t, c, "pg", pg.Addr)
	direct, err := sql.Open("pgx", pg.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	if _, err := direct.ExecContext(ctx, `CREATE TABLE orders (id text PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("pgx", strings.Replace(pg.DSN, pg.Addr, addr, 1))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if err := db.PingContext(ctx); err != nil {
		t.Fatal(err)
	}
	// Added while the pool's connection is open: the toxic acts on it.
	testenv.AddToxic(t, c, "pg", toxi.Toxic{Name: "lost", Type: "lost_reply", Attributes: map[string]any{"match": "(?i)commit", "first": 1}})
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO orders VALUES ('order-1')`); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err == nil {
		t.Fatal("COMMIT answered: its answer was not lost")
	}
	var n int
	if err := direct.QueryRowContext(ctx, `SELECT count(*) FROM orders WHERE id = 'order-1'`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("order-1 rows: %d, %v; the COMMIT whose answer was lost did not commit", n, err)
	}
	if _, lost, _ := lostHits(t, c, "pg", "lost"); lost != 1 {
		t.Errorf("lost %v answers, want 1", lost)
	}
}

// HTTP: a charge whose answer is lost was recorded by the provider; the
// client saw its connection end, not an answer.
func TestLostReplyHTTPChargeRecorded(t *testing.T) {
	var charges atomic.Int64
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/v1/charges" {
			charges.Add(1)
		}
		w.Write([]byte(`{"status":"succeeded"}`))
	}))
	defer provider.Close()
	c := testenv.Toxiproxy(t)
	addr := relayedProxy(t, c, "payments", provider.Listener.Addr().String())
	testenv.AddToxic(t, c, "payments", toxi.Toxic{Name: "lost", Type: "lost_reply", Attributes: map[string]any{"match": "^POST /v1/charges "}})
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{}}
	if resp, err := hc.Get("http://" + addr + "/v1/charges/ch_1"); err != nil {
		t.Fatalf("a GET the toxic does not match: %v", err)
	} else {
		resp.Body.Close()
	}
	resp, err := hc.Post("http://"+addr+"/v1/charges", "application/json", strings.NewReader(`{"amount":100}`))
	if err == nil {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("the charge answered %s %s: its answer was not lost", resp.Status, body)
	}
	if n := charges.Load(); n != 1 {
		t.Errorf("the provider recorded %d charges, want 1: the work is done, the answer lost", n)
	}
	_, _, first := lostHits(t, c, "payments", "lost")
	if len(first) != 1 || first[0] != "POST /v1/charges HTTP/1.1" {
		t.Errorf("first lost requests %q", first)
	}
}

// A relay behind a proxy is never shown: a request-aware proxy reads back
// with the upstream it was given, however it was made or changed. A
// lost_reply toxic is refused at the API when its attributes are wrong or
// its proxy has no relay, and the capabilities route lists the types
// served and the proxies relayed, for a runner to check before a drill.
func TestRelayIsHiddenBehindTheAPI(t *testing.T) {
	rs := testenv.Redis(t)
	c := testenv.Toxiproxy(t)
	ctx := context.Background()
	relayedProxy(t, c, "redis", rs.Addr())
	plain := testenv.Proxy(t, c, "plain", rs.Addr())
	all, err := c.Proxies(ctx)
	if err != nil || all["redis"].Upstream != rs.Addr() || !all["redis"].RequestAware || all["plain"].RequestAware || all["plain"].Upstream != rs.Addr() {
		t.Fatalf("proxies: %+v, %v", all, err)
	}
	p, err := c.Proxy(ctx, "redis")
	if err != nil || p.Upstream != rs.Addr() {
		t.Fatalf("proxy: %+v, %v", p, err)
	}
	// Disabled and enabled again, the proxy keeps its relay and upstream.
	if err := c.SetEnabled(ctx, "redis", false); err != nil {
		t.Fatal(err)
	}
	if err := c.SetEnabled(ctx, "redis", true); err != nil {
		t.Fatal(err)
	}
	if p, err := c.Proxy(ctx, "redis"); err != nil || p.Upstream != rs.Addr() || !p.RequestAware {
		t.Fatalf("proxy enabled again: %+v, %v", p, err)
	}
	if rtt := ping(t, p.Listen); rtt > time.Second {
		t.Errorf("round trip through proxy and relay %s", rtt)
	}
	if rtt := ping(t, plain); rtt > time.Second {
		t.Errorf("round trip through the plain proxy %s", rtt)
	}
	for proxy, cases := range map[string]map[string]string{
		"redis": {
			`{"match":"(unclosed"}`: "lost_reply: match:",
			`{"frist":1}`:           `lost_reply has no attribute "frist"`,
		},
		"plain": {`{"match":"EVAL"}`: "proxy plain has no relay behind it"},
	} {
		for attrs, want := range cases {
			var a map[string]any
			if err := json.Unmarshal([]byte(attrs), &a); err != nil {
				t.Fatal(err)
			}
			_, err := c.AddToxic(ctx, proxy, toxi.Toxic{Name: "bad", Type: "lost_reply", Attributes: a})
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: lost_reply %s: %v, want %q", proxy, attrs, err, want)
			}
			if ts, err := c.Toxics(ctx, proxy); err != nil || len(ts) != 0 {
				t.Errorf("%s: a refused toxic left %+v, %v", proxy, ts, err)
			}
		}
	}
	resp, err := http.Get(c.Addr() + toxi.CapabilitiesPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var caps toxi.Capabilities
	if err := json.NewDecoder(resp.Body).Decode(&caps); err != nil ||
		!slices.Contains(caps.Toxics, "lost_reply") || !slices.Contains(caps.Toxics, "latency") ||
		!slices.Equal(caps.RequestAware, []string{"http_error", "http_latency", "http_lost_response", "http_malformed", "lost_reply"}) || !slices.Equal(caps.Relayed, []string{"redis"}) {
		t.Errorf("capabilities: %+v, %v", caps, err)
	}
	if err := c.DeleteProxy(ctx, "redis"); err != nil {
		t.Fatal(err)
	}
	if conn, err := net.DialTimeout("tcp", p.Listen, time.Second); err == nil {
		conn.Close()
		t.Error("a deleted proxy still accepts connections")
	}
}

// Toxiproxy applies a populate one proxy at a time and stops at the first
// it cannot start, answering an error: the proxies before it are changed
// all the same. The relays follow what Toxiproxy holds, whatever it
// answered: a proxy populated with a relay before the failure dials a
// live relay (its lost_reply works), and one populated without a relay
// before it has none left (a lost_reply is refused, not inert).
func TestPopulateThatFailsHalfWayKeepsTheRelaysRight(t *testing.T) {
	rs := testenv.Redis(t)
	c := testenv.Toxiproxy(t)
	ctx := context.Background()
	relayedProxy(t, c, "was-relayed", rs.Addr())
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	body, _ := json.Marshal([]map[string]any{
		{"name": "now-relayed", "listen": "127.0.0.1:0", "upstream": rs.Addr(), "request_aware": true},
		{"name": "was-relayed", "listen": "127.0.0.1:0", "upstream": rs.Addr()},
		{"name": "cannot-start", "listen": taken.Addr().String(), "upstream": rs.Addr()},
	})
	resp, err := http.Post(c.Addr()+"/populate", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 == 2 {
		t.Fatalf("populate with a taken listen address answered %d, want an error", resp.StatusCode)
	}
	caps, err := c.Capabilities(ctx)
	if err != nil || !slices.Equal(caps.Relayed, []string{"now-relayed"}) {
		t.Fatalf("relayed after a failed populate: %+v, %v; want now-relayed only", caps, err)
	}
	all, err := c.Proxies(ctx)
	if err != nil || all["now-relayed"].Upstream != rs.Addr() || !all["now-relayed"].RequestAware || all["was-relayed"].RequestAware || all["was-relayed"].Upstream != rs.Addr() {
		t.Fatalf("proxies after a failed populate: %+v, %v", all, err)
	}
	if _, err := c.AddToxic(ctx, "now-relayed", toxi.Toxic{Name: "lose", Type: "lost_reply", Attributes: map[string]any{"match": "(?i)incr"}}); err != nil {
		t.Fatal(err)
	}
	cl := redis.NewClient(&redis.Options{Addr: all["now-relayed"].Listen, MaxRetries: -1})
	defer cl.Close()
	if err := cl.Incr(ctx, "populated").Err(); err == nil {
		t.Error("an INCR through a relayed proxy with its reply lost succeeded")
	}
	if _, lost, _ := lostHits(t, c, "now-relayed", "lose"); lost != 1 {
		t.Errorf("lost %v replies, want 1: the relay the proxy dials is not the one its toxic acts in", lost)
	}
	_, err = c.AddToxic(ctx, "was-relayed", toxi.Toxic{Name: "lose", Type: "lost_reply", Attributes: map[string]any{"match": "INCR"}})
	if err == nil || !strings.Contains(err.Error(), "has no relay behind it") {
		t.Errorf("lost_reply on a proxy populated without a relay: %v, want it refused", err)
	}
}
