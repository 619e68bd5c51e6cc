package checkout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/gameday-dev/gameday/breakers"
	"github.com/gameday-dev/gameday/checkout/catalog"
)

// The product page's description comes from the catalogue (an origin
// slower than a cache: its stand-in is package catalog), and is kept in
// the sessions Redis for ProductCacheTTL under gameday:product:{sku}. Two
// defences keep the catalogue whole when the cache is cleared at once —
// flushed at the peak, its hot keys expired together — each switchable
// off so that a drill can prove it notices (docs/checkout.md):
//
//   - coalescing: the misses of one SKU at the same moment wait for one
//     catalogue request, rather than each sending its own;
//   - serve stale: when the catalogue fails (an error, a timeout, a
//     refusal), or has not answered within staleAfter, the last
//     description this checkout had of the SKU is served, the page marked
//     degraded (stale: true); the request goes on and fills the cache
//     when it answers. The copy is kept in the checkout's memory, not in
//     Redis: a flush of the cache leaves it.
//
// Without either, a page whose description cannot be had is 503 (reason
// catalog) with a Retry-After.

// productKey is a SKU's cached description.
func productKey(sku string) string { return "gameday:product:" + sku }

// maxStale bounds the descriptions kept for serving stale, and
// staleAfter is how long a miss waits for the catalogue before it serves
// one: a slow catalogue must not make a slow page.
const (
	maxStale   = 10_000
	staleAfter = 250 * time.Millisecond
)

// productCache is the catalogue behind the product page, with its cache
// and defences.
type productCache struct {
	base     string // the catalogue's base URL
	hc       *http.Client
	timeout  time.Duration
	rdb      *redis.Client // the cache; nil without a session store
	guard    *breakers.Guard
	ttl      time.Duration
	coalesce bool
	stale    bool
	results  *prometheus.CounterVec

	mu      sync.Mutex
	flights map[string]*flight
	last    map[string]catalog.Product
}

// flight is one catalogue request that misses of the same SKU wait for.
type flight struct {
	done chan struct{}
	p    catalog.Product
	err  error
}

func newProductCache(cfg Config, rdb *redis.Client, guard *breakers.Guard, m *metrics) *productCache {
	return &productCache{
		base: strings.TrimRight(cfg.CatalogURL, "/"), hc: &http.Client{}, timeout: cfg.CatalogTimeout,
		rdb: rdb, guard: guard, ttl: cfg.ProductCacheTTL,
		coalesce: cfg.ProductCoalesce != Off, stale: cfg.ProductServeStale != Off, results: m.product,
		flights: map[string]*flight{}, last: map[string]catalog.Product{},
	}
}

// get is sku's description: from the cache, else from the catalogue
// (stored in the cache for the next), else, serving stale, the last one
// had; stale says it is that.
func (c *productCache) get(ctx context.Context, sku string) (p catalog.Product, stale bool, err error) {
	if p, ok := c.cached(ctx, sku); ok {
		c.results.WithLabelValues("hit").Inc()
		return p, false, nil
	}
	c.results.WithLabelValues("miss").Inc()
	// The catalogue request: the one in flight for sku, coalescing, or
	// this miss's own.
	var f *flight
	if c.coalesce {
		f = c.shared(sku)
	} else {
		f = c.start(sku, nil)
	}
	c.mu.Lock()
	old, haveOld := c.last[sku]
	c.mu.Unlock()
	var waitOld <-chan time.Time
	if c.stale && haveOld {
		t := time.NewTimer(staleAfter)
		defer t.Stop()
		waitOld = t.C
	}
	select {
	case <-f.done:
		err = f.err
	case <-waitOld:
		err = errors.New("the catalogue has not answered yet")
	case <-ctx.Done():
		return p, false, ctx.Err()
	}
	if err == nil {
		return f.p, false, nil
	}
	if c.stale && haveOld {
		c.results.WithLabelValues("stale").Inc()
		return old, true, nil
	}
	c.results.WithLabelValues("failed").Inc()
	return p, false, err
}

// shared is the catalogue request of sku in flight, started if there is
// none: one request for all the misses of a moment. A waiter whose own
// request ends stops waiting; the flight goes on for the others.
func (c *productCache) shared(sku string) *flight {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f, ok := c.flights[sku]; ok {
		return f
	}
	f := c.start(sku, func() {
		c.mu.Lock()
		delete(c.flights, sku)
		c.mu.Unlock()
	})
	c.flights[sku] = f
	return f
}

// start sends a catalogue request for sku in the background; landed, when
// set, runs once it has answered, before its waiters learn the answer.
func (c *productCache) start(sku string, landed func()) *flight {
	f := &flight{done: make(chan struct{})}
	go func() {
		f.p, f.err = c.fetch(sku)
		if landed != nil {
			landed()
		}
		close(f.done)
	}()
	return f
}

// cached is sku's description from the cache; ok is false for a miss, and
// for a cache that did not answer.
func (c *productCache) cached(ctx context.Context, sku string) (p catalog.Product, ok bool) {
	if c.rdb == nil {
		return p, false
	}
	var raw []byte
	err := c.guard.Do(ctx, func(ctx context.Context) error {
		var err error
		raw, err = c.rdb.Get(ctx, productKey(sku)).Bytes()
		if errors.Is(err, redis.Nil) {
			return nil // a miss is an answer
		}
		return err
	})
	return p, err == nil && raw != nil && json.Unmarshal(raw, &p) == nil
}

// fetch asks the catalogue for sku within the catalogue timeout, on a
// context of its own (a coalesced request outlives the shopper who
// started it), and keeps what it answered: in the cache for its TTL, and
// in memory for serving stale. It looks in the cache once more first: a
// miss that comes to start a request just after the last one filled the
// cache finds it there.
func (c *productCache) fetch(sku string) (catalog.Product, error) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	if p, ok := c.cached(ctx, sku); ok {
		return p, nil
	}
	var p catalog.Product
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/products/"+url.PathEscape(sku), nil)
	if err != nil {
		return p, err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return p, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return p, err
	}
	if resp.StatusCode != http.StatusOK {
		return p, fmt.Errorf("catalog answered %s", resp.Status)
	}
	if err := json.Unmarshal(body, &p); err != nil {
		return p, fmt.Errorf("catalog: %w", err)
	}
	c.mu.Lock()
	if _, ok := c.last[sku]; ok || len(c.last) < maxStale {
		c.last[sku] = p
	}
	c.mu.Unlock()
	if c.rdb != nil {
		// Best effort: a cache that cannot be written is read as a miss
		// next time.
		_ = c.guard.Do(ctx, func(ctx context.Context) error {
			return c.rdb.Set(ctx, productKey(sku), body, c.ttl).Err()
		})
	}
	return p, nil
}
