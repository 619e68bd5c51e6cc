// Package catalog is the catalogue stand-in: the origin the reference
// checkout's product page is cached in front of (docs/checkout.md). It is
// slower than the cache, by a latency drawn from its seed, and it has a
// capacity: it takes at most Capacity requests a second and refuses the
// rest at once (503, as an origin that sheds load does), so that a cache
// whose every request misses at once — flushed at the peak, its hot keys
// expired together — is seen in what the origin took and refused.
//
//   - GET /products/{sku}: the product's description, after the latency;
//     503 {"status":"overloaded"} with Retry-After past the capacity.
//   - GET /stats: {"requests","served","shed"}, counted since the start:
//     what a system file's counter reads (origin_requests).
//   - GET /healthz: 200.
package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Config is how the stand-in behaves. The zero value answers at once and
// takes every request.
type Config struct {
	// MinLatency and MaxLatency bound an answer's latency, drawn uniformly
	// from the seed and the request's number; MaxLatency below MinLatency
	// is an error.
	MinLatency, MaxLatency time.Duration
	// Capacity is the requests a second the origin takes (counted over
	// the current second); past it a request is refused at once. 0: no
	// limit.
	Capacity int
	// Seed seeds the latencies.
	Seed int64
}

// Validate names the first setting that cannot work.
func (c Config) Validate() error {
	switch {
	case c.MinLatency < 0 || c.MaxLatency < 0:
		return errors.New("latencies must not be negative")
	case c.MaxLatency < c.MinLatency:
		return fmt.Errorf("max latency %s is below min latency %s", c.MaxLatency, c.MinLatency)
	case c.Capacity < 0:
		return fmt.Errorf("capacity %d must not be negative (0: no limit)", c.Capacity)
	}
	return nil
}

// Server is the stand-in's HTTP handler.
type Server struct {
	cfg Config
	mux *http.ServeMux

	n            atomic.Int64 // requests for products, in order
	served, shed atomic.Int64
	mu           sync.Mutex
	second       int64 // the Unix second counted
	inSecond     int   // requests taken in it
	now          func() time.Time
}

// New returns a stand-in configured by cfg.
func New(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, mux: http.NewServeMux(), now: time.Now}
	s.mux.HandleFunc("GET /products/{sku}", s.product)
	s.mux.HandleFunc("GET /stats", s.stats)
	s.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	return s, nil
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Stats is what the origin has taken since it started.
type Stats struct {
	// Requests is every request for a product, refused ones included:
	// the origin's load.
	Requests int64 `json:"requests"`
	Served   int64 `json:"served"`
	Shed     int64 `json:"shed"`
}

// Stats counts what the origin took so far.
func (s *Server) Stats() Stats {
	served, shed := s.served.Load(), s.shed.Load()
	return Stats{Requests: served + shed, Served: served, Shed: shed}
}

// take counts a request against the current second's capacity.
func (s *Server) take() bool {
	if s.cfg.Capacity == 0 {
		return true
	}
	sec := s.now().Unix()
	s.mu.Lock()
	defer s.mu.Unlock()
	if sec != s.second {
		s.second, s.inSecond = sec, 0
	}
	if s.inSecond >= s.cfg.Capacity {
		return false
	}
	s.inSecond++
	return true
}

// Product is the catalogue's answer for a SKU.
type Product struct {
	SKU         string `json:"sku"`
	Name        string `json:"name"`
	Description string `json:"description"`
}

func (s *Server) product(w http.ResponseWriter, r *http.Request) {
	sku := r.PathValue("sku")
	i := s.n.Add(1)
	if !s.take() {
		s.shed.Add(1)
		w.Header().Set("Retry-After", "1")
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "overloaded"})
		return
	}
	s.served.Add(1)
	if d := s.latency(i); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	writeJSON(w, http.StatusOK, Product{SKU: sku, Name: "Product " + sku, Description: describe(sku)})
}

// latency is request i's, drawn from the seed and i.
func (s *Server) latency(i int64) time.Duration {
	lo, hi := s.cfg.MinLatency, s.cfg.MaxLatency
	if hi <= lo {
		return lo
	}
	rng := rand.New(rand.NewPCG(uint64(s.cfg.Seed), uint64(i)))
	return lo + time.Duration(rng.Int64N(int64(hi-lo)+1))
}

// describe is a SKU's description: a paragraph of about a kilobyte, the
// same for the same SKU, so that a cached page has the size of a real
// one.
func describe(sku string) string {
	h := fnv.New64a()
	h.Write([]byte(sku))
	rng := rand.New(rand.NewPCG(h.Sum64(), 0))
	words := []string{"sturdy", "light", "warm", "limited", "edition", "cotton", "steel", "hand-made", "classic", "new", "season", "colour", "fit", "size"}
	var b strings.Builder
	for b.Len() < 1000 {
		b.WriteString(words[rng.IntN(len(words))])
		b.WriteByte(' ')
	}
	return strings.TrimSpace(b.String())
}

func (s *Server) stats(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.Stats())
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
