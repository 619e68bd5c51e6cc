package testenv

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/load"
)

// MeasureWaiting runs n shoppers (arriving over 2 s, or at most 10,000 a
// second) at t, waits until all
// of them wait (waiting), measures, releases them and checks the run.
func MeasureWaiting(b *testing.B, n int, t load.Target, waiting, release func()) {
	plan := load.Plan{
		// A ramp of area n, at most 10,000 arrivals/s at its top: a
		// surge of connections faster than that overflows the
		// server's accept queue.
		Stages:      []load.Stage{{Duration: max(2*time.Second, time.Duration(n)*time.Second/5000), Target: float64(min(n, 10_000))}},
		Patience:    2 * time.Minute,
		MaxShoppers: n,
		Seed:        1,
		IDPrefix:    "mem",
	}
	var before, during runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	rss0 := residentBytes()
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
	rss := residentBytes()
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
	if rss > 0 {
		b.ReportMetric(float64(rss)/(1<<20), "rss-MiB")
		// What 30,000 would take: the process before the run, and each
		// shopper's part of the growth.
		per := float64(rss-rss0) / float64(n)
		b.ReportMetric((float64(rss0)+30_000*per)/(1<<20), "rss-MiB-30k")
	}
	b.ReportMetric(float64(n), "shoppers")
}

// residentBytes is this process's resident memory (VmRSS), 0 where
// /proc does not say.
func residentBytes() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
