package gameday

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/judge"
	"github.com/gameday-dev/gameday/scenarios"
)

// The monitor keeps the worst stall of each tenth of a second, so a
// window can be asked whether the runner stalled in it.
func TestHostMonitorStarvedWindows(t *testing.T) {
	t0 := time.Unix(1000, 0)
	m := &hostMonitor{start: t0}
	m.tick(t0.Add(50*time.Millisecond), 2*time.Millisecond)
	m.tick(t0.Add(1200*time.Millisecond), 150*time.Millisecond)
	m.tick(t0.Add(2500*time.Millisecond), 99*time.Millisecond)
	for _, c := range []struct {
		from, to time.Duration
		starved  bool
		worst    time.Duration
	}{
		{0, time.Second, false, 2 * time.Millisecond},                    // a small stall only
		{time.Second, 2 * time.Second, true, 150 * time.Millisecond},     // the long one
		{2 * time.Second, 3 * time.Second, false, 99 * time.Millisecond}, // just under the bar
		{1300 * time.Millisecond, 2 * time.Second, false, 0},             // after it
		{0, 10 * time.Second, true, 150 * time.Millisecond},              // the whole run
	} {
		starved, worst := m.starved(c.from, c.to)
		if starved != c.starved || worst != c.worst {
			t.Errorf("[%s, %s): starved %v worst %s, want %v %s", c.from, c.to, starved, worst, c.starved, c.worst)
		}
	}
	h := m.record()
	if h.StallMaxMS != 150 || len(h.Stalls) != 2 || h.Stalls[0].AtMS != 1200 {
		t.Errorf("record: %+v", h)
	}
}

// A timing promise that failed while the runner was starved in its window
// is the machine's; one that failed in a window where the runner kept up,
// or a broken book, is the system's.
func TestStarvedFailuresExcuseOnlyTimingInStarvedWindows(t *testing.T) {
	fault := scenarios.Fault{Name: "crash", Target: "payment"}
	sc := &scenarios.Scenario{Faults: []scenarios.Fault{fault}, Expect: []scenarios.Expectation{
		{Latency: &scenarios.LatencyBound{Window: "during", Percentile: 99, Below: scenarios.Duration(300 * time.Millisecond)}},
		{Ratio: &scenarios.RatioBound{Window: "after", Outcomes: []string{"confirmed"}}},
	}}
	w := judge.Windows{Faults: []judge.Span{{From: 5 * sec, Lifted: 7 * sec, To: 8 * sec}}, End: 20 * sec}
	ft := judge.FaultTimes{"crash": w.Faults[0]}
	t0 := time.Unix(1000, 0)
	failed := []ExpectationResult{{Promise: "p99 during", Held: false, Observed: "p99 690ms"}, {Promise: "ratio after", Held: true}}
	for _, c := range []struct {
		name    string
		stallAt time.Duration
		checks  []ExpectationResult
		starved int
		others  int
	}{
		{"stall during the fault", 6 * sec, nil, 1, 0},
		{"stall before the fault", 2 * sec, nil, 0, 1},
		{"stall during, books broken", 6 * sec, []ExpectationResult{{Promise: "oversold is at most 0", Invariant: "oversold", Observed: "3"}}, 1, 1},
		{"stall, dropped arrivals", 12 * sec, []ExpectationResult{{Promise: "dropped is at most 0", Invariant: "dropped", Observed: "4"}}, 1, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := &hostMonitor{start: t0}
			m.tick(t0.Add(c.stallAt), 180*time.Millisecond)
			starved, others := judge.Starved(sc, failed, c.checks, w, ft, m.starved)
			if len(starved) != c.starved || others != c.others {
				t.Fatalf("starved %q, others %d; want %d and %d", starved, others, c.starved, c.others)
			}
			if len(starved) > 0 && !strings.Contains(starved[0], "stalled 180ms") {
				t.Errorf("no evidence in %q", starved[0])
			}
		})
	}
}

// The CPU pressure is read once a tenth of a second, from a file kept
// open, and what it grew by is the pressure of the tenths it covers: a
// window asks for the pressure of its own tenths.
func TestHostMonitorPressureByBucket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu")
	write := func(total int) {
		t.Helper()
		if err := os.WriteFile(path, []byte(fmt.Sprintf("some avg10=0.00 avg60=0.00 avg300=0.00 total=%d\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", total)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(1_000_000)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	t0 := time.Unix(1000, 0)
	m := &hostMonitor{start: t0, now: func() time.Time { return t0.Add(time.Second) }, psi: true, psiF: f, psiFD: int(f.Fd()), psi0: 1_000_000, psiLast: 1_000_000, psiAt: t0}
	tick := func(at time.Duration) { m.tick(t0.Add(at), 0) }
	write(1_050_000) // 50 ms of pressure in the first tenth
	tick(10 * time.Millisecond)
	tick(90 * time.Millisecond) // still the first tenth: not read
	tick(105 * time.Millisecond)
	write(1_110_000) // then 60 ms over the next three tenths (a stalled runner)
	tick(410 * time.Millisecond)
	write(1_110_000) // and none
	tick(510 * time.Millisecond)
	for _, c := range []struct {
		from, to time.Duration
		want     float64
	}{
		{0, 100 * time.Millisecond, 0.5},
		{100 * time.Millisecond, 400 * time.Millisecond, 0.2},
		{400 * time.Millisecond, 500 * time.Millisecond, 0},
		{0, 500 * time.Millisecond, 0.22},
	} {
		if got, ok := m.pressure(c.from, c.to); !ok || math.Abs(got-c.want) > 1e-9 {
			t.Errorf("pressure [%s, %s) = %v %v, want %v", c.from, c.to, got, ok, c.want)
		}
	}
	if h := m.record(); h.CPUPressurePct == nil || *h.CPUPressurePct != 21.6 {
		t.Errorf("record: %v %%, want 21.6 (110 ms over the 510 ms read)", h.CPUPressurePct)
	}
}
