package gameday

import (
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
