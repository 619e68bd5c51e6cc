package gameday

import (
	"testing"
	"time"

	"github.com/gameday-dev/gameday/scenarios"
)

const sec = time.Second

func TestWindows(t *testing.T) {
	w := windows{faults: []span{{10 * sec, 20 * sec, 20 * sec}, {15 * sec, 25 * sec, 25 * sec}}, end: 40 * sec}
	cases := []struct {
		win  scenarios.Window
		at   time.Duration
		want bool
	}{
		{"before", 9 * sec, true},   // before the first fault
		{"before", 10 * sec, false}, // the fault has started
		{"during", 10 * sec, true},  // first instant of the fault
		{"during", 22 * sec, true},  // only the second fault is on
		{"during", 25 * sec, false}, // both ended
		{"after", 24 * sec, false},  // the last fault still on
		{"after", 25 * sec, true},   // after the last fault ended
		{"all", 39 * sec, true},
	}
	for _, c := range cases {
		if got := w.contains(c.win, c.at); got != c.want {
			t.Errorf("%s contains %s = %v, want %v", c.win, c.at, got, c.want)
		}
	}
	if none := (windows{end: 40 * sec}); !none.contains("before", 30*sec) || none.contains("after", 30*sec) {
		t.Error("without faults the whole run is before, nothing after")
	}
}

func TestBreakerExpectation(t *testing.T) {
	faults := []scenarios.Fault{{Name: "slow", Target: "payment"}}
	ft := faultTimes{"slow": {10 * sec, 20 * sec, 20 * sec}}
	trans := map[string][]Transition{"payment": {
		{State: "open", AtMS: 5000}, // an earlier blip does not count
		{State: "closed", AtMS: 6000},
		{State: "open", AtMS: 11500},
		{State: "half-open", AtMS: 14500},
		{State: "open", AtMS: 14600},
		{State: "half-open", AtMS: 21000},
		{State: "closed", AtMS: 23000},
	}}
	cases := []struct {
		state  string
		within time.Duration
		held   bool
		obs    string
	}{
		{"open", 2 * sec, true, "opened after 1.5s"},
		{"open", sec, false, "opened after 1.5s"},
		{"closed", 3 * sec, true, "closed after 3s"},
		{"closed", 2 * sec, false, "closed after 3s"},
	}
	for _, c := range cases {
		r := breakerExpectation(&scenarios.BreakerWithin{Dependency: "payment", Within: scenarios.Duration(c.within)}, c.state, ft, faults, trans)
		if r.Held != c.held || r.Observed != c.obs {
			t.Errorf("%s within %s: held %v (%s), want %v (%s)", c.state, c.within, r.Held, r.Observed, c.held, c.obs)
		}
	}
	r := breakerExpectation(&scenarios.BreakerWithin{Dependency: "inventory", Within: scenarios.Duration(sec)}, "open", ft, faults, trans)
	if r.Held {
		t.Errorf("an expectation on a dependency without a fault held: %+v", r)
	}
}

func TestLatencyAndRatioExpectations(t *testing.T) {
	w := windows{faults: []span{{10 * sec, 20 * sec, 20 * sec}}, end: 30 * sec}
	var shoppers []shopperRun
	for i := range 100 {
		at := time.Duration(i) * 300 * time.Millisecond // 0 to 29.7 s
		lat := 50 * time.Millisecond
		st, out := "confirmed", "confirmed"
		if w.contains("during", at) {
			lat, st, out = time.Duration(i)*time.Millisecond, "unavailable", "unavailable"
		}
		shoppers = append(shoppers, shopperRun{scheduled: at, outcome: out, attempts: []attemptView{{at: at, latency: lat, status: st}}})
	}
	// During the fault: shoppers 34..66, latencies 34..66 ms; p95 is 65 ms.
	r := latencyExpectation(&scenarios.LatencyBound{Window: "during", Percentile: 95, Below: scenarios.Duration(70 * time.Millisecond), Outcomes: []string{"unavailable"}}, shoppers, w)
	if !r.Held || r.Observed != "p95 65ms over 33 requests" {
		t.Errorf("latency: %+v", r)
	}
	r = latencyExpectation(&scenarios.LatencyBound{Window: "during", Percentile: 95, Below: scenarios.Duration(60 * time.Millisecond)}, shoppers, w)
	if r.Held {
		t.Errorf("latency over its bound held: %+v", r)
	}
	least := 0.99
	r = ratioExpectation(&scenarios.RatioBound{Window: "after", Outcomes: []string{"confirmed"}, AtLeast: &least}, shoppers, w)
	if !r.Held || r.Observed != "100.0% (33 of 33)" {
		t.Errorf("ratio after: %+v", r)
	}
	r = ratioExpectation(&scenarios.RatioBound{Window: "all", Outcomes: []string{"confirmed"}, AtLeast: &least}, shoppers, w)
	if r.Held {
		t.Errorf("ratio over all held with a third refused: %+v", r)
	}
}

// The guard aborts only when the bad share over the last second stays
// above the ratio for the whole hold time.
func TestAbortGuard(t *testing.T) {
	g := newAbortGuard(0.5, 2*sec, func() {})
	t0 := time.Now()
	tick := func(at time.Duration, bad, good int) bool {
		for range bad {
			g.observeAt(t0.Add(at), "unavailable")
		}
		for range good {
			g.observeAt(t0.Add(at), "confirmed")
		}
		return g.check(t0.Add(at))
	}
	if tick(0, 9, 1) || tick(sec, 9, 1) {
		t.Fatal("aborted before the condition held for 2s")
	}
	if tick(1500*time.Millisecond, 1, 9) {
		t.Fatal("aborted while the last second was mostly good")
	}
	// Bad again from 2.5 s: the hold restarts there.
	if tick(2500*time.Millisecond, 10, 0) || tick(3500*time.Millisecond, 10, 0) {
		t.Fatal("aborted before 2s of bad since the restart")
	}
	if !tick(4500*time.Millisecond, 10, 0) {
		t.Fatal("did not abort after 2s of bad")
	}
	if g.reason() == "" {
		t.Error("no reason given")
	}
}

// A checkout that hangs finishes nobody: the guard keeps holding through
// empty seconds and aborts.
func TestAbortGuardSeesAHang(t *testing.T) {
	g := newAbortGuard(0.5, 2*sec, func() {})
	t0 := time.Now()
	for range 10 {
		g.observeAt(t0, "gave_up")
	}
	if g.check(t0) {
		t.Fatal("aborted at once")
	}
	if g.check(t0.Add(1500 * time.Millisecond)) {
		t.Fatal("aborted before the hold")
	}
	if !g.check(t0.Add(2500 * time.Millisecond)) {
		t.Fatal("a hang (no shopper finishing) did not abort")
	}
}

// A killed container is started at "lifted" and reachable again (by the
// checkout, through the engine's network) at "to": the promise counts from
// "to", when the checkout could have known, and a breaker whose probe got
// through in between closed with the dependency's return.
func TestBreakerClosesMeasuredFromTheReturn(t *testing.T) {
	faults := []scenarios.Fault{{Name: "crash", Target: "payment"}}
	ft := faultTimes{"crash": {10 * sec, 18 * sec, 20 * sec}}
	for _, c := range []struct {
		closedMS int64
		held     bool
		observed string
	}{
		{19200, true, "closed after 0s"},   // between the lift and the return
		{21500, true, "closed after 1.5s"}, // after the return, within 2s
		{23000, false, "closed after 3s"},  // too late
		{17000, false, "it never closed"},  // before the lift: not this recovery
	} {
		trans := map[string][]Transition{"payment": {
			{State: "open", AtMS: 10100},
			{State: "half-open", AtMS: c.closedMS - 200},
			{State: "closed", AtMS: c.closedMS},
		}}
		r := breakerExpectation(&scenarios.BreakerWithin{Dependency: "payment", Within: scenarios.Duration(2 * sec)}, "closed", ft, faults, trans)
		if r.Held != c.held || r.Observed != c.observed {
			t.Errorf("closed at %dms: held %v (%s), want %v (%s)", c.closedMS, r.Held, r.Observed, c.held, c.observed)
		}
	}
}
