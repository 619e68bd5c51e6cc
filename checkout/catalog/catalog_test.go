package catalog

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// Past its capacity in a second the catalogue refuses at once (503 with
// Retry-After), and counts what it took and what it refused.
func TestCapacityShedsAndCounts(t *testing.T) {
	s, err := New(Config{Capacity: 3})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1000, 0)
	s.now = func() time.Time { return now }
	get := func() *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/products/sku-1", nil))
		return w
	}
	for i := range 5 {
		w := get()
		want := http.StatusOK
		if i >= 3 {
			want = http.StatusServiceUnavailable
		}
		if w.Code != want || (want == http.StatusServiceUnavailable && w.Header().Get("Retry-After") == "") {
			t.Errorf("request %d in one second: %d (Retry-After %q), want %d", i, w.Code, w.Header().Get("Retry-After"), want)
		}
	}
	now = now.Add(time.Second)
	if w := get(); w.Code != http.StatusOK {
		t.Errorf("the next second: %d", w.Code)
	}
	if st := s.Stats(); st != (Stats{Requests: 6, Served: 4, Shed: 2}) {
		t.Errorf("stats %+v", st)
	}
}

// Latencies are drawn from the seed and the request's number: the same
// seed gives the same latencies, within the bounds.
func TestLatencyIsSeeded(t *testing.T) {
	cfg := Config{MinLatency: 10 * time.Millisecond, MaxLatency: 50 * time.Millisecond, Seed: 7}
	a, _ := New(cfg)
	b, _ := New(cfg)
	for i := range int64(100) {
		la, lb := a.latency(i), b.latency(i)
		if la != lb || la < cfg.MinLatency || la > cfg.MaxLatency {
			t.Fatalf("request %d: %s and %s", i, la, lb)
		}
	}
	if _, err := New(Config{MinLatency: time.Second, MaxLatency: time.Millisecond}); err == nil {
		t.Error("max below min accepted")
	}
}
