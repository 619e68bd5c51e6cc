package gameday_test

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday"
	"github.com/gameday-dev/gameday/gameday/faults"
	"github.com/gameday-dev/gameday/gameday/system"
	"github.com/gameday-dev/gameday/internal/testenv"
	"github.com/gameday-dev/gameday/scenarios"
)

// promShop is a checkout that answers every purchase and exposes two
// gauges a real Prometheus scrapes: its error ratio and its breaker's
// state, each set by the test.
type promShop struct {
	srv     *httptest.Server
	errors  atomic.Uint64 // math.Float64bits
	breaker atomic.Int64  // 0 closed, 2 open
}

func newPromShop(t *testing.T) *promShop {
	s := &promShop{}
	s.errors.Store(math.Float64bits(0.01))
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" {
			fmt.Fprintf(w, "# TYPE shop_error_ratio gauge\nshop_error_ratio %g\n# TYPE shop_breaker gauge\nshop_breaker{dependency=\"gateway\"} %d\n",
				math.Float64frombits(s.errors.Load()), s.breaker.Load())
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(201)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *promShop) drill(t *testing.T, prom, expectAndAbort string, during func()) *gameday.Record {
	t.Helper()
	sys, err := system.Parse("prom.yaml", []byte(fmt.Sprintf(`
name: prom-shop
base_url: %s
sku: s
purchase: {steps: [{url: /buy, answers: [{status: 201, outcome: confirmed}]}]}
prometheus: %s
breakers: {promql: {query: 'shop_breaker', label: dependency}}
`, s.srv.URL, prom)), nil)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenarios.Parse("prom-drill.yaml", []byte("name: prom-drill\nmatrix: {dependency: none, failure: baseline}\nstock: 5\nload:\n  stages: [{duration: 9s, target: 10}]\n"+expectAndAbort))
	if err != nil {
		t.Fatal(err)
	}
	go func() { time.Sleep(3 * time.Second); during() }()
	rec, _, err := gameday.Run(context.Background(), sc, gameday.Options{System: sys, RunsDir: t.TempDir(),
		Journal: faults.OpenJournal(filepath.Join(t.TempDir(), "j.json"))})
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// PromQL against a real Prometheus: a promise over a window holds while
// the metric does, breakers are read from a query (white-box without an
// admin API), and a halt condition stops the drill, inconclusive, and says
// why.
func TestPromQLPromisesHaltsAndBreakers(t *testing.T) {
	s := newPromShop(t)
	prom := testenv.PrometheusServer(t, strings.TrimPrefix(s.srv.URL, "http://"))
	// Wait for the first scrape.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		resp, err := http.Get(prom + "/api/v1/query?query=shop_error_ratio")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if strings.Contains(string(b), `"result":[{`) {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("prometheus never scraped the shop")
		}
	}
	t.Run("promise and breaker", func(t *testing.T) {
		rec := s.drill(t, prom, "expect:\n  - metric: {query: shop_error_ratio, window: all, below: 0.05}\n",
			func() { s.breaker.Store(2) })
		if rec.Verdict != gameday.VerdictPass || len(rec.Expectations) != 1 || !strings.Contains(rec.Expectations[0].Observed, "samples (0 outside)") {
			t.Fatalf("verdict %s: %s; %+v", rec.Verdict, rec.Reason, rec.Expectations)
		}
		tr := rec.Breakers["gateway"].Transitions
		if len(tr) == 0 || tr[len(tr)-1].State != "open" || tr[len(tr)-1].AtMS < 3000 {
			t.Errorf("gateway breaker from PromQL: %+v, want it open after 3s", tr)
		}
	})
	t.Run("halt", func(t *testing.T) {
		s.breaker.Store(0)
		rec := s.drill(t, prom, "abort: {metric: {query: shop_error_ratio, above: 0.5}, for: 2s}\n",
			func() { s.errors.Store(math.Float64bits(0.9)) })
		if rec.Verdict != gameday.VerdictInconclusive || !strings.Contains(rec.Reason, "aborted by the halt condition: shop_error_ratio was 0.9") {
			t.Fatalf("verdict %s: %s", rec.Verdict, rec.Reason)
		}
		if rec.Load.Started >= rec.Load.Scheduled {
			t.Errorf("the load was not stopped: %+v", rec.Load)
		}
	})
}
