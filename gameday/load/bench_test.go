package load_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/gameday-dev/gameday/gameday/load"
	"github.com/gameday-dev/gameday/internal/testenv"
)

// The generator's own memory: a waiting shopper holds its pool goroutine,
// its record and the report's. The HTTP side (a described system's
// requests, beside vegeta's, and a shopper waiting on a connection) is
// measured in gameday/system, where requests are built:
//
//	go test -run '^$' -bench . -benchtime 1x ./gameday/load/ ./gameday/system/

// BenchmarkMemoryPerWaitingShopper holds 20,000 shoppers waiting on a
// Target that blocks and measures the heap in use (after a GC) per waiting
// shopper. Goroutine stacks are not heap; they are reported apart.
func BenchmarkMemoryPerWaitingShopper(b *testing.B) {
	const n = 20_000
	for range b.N {
		var held atomic.Int64
		all, release := make(chan struct{}), make(chan struct{})
		t := TargetFunc(func(ctx context.Context, _ *Call) (Answer, error) {
			if held.Add(1) == n {
				close(all)
			}
			select {
			case <-release:
				return Answer{Code: 200, Means: MeansConfirmed}, nil
			case <-ctx.Done():
				return Answer{}, ctx.Err()
			}
		})
		testenv.MeasureWaiting(b, n, t, func() { <-all }, func() { close(release) })
	}
}

// BenchmarkAnswerDelivery measures what AnswerGrace must cover: the time
// from a checkout writing its answer to the shopper having read it, on
// loopback, through the generator's own client, with 64 shoppers asking
// at once (a peak drill's concurrency). The server stamps the instant it
// writes; the client reads the stamp when the answer is in. p50, p99,
// p99.9 and max are reported in µs.
//
//	go test -run '^$' -bench AnswerDelivery -benchtime 1x ./gameday/load/
func BenchmarkAnswerDelivery(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Sent", strconv.FormatInt(time.Now().UnixNano(), 10))
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":"confirmed","checkout_id":"run-1"}`)
	}))
	defer srv.Close()
	hc := NewClient()
	const shoppers, each = 64, 500
	var all []time.Duration
	for b.Loop() {
		delays := make([][]time.Duration, shoppers)
		var wg sync.WaitGroup
		for s := range shoppers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range each {
					resp, err := hc.Post(srv.URL, "application/json", strings.NewReader(`{"checkout_id":"run-1"}`))
					if err != nil {
						b.Error(err)
						return
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					got := time.Now()
					sent, _ := strconv.ParseInt(resp.Header.Get("X-Sent"), 10, 64)
					delays[s] = append(delays[s], got.Sub(time.Unix(0, sent)))
				}
			}()
		}
		wg.Wait()
		for _, d := range delays {
			all = append(all, d...)
		}
	}
	slices.Sort(all)
	at := func(p float64) float64 { return float64(all[int(p*float64(len(all)-1))].Microseconds()) }
	b.ReportMetric(at(0.5), "p50-µs")
	b.ReportMetric(at(0.99), "p99-µs")
	b.ReportMetric(at(0.999), "p99.9-µs")
	b.ReportMetric(at(1), "max-µs")
}
