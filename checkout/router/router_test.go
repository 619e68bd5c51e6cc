package router_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gameday-dev/gameday/checkout/router"
	"github.com/gameday-dev/gameday/internal/testenv"
)

type quietRedisLog struct{}

func (quietRedisLog) Printf(context.Context, string, ...any) {}

func TestMain(m *testing.M) {
	// go-redis logs every failed dial; the store-down test causes many.
	redis.SetLogger(quietRedisLog{})
	os.Exit(m.Run())
}

// seen is one request as a pod received it.
type seen struct {
	Method, Path, Query, Body string
	Header                    http.Header
}

// pod is a stand-in pod checkout that records what it receives and answers
// 201 {"pod":NAME}, with a Gameday-Pod header of its own that the router
// must replace.
type pod struct {
	name string
	srv  *httptest.Server
	mu   sync.Mutex
	reqs []seen
}

func newPod(t *testing.T, name string) *pod {
	t.Helper()
	p := &pod{name: name}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		p.mu.Lock()
		p.reqs = append(p.reqs, seen{r.Method, r.URL.Path, r.URL.RawQuery, string(body), r.Header.Clone()})
		p.mu.Unlock()
		w.Header().Set(router.PodHeader, "forged")
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"pod":"`+name+`"}`)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *pod) received() []seen {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]seen(nil), p.reqs...)
}

// logBuffer is a log the router writes while the test reads it.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.b.String(), s)
}

// fixture is a router running its reload loop against a real redis-server,
// served over HTTP.
type fixture struct {
	redis *redis.Client
	rt    *router.Router
	url   string
	log   *logBuffer
}

func newFixture(t *testing.T, addr string) *fixture {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialerRetries: 1, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { _ = rdb.Close() })
	lb := &logBuffer{}
	rt, err := router.New(router.Options{
		Store:       rdb,
		Refresh:     10 * time.Millisecond,
		LoadTimeout: 500 * time.Millisecond,
		Logger:      slog.New(slog.NewTextHandler(lb, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { rt.Run(ctx); close(done) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("Run did not return 5s after its context ended")
		}
	})
	srv := httptest.NewServer(rt)
	t.Cleanup(srv.Close)
	return &fixture{redis: rdb, rt: rt, url: srv.URL, log: lb}
}

func (f *fixture) write(t *testing.T, routes, pods map[string]string) int64 {
	t.Helper()
	v, err := router.WriteTable(context.Background(), f.redis, router.Keys{}, routes, pods)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// waitVersion polls GET /router/routes until the router routes by version
// want or later, for at most 5s.
func (f *fixture) waitVersion(t *testing.T, want int64) router.Table {
	t.Helper()
	return f.waitTable(t, fmt.Sprintf("version %d", want), func(tab router.Table) bool { return tab.Version >= want })
}

// waitTable polls GET /router/routes until the table there is what ok
// wants, for at most 5s.
func (f *fixture) waitTable(t *testing.T, what string, ok func(router.Table) bool) router.Table {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		resp, err := http.Get(f.url + router.RoutesPath)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		last = resp.Status + " " + string(body)
		var tab router.Table
		if resp.StatusCode == http.StatusOK && json.Unmarshal(body, &tab) == nil && ok(tab) {
			return tab
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("the router never routed by %s in 5s; last GET %s: %s", what, router.RoutesPath, last)
	return router.Table{}
}

// reply is one answer of the router, body read.
type reply struct {
	code int
	hdr  http.Header
	body string
}

func (f *fixture) do(t *testing.T, method, path, shop, body string) reply {
	t.Helper()
	req, err := http.NewRequest(method, f.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if shop != "" {
		req.Header.Set("Shop", shop)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, resp.Header, string(b)}
}

// wantAnswer checks one of the router's own answers: code and the JSON
// body's status and reason (and, for "unavailable", the retry advice).
func wantAnswer(t *testing.T, got reply, code int, status, reason string) {
	t.Helper()
	var a struct {
		Status       string `json:"status"`
		Reason       string `json:"reason"`
		RetryAfterMS int64  `json:"retry_after_ms"`
	}
	if err := json.Unmarshal([]byte(got.body), &a); err != nil || got.code != code || a.Status != status || a.Reason != reason {
		t.Fatalf("answer %d %s; want %d {status:%s reason:%s}", got.code, got.body, code, status, reason)
	}
	if status == "unavailable" && (got.hdr.Get("Retry-After") != "1" || a.RetryAfterMS != 1000) {
		t.Errorf("%s answer: Retry-After %q, retry_after_ms %d; want 1 and 1000", reason, got.hdr.Get("Retry-After"), a.RetryAfterMS)
	}
}

// Each shop's request reaches its own pod as the client sent it, and the
// answer comes back whole, naming the pod; /router/routes shows the table.
func TestRoutesEachShopToItsPod(t *testing.T) {
	f := newFixture(t, testenv.Redis(t).Addr())
	p1, p2 := newPod(t, "pod-1"), newPod(t, "pod-2")
	routes := map[string]string{"shop-a": "pod-1", "shop-b": "pod-2"}
	pods := map[string]string{"pod-1": p1.srv.URL, "pod-2": p2.srv.URL}
	tab := f.waitVersion(t, f.write(t, routes, pods))
	if !maps.Equal(tab.Routes, routes) || !maps.Equal(tab.Pods, pods) || time.Since(tab.LoadedAt) > 5*time.Second {
		t.Fatalf("%s = %+v; want routes %v, pods %v, loaded in the last 5s", router.RoutesPath, tab, routes, pods)
	}

	for _, c := range []struct {
		shop string
		to   *pod
		not  *pod
	}{
		{"shop-a", p1, p2}, // pod-1's shop
		{"shop-b", p2, p1}, // pod-2's shop
	} {
		before := len(c.not.received())
		req, _ := http.NewRequest(http.MethodPost, f.url+"/checkout?sku=sku-1&n=2", strings.NewReader(`{"checkout_id":"co-`+c.shop+`"}`))
		req.Header.Set("Shop", c.shop)
		req.Header.Set("Idempotency-Key", "k-"+c.shop)
		req.Header.Add("X-Many", "one")
		req.Header.Add("X-Many", "two")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated || string(body) != `{"pod":"`+c.to.name+`"}` || resp.Header.Get(router.PodHeader) != c.to.name {
			t.Errorf("%s: answer %d %s, %s %q; want the pod's 201 and %s", c.shop, resp.StatusCode, body, router.PodHeader, resp.Header.Get(router.PodHeader), c.to.name)
		}
		got := c.to.received()
		if len(got) == 0 {
			t.Fatalf("%s: %s received nothing", c.shop, c.to.name)
		}
		r := got[len(got)-1]
		if r.Method != http.MethodPost || r.Path != "/checkout" || r.Query != "sku=sku-1&n=2" || r.Body != `{"checkout_id":"co-`+c.shop+`"}` ||
			r.Header.Get("Shop") != c.shop || r.Header.Get("Idempotency-Key") != "k-"+c.shop || strings.Join(r.Header.Values("X-Many"), ",") != "one,two" {
			t.Errorf("%s: %s received %+v; want the request as sent", c.shop, c.to.name, r)
		}
		if n := len(c.not.received()); n != before {
			t.Errorf("%s: %s received it too", c.shop, c.not.name)
		}
	}
}

// The router's own refusals, each with its code and reason.
func TestRefusals(t *testing.T) {
	f := newFixture(t, testenv.Redis(t).Addr())
	p1 := newPod(t, "pod-1")
	f.waitVersion(t, f.write(t,
		map[string]string{"shop-a": "pod-1", "shop-dead": "pod-dead"},
		map[string]string{"pod-1": p1.srv.URL, "pod-dead": "http://" + testenv.ClosedAddr(t)}))
	// A route to a pod with no URL cannot be written by WriteTable; a hand
	// can write one.
	if err := f.redis.HSet(context.Background(), router.DefaultRoutesKey, "shop-lost", "pod-9").Err(); err != nil {
		t.Fatal(err)
	}
	v, err := f.redis.Incr(context.Background(), router.DefaultRoutesKey+":version").Result()
	if err != nil {
		t.Fatal(err)
	}
	f.waitVersion(t, v)

	for _, c := range []struct {
		shop           string
		code           int
		status, reason string
	}{
		{"", http.StatusBadRequest, "error", "no_shop"},                        // no Shop header
		{"shop-z", http.StatusNotFound, "error", "unknown_shop"},               // not in the table
		{"shop-lost", http.StatusBadGateway, "error", "no_pod"},                // its pod has no URL
		{"shop-dead", http.StatusBadGateway, "unavailable", "pod_unreachable"}, // nothing listens at its pod's URL
	} {
		got := f.do(t, http.MethodPost, "/checkout", c.shop, `{}`)
		wantAnswer(t, got, c.code, c.status, c.reason)
		if c.reason == "pod_unreachable" && got.hdr.Get(router.PodHeader) != "pod-dead" {
			t.Errorf("pod_unreachable: %s %q, want pod-dead", router.PodHeader, got.hdr.Get(router.PodHeader))
		}
	}
	if n := len(p1.received()); n != 0 {
		t.Errorf("pod-1 received %d requests of other shops", n)
	}
}

// A new table is routed by once the router has reloaded it: a shop moved
// to another pod goes there, a shop removed is unknown.
func TestTableChangeIsPickedUp(t *testing.T) {
	f := newFixture(t, testenv.Redis(t).Addr())
	p1, p2 := newPod(t, "pod-1"), newPod(t, "pod-2")
	pods := map[string]string{"pod-1": p1.srv.URL, "pod-2": p2.srv.URL}
	f.waitVersion(t, f.write(t, map[string]string{"shop-a": "pod-1", "shop-b": "pod-1"}, pods))
	if got := f.do(t, http.MethodPost, "/checkout", "shop-a", `{}`); got.hdr.Get(router.PodHeader) != "pod-1" {
		t.Fatalf("shop-a before the change went to %q, want pod-1", got.hdr.Get(router.PodHeader))
	}

	tab := f.waitVersion(t, f.write(t, map[string]string{"shop-a": "pod-2"}, pods))
	if got := f.do(t, http.MethodPost, "/checkout", "shop-a", `{}`); got.hdr.Get(router.PodHeader) != "pod-2" {
		t.Errorf("shop-a after the change (version %d) went to %q, want pod-2", tab.Version, got.hdr.Get(router.PodHeader))
	}
	wantAnswer(t, f.do(t, http.MethodPost, "/checkout", "shop-b", `{}`), http.StatusNotFound, "error", "unknown_shop")
}

// A shop being moved is read-only: writes are refused with 503
// shop_moving and reach no pod, reads go to the pod the route names.
func TestMovingShopIsReadOnly(t *testing.T) {
	f := newFixture(t, testenv.Redis(t).Addr())
	p1, p2 := newPod(t, "pod-1"), newPod(t, "pod-2")
	f.write(t, map[string]string{"shop-a": "pod-1"}, map[string]string{"pod-1": p1.srv.URL, "pod-2": p2.srv.URL})
	v, err := router.SetRoute(context.Background(), f.redis, router.Keys{}, "shop-a", router.Moving("pod-2"))
	if err != nil {
		t.Fatal(err)
	}
	f.waitVersion(t, v)

	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
		wantAnswer(t, f.do(t, m, "/checkout", "shop-a", `{}`), http.StatusServiceUnavailable, "unavailable", "shop_moving")
	}
	if n := len(p1.received()) + len(p2.received()); n != 0 {
		t.Errorf("the pods received %d writes of a moving shop", n)
	}
	for _, m := range []string{http.MethodGet, http.MethodHead} {
		got := f.do(t, m, "/orders/co-1", "shop-a", "")
		if got.code != http.StatusCreated || got.hdr.Get(router.PodHeader) != "pod-2" {
			t.Errorf("%s of a moving shop: %d, %s %q; want pod-2's 201", m, got.code, router.PodHeader, got.hdr.Get(router.PodHeader))
		}
	}
	if got := p2.received(); len(got) != 2 || got[0].Method != http.MethodGet || got[1].Method != http.MethodHead {
		t.Errorf("pod-2 received %+v, want the GET and the HEAD", got)
	}
}

// With the routing store gone the router keeps routing by the last table,
// says so once however many reloads fail, and takes the store's new table
// when it is back.
func TestStoreDownKeepsTheLastTable(t *testing.T) {
	rs := testenv.Redis(t)
	p1, p2 := newPod(t, "pod-1"), newPod(t, "pod-2")
	pods := map[string]string{"pod-1": p1.srv.URL, "pod-2": p2.srv.URL}
	// The table is there before the router starts: its first load succeeds.
	writer := redis.NewClient(&redis.Options{Addr: rs.Addr()})
	v, err := router.WriteTable(context.Background(), writer, router.Keys{}, map[string]string{"shop-a": "pod-1"}, pods)
	writer.Close()
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, rs.Addr())
	f.waitVersion(t, v)

	if err := rs.Kill(); err != nil {
		t.Fatal(err)
	}
	// Several reloads fail (each logged at debug level) before the test
	// looks: at 10ms a refresh, 5s is far more than needed.
	deadline := time.Now().Add(5 * time.Second)
	for f.log.count("routing table reload failed") < 5 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := f.log.count("routing table reload failed"); n < 5 {
		t.Fatalf("%d reloads failed in 5s after the store was killed, want 5 or more", n)
	}
	if n, m := f.log.count("level=WARN"), f.log.count("routing table unreadable: routing by the last table"); n != 1 || m != 1 {
		t.Errorf("the outage was logged %d times as a warning, %d saying the last table is used; want once", n, m)
	}
	got := f.do(t, http.MethodPost, "/checkout", "shop-a", `{}`)
	if got.code != http.StatusCreated || got.hdr.Get(router.PodHeader) != "pod-1" {
		t.Errorf("with the store down shop-a got %d from %q, want pod-1's 201", got.code, got.hdr.Get(router.PodHeader))
	}
	if tab := f.waitVersion(t, v); tab.Version != v || f.do(t, http.MethodGet, router.HealthPath, "", "").code != http.StatusOK {
		t.Errorf("with the store down the router shows version %d or is not healthy; want version %d, healthy", tab.Version, v)
	}

	// Back, empty (it kept nothing on disk), then written again.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	back, err := rs.Restart(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = back.Kill() })
	// The version starts again from 1 in a store that lost its data: wait
	// for the table's content.
	f.write(t, map[string]string{"shop-a": "pod-2"}, pods)
	f.waitTable(t, "shop-a on pod-2", func(tab router.Table) bool { return tab.Routes["shop-a"] == "pod-2" })
	if got := f.do(t, http.MethodPost, "/checkout", "shop-a", `{}`); got.hdr.Get(router.PodHeader) != "pod-2" {
		t.Errorf("after the store came back shop-a went to %q, want pod-2", got.hdr.Get(router.PodHeader))
	}
	if n := f.log.count("routing table readable again"); n != 1 {
		t.Errorf("the store's return was logged %d times, want once", n)
	}
}

// Until a table is loaded every request, /healthz and /router/routes are
// answered 503 no_routes: a store with no table counts as none.
func TestNoRoutesUntilATableLoads(t *testing.T) {
	f := newFixture(t, testenv.Redis(t).Addr())
	// The store answers but holds no table: the reloads fail with ErrNoTable.
	deadline := time.Now().Add(5 * time.Second)
	for f.log.count("no routing table in the store") == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if f.log.count("no routing table in the store") == 0 {
		t.Fatal("no reload failed with \"no routing table in the store\" in 5s")
	}
	for _, path := range []string{"/checkout", router.HealthPath, router.RoutesPath} {
		wantAnswer(t, f.do(t, http.MethodGet, path, "shop-a", ""), http.StatusServiceUnavailable, "unavailable", "no_routes")
	}
	if f.rt.Table() != nil {
		t.Errorf("Table() = %+v before any load, want nil", f.rt.Table())
	}
	p1 := newPod(t, "pod-1")
	v := f.write(t, map[string]string{"shop-a": "pod-1"}, map[string]string{"pod-1": p1.srv.URL})
	f.waitVersion(t, v)
	if got := f.do(t, http.MethodGet, router.HealthPath, "", ""); got.code != http.StatusOK || !strings.Contains(got.body, `"status":"ok"`) {
		t.Errorf("/healthz with a table: %d %s, want 200 ok", got.code, got.body)
	}
	if tab := f.rt.Table(); tab == nil || tab.Version != v {
		t.Errorf("Table() = %+v, want version %d", tab, v)
	}
}

// WriteTable checks the whole table and writes nothing when it is wrong.
func TestWriteTableRefusesABadTable(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: testenv.Redis(t).Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	ok := map[string]string{"pod-1": "http://127.0.0.1:1"}
	for _, c := range []struct {
		routes, pods map[string]string
		want         string
	}{
		{map[string]string{"shop-a": "pod-2"}, ok, `routes to "pod-2"`},               // a pod not in the table
		{map[string]string{"shop-a": "moving:pod-2"}, ok, `routes to "moving:pod-2"`}, // moving to a pod not in the table
		{map[string]string{"": "pod-1"}, ok, "a shop with no name"},                   // an empty shop
		{nil, map[string]string{"pod-1": "127.0.0.1:8080"}, "pod pod-1"},              // no scheme
		{nil, map[string]string{"pod-1": "ftp://127.0.0.1:21"}, "pod pod-1"},          // not http
		{nil, map[string]string{"": "http://127.0.0.1:1"}, "a pod with no name"},      // an empty pod
	} {
		_, err := router.WriteTable(context.Background(), rdb, router.Keys{}, c.routes, c.pods)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("WriteTable(%v, %v) = %v, want an error naming %s", c.routes, c.pods, err, c.want)
		}
	}
	if n, err := rdb.Exists(context.Background(), router.DefaultRoutesKey, router.DefaultPodsKey, router.DefaultRoutesKey+":version").Result(); err != nil || n != 0 {
		t.Errorf("after refused writes %d of the table's keys exist (%v), want none", n, err)
	}
}
