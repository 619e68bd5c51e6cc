package testenv

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/load"
)

// MeasureWaiting runs n shoppers (arriving over 2 s) at t, waits until all
// of them wait (waiting), measures, releases them and checks the run.
func MeasureWaiting(b *testing.B, n int, t load.Target, waiting, release func()) {
	plan := load.Plan{
		Stages:      []load.Stage{{Duration: 2 * time.Second, Target: float64(n)}}, // a ramp of area n
		Patience:    2 * time.Minute,
		MaxShoppers: n,
		Seed:        1,
		IDPrefix:    "mem",
	}
	var before, during runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var rep *load.Report
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		rep, err = load.Run(context.Background(), plan, t, load.Options{})
	}()
	waiting()
	runtime.GC()
	runtime.ReadMemStats(&during)
	release()
	<-done
	if err != nil {
		b.Fatalf("Run: %v", err)
	}
	if rep.Started != n || rep.Outcomes()[load.OutcomeConfirmed] != n {
		b.Fatalf("started %d, outcomes %v; want %d confirmed", rep.Started, rep.Outcomes(), n)
	}
	heap := float64(during.HeapInuse) - float64(before.HeapInuse)
	stack := float64(during.StackInuse) - float64(before.StackInuse)
	b.ReportMetric(heap/float64(n), "bytes/shopper")
	b.ReportMetric(stack/float64(n), "stack-bytes/shopper")
	b.ReportMetric((heap+stack)/(1<<20), "MiB-total")
	b.ReportMetric(float64(n), "shoppers")
}
