package testenv

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/load"
)

// Waiting is what a run of shoppers held waiting cost the process that ran
// them.
type Waiting struct {
	// Shoppers is how many waited at once.
	Shoppers int
	// Heap and Stack are the growth of the heap and of goroutine stacks in
	// use (after a GC) while they all waited, in bytes.
	Heap, Stack float64
	// RSS0 and RSS are the process's resident memory before the run and
	// while they all waited; 0 where /proc does not say.
	RSS0, RSS int64
}

// HoldWaiting runs n shoppers (arriving over 2 s, or at most 10,000 a
// second) at t, calls waiting until all of them wait, measures, calls held
// with the figures while they still wait, then releases them and checks
// that every one of them was confirmed. The run has ended when it returns,
// whatever the error.
func HoldWaiting(n int, t load.Target, waiting func() error, held func(Waiting), release func() error) (Waiting, error) {
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
	w := Waiting{Shoppers: n, RSS0: ResidentBytes("self")}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var rep *load.Report
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		rep, err = load.Run(ctx, plan, t, load.Options{})
	}()
	if werr := waiting(); werr != nil {
		// Let the shoppers go, so that nothing outlives the call.
		_ = release()
		cancel()
		<-done
		return w, werr
	}
	runtime.GC()
	runtime.ReadMemStats(&during)
	w.RSS = ResidentBytes("self")
	w.Heap = float64(during.HeapInuse) - float64(before.HeapInuse)
	w.Stack = float64(during.StackInuse) - float64(before.StackInuse)
	if held != nil {
		held(w)
	}
	rerr := release()
	if rerr != nil {
		cancel()
	}
	<-done
	switch {
	case rerr != nil:
		return w, fmt.Errorf("release: %w", rerr)
	case err != nil:
		return w, fmt.Errorf("run: %w", err)
	case rep.Started != n || rep.Outcomes()[load.OutcomeConfirmed] != n:
		return w, fmt.Errorf("started %d, outcomes %v; want %d confirmed", rep.Started, rep.Outcomes(), n)
	}
	return w, nil
}

// MeasureWaiting runs n shoppers at t as HoldWaiting does, in this
// process, and reports what they cost it.
func MeasureWaiting(b *testing.B, n int, t load.Target, waiting, release func()) {
	w, err := HoldWaiting(n, t, func() error { waiting(); return nil }, nil, func() error { release(); return nil })
	if err != nil {
		b.Fatal(err)
	}
	ReportWaiting(b, w)
	if w.RSS > 0 {
		// What 30,000 would take: the process before the run, and each
		// shopper's part of the growth.
		per := float64(w.RSS-w.RSS0) / float64(n)
		b.ReportMetric((float64(w.RSS0)+30_000*per)/(1<<20), "rss-MiB-30k")
	}
}

// ReportWaiting reports w's figures: heap and stack a shopper, their sum,
// the resident memory while the shoppers waited, and how many waited.
func ReportWaiting(b *testing.B, w Waiting) {
	b.ReportMetric(w.Heap/float64(w.Shoppers), "bytes/shopper")
	b.ReportMetric(w.Stack/float64(w.Shoppers), "stack-bytes/shopper")
	b.ReportMetric((w.Heap+w.Stack)/(1<<20), "MiB-total")
	if w.RSS > 0 {
		b.ReportMetric(float64(w.RSS)/(1<<20), "rss-MiB")
	}
	b.ReportMetric(float64(w.Shoppers), "shoppers")
}

// ResidentBytes is the resident memory (VmRSS) of the process pid ("self"
// for this one), 0 where /proc does not say.
func ResidentBytes(pid string) int64 {
	b, err := os.ReadFile("/proc/" + pid + "/status")
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
