package checkout_test

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gameday-dev/gameday/checkout"
	"github.com/gameday-dev/gameday/checkout/catalog"
	"github.com/gameday-dev/gameday/gameday/toxi"
	"github.com/gameday-dev/gameday/internal/testenv"
)

type pageAnswer struct {
	code int
	body struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Stale       bool   `json:"stale"`
		Degraded    bool   `json:"degraded"`
		Reason      string `json:"reason"`
	}
}

func (e *env) page() pageAnswer {
	e.t.Helper()
	resp, err := e.hc.Get(e.url + "/products/" + sku)
	if err != nil {
		e.t.Fatalf("get the product page: %v", err)
	}
	defer resp.Body.Close()
	a := pageAnswer{code: resp.StatusCode}
	if err := json.NewDecoder(resp.Body).Decode(&a.body); err != nil {
		e.t.Fatalf("decode the product page (%d): %v", resp.StatusCode, err)
	}
	return a
}

// pages asks for the product page n times at once.
func (e *env) pages(n int) []pageAnswer {
	out := make([]pageAnswer, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() { defer wg.Done(); out[i] = e.page() }()
	}
	wg.Wait()
	return out
}

// clearCache deletes the product's cached description, as a flush does.
func (e *env) clearCache() {
	e.t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: e.sessAddr})
	defer rdb.Close()
	if err := rdb.Del(context.Background(), "gameday:product:"+sku).Err(); err != nil {
		e.t.Fatal(err)
	}
}

// A slow catalogue: every miss of a cold cache at the same moment.
var slowCatalog = catalog.Config{MinLatency: 150 * time.Millisecond, MaxLatency: 150 * time.Millisecond}

// roomy gives the page's stock read and cache calls seconds, not the
// checkout's 250 and 100 ms: these tests are about what reaches the
// catalogue, and a busy test machine must not turn a slow Redis answer
// into a degraded page or a cache left unwritten.
func roomy(c checkout.Config) checkout.Config {
	c.Inventory.Timeout, c.Sessions.Timeout = 2*time.Second, 2*time.Second
	return c
}

// Fifty shoppers on a cold cache at once send the catalogue one request
// between them, and none once it is cached; with coalescing off each miss
// sends its own: the stampede a flushed cache brings.
func TestProductPageCoalescesMisses(t *testing.T) {
	for _, tc := range []struct {
		name     string
		coalesce string
		atLeast  int64
		atMost   int64
	}{
		{"on", "", 1, 1},
		{"off", checkout.Off, 25, 50},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, envOptions{stock: 10, catalog: &slowCatalog, cfg: roomy(checkout.Config{ProductCoalesce: tc.coalesce})})
			// Every page has its description (on a busy machine a late
			// miss may serve the first one's, stale, rather than wait).
			for i, a := range e.pages(50) {
				if a.code != http.StatusOK || a.body.Name == "" {
					t.Fatalf("page %d: %d %+v", i, a.code, a.body)
				}
			}
			if n := e.catalog.Stats().Requests; n < tc.atLeast || n > tc.atMost {
				t.Errorf("the catalogue took %d requests for 50 pages at once on a cold cache; want %d to %d", n, tc.atLeast, tc.atMost)
			}
			before := e.catalog.Stats().Requests
			e.pages(20)
			if n := e.catalog.Stats().Requests - before; n != 0 {
				t.Errorf("the catalogue took %d requests for pages of a cached product", n)
			}
		})
	}
}

// The cache flushed while the catalogue is down: the page is served from
// the last description had, marked stale and degraded; with stale-serving
// off it fails (503, reason catalog).
func TestProductPageServesStaleWhenTheCatalogFails(t *testing.T) {
	for _, tc := range []struct {
		name  string
		stale string
	}{{"on", ""}, {"off", checkout.Off}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, envOptions{stock: 10, catalog: &catalog.Config{}, cfg: roomy(checkout.Config{ProductServeStale: tc.stale, CatalogTimeout: 300 * time.Millisecond})})
			if a := e.page(); a.code != http.StatusOK || a.body.Stale {
				t.Fatalf("warm: %d %+v", a.code, a.body)
			}
			e.clearCache()
			e.setEnabled("catalog", false)
			a := e.page()
			switch {
			case tc.stale == "" && (a.code != http.StatusOK || !a.body.Stale || !a.body.Degraded || a.body.Description == ""):
				t.Errorf("stale on, the catalogue down: %d %+v; want the last description, stale and degraded", a.code, a.body)
			case tc.stale == checkout.Off && (a.code != http.StatusServiceUnavailable || a.body.Reason != "catalog"):
				t.Errorf("stale off, the catalogue down: %d %+v; want 503 reason catalog", a.code, a.body)
			}
			e.setEnabled("catalog", true)
			if a := e.page(); a.code != http.StatusOK || a.body.Stale {
				t.Errorf("the catalogue back: %d %+v; want a fresh page", a.code, a.body)
			}
		})
	}
}

// With the guest fallback off a purchase whose session store fails is
// refused (503, dependency sessions), and the unit it held is given back.
func TestGuestFallbackOffRefusesAndReleases(t *testing.T) {
	e := newEnv(t, envOptions{stock: 5, cfg: checkout.Config{GuestFallback: checkout.Off}})
	e.setEnabled("sessions", false)
	a := e.post(shopper(1))
	if a.code != http.StatusServiceUnavailable || a.body.Dependency != "sessions" || a.body.Status != checkout.OutcomeUnavailable {
		t.Fatalf("sessions down, no guest fallback: %d %+v", a.code, a.body)
	}
	if l := e.ledger(); l.Available != 5 || l.Reserved != 0 || l.Sold != 0 {
		t.Errorf("ledger after the refusal: %+v; want the unit back", l)
	}
	e.setEnabled("sessions", true)
	if a := e.post(shopper(2)); a.body.Status != checkout.OutcomeConfirmed || a.body.Degraded {
		t.Errorf("sessions back: %d %+v", a.code, a.body)
	}
}

// A slow catalogue does not make a slow page: a miss waits a quarter of a
// second, then serves the last description had — long before the
// catalogue's three seconds — while the request goes on and fills the
// cache for the pages after it.
func TestProductPageDoesNotWaitForASlowCatalog(t *testing.T) {
	e := newEnv(t, envOptions{stock: 10, catalog: &catalog.Config{}, cfg: roomy(checkout.Config{CatalogTimeout: 5 * time.Second})})
	if a := e.page(); a.code != http.StatusOK {
		t.Fatalf("warm: %d %+v", a.code, a.body)
	}
	e.clearCache()
	testenv.AddToxic(t, e.toxi, "catalog", toxi.Toxic{Name: "slow", Type: "latency", Stream: "downstream", Toxicity: 1, Attributes: map[string]any{"latency": 3000}})
	start := time.Now()
	a := e.page()
	if took := time.Since(start); a.code != http.StatusOK || !a.body.Stale || took > 2*time.Second {
		t.Fatalf("a miss on a slow catalogue: %d %+v after %s; want the stale page at once", a.code, a.body, took)
	}
	before := e.catalog.Stats().Requests
	checkout.WaitFor(t, "the cache filled by the slow request", func() bool { return !e.page().body.Stale })
	if n := e.catalog.Stats().Requests - before; n != 0 {
		t.Errorf("%d more catalogue requests while one was on its way", n)
	}
}
