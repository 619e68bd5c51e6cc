package judge

import (
	"fmt"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/runrecord"
	"github.com/gameday-dev/gameday/scenarios"
)

const sec = time.Second

func TestWindows(t *testing.T) {
	w := Windows{Faults: []Span{{10 * sec, 20 * sec, 20 * sec}, {15 * sec, 25 * sec, 25 * sec}}, End: 40 * sec}
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
		if got := w.Contains(c.win, c.at); got != c.want {
			t.Errorf("%s contains %s = %v, want %v", c.win, c.at, got, c.want)
		}
	}
	if none := (Windows{End: 40 * sec}); !none.Contains("before", 30*sec) || none.Contains("after", 30*sec) {
		t.Error("without faults the whole run is before, nothing after")
	}
}

func TestBreakerExpectation(t *testing.T) {
	faults := []scenarios.Fault{{Name: "slow", Target: "payment"}}
	ft := FaultTimes{"slow": {10 * sec, 20 * sec, 20 * sec}}
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
	w := Windows{Faults: []Span{{10 * sec, 20 * sec, 20 * sec}}, End: 30 * sec}
	var shoppers []Shopper
	for i := range 100 {
		at := time.Duration(i) * 300 * time.Millisecond // 0 to 29.7 s
		lat := 50 * time.Millisecond
		st, out := "confirmed", Confirmed
		if w.Contains("during", at) {
			lat, st, out = time.Duration(i)*time.Millisecond, "unavailable", Unavailable
		}
		shoppers = append(shoppers, Shopper{Scheduled: at, Outcome: out, Attempts: []Attempt{{At: at, Latency: lat, Status: st}}})
	}
	// During the fault: shoppers 34..66, latencies 34..66 ms; p95 is 65 ms.
	r := latencyExpectation(&scenarios.LatencyBound{Window: "during", Percentile: 95, Below: scenarios.Duration(70 * time.Millisecond), Outcomes: []string{"unavailable"}}, shoppers, w, "")
	if !r.Held || r.Observed != "p95 65ms over 33 requests" {
		t.Errorf("latency: %+v", r)
	}
	r = latencyExpectation(&scenarios.LatencyBound{Window: "during", Percentile: 95, Below: scenarios.Duration(60 * time.Millisecond)}, shoppers, w, "")
	if r.Held {
		t.Errorf("latency over its bound held: %+v", r)
	}
	least := 0.99
	r = ratioExpectation(&scenarios.RatioBound{Window: "after", Outcomes: []string{"confirmed"}, AtLeast: &least}, shoppers, w, "")
	if !r.Held || r.Observed != "100.0% (33 of 33)" {
		t.Errorf("ratio after: %+v", r)
	}
	r = ratioExpectation(&scenarios.RatioBound{Window: "all", Outcomes: []string{"confirmed"}, AtLeast: &least}, shoppers, w, "")
	if r.Held {
		t.Errorf("ratio over all held with a third refused: %+v", r)
	}
}

// A purchase's latency runs from its scheduled arrival to its final answer,
// every poll included: an asynchronous checkout whose polls answer in 2 ms
// and whose purchases take seconds fails a purchase promise that a request
// promise passes.
func TestPurchaseLatency(t *testing.T) {
	w := Windows{Faults: []Span{{10 * sec, 20 * sec, 20 * sec}}, End: 30 * sec}
	var shoppers []Shopper
	for i := range 20 {
		at := 10*sec + time.Duration(i)*500*time.Millisecond // all during the fault
		s := Shopper{Scheduled: at, Outcome: Confirmed}
		if i%5 == 4 {
			s.Outcome = GaveUp
		}
		// Placed, then polled every 300 ms, each answer in 2 ms, the last
		// one 1 s + i×100 ms after the arrival.
		for k := time.Duration(0); k*300*time.Millisecond < sec+time.Duration(i)*100*time.Millisecond; k++ {
			s.Attempts = append(s.Attempts, Attempt{At: at + k*300*time.Millisecond, Latency: 2 * time.Millisecond, Status: "retry_later"})
		}
		s.Finished = at + sec + time.Duration(i)*100*time.Millisecond
		shoppers = append(shoppers, s)
	}
	bound := func(of string, below time.Duration, outcomes ...string) *scenarios.LatencyBound {
		return &scenarios.LatencyBound{Window: "during", Percentile: 95, Below: scenarios.Duration(below), Outcomes: outcomes, Of: of}
	}
	if r := latencyExpectation(bound("", 100*time.Millisecond), shoppers, w, ""); !r.Held {
		t.Errorf("the polls' latency: %+v", r)
	}
	// Confirmed: i = 0..18 but 4, 9, 14: 16 purchases of 1.0 s to 2.8 s;
	// p95 is the 16th, i = 18, 2.8 s.
	r := latencyExpectation(bound(scenarios.LatencyOfPurchases, 2*sec, "confirmed"), shoppers, w, "")
	want := "p95 of confirmed purchases arriving during the fault, first request to final answer, stays under 2s"
	if r.Held || r.Promise != want || r.Observed != "p95 2.8s over 16 purchases" {
		t.Errorf("purchases:\n%+v\nwant promise %q", r, want)
	}
	if r := latencyExpectation(bound(scenarios.LatencyOfPurchases, 3*sec), shoppers, w, ""); !r.Held || r.Observed != "p95 2.8s over 20 purchases" {
		t.Errorf("every purchase: %+v", r)
	}
	if r := latencyExpectation(&scenarios.LatencyBound{Window: "before", Percentile: 95, Below: scenarios.Duration(sec), Of: scenarios.LatencyOfPurchases}, shoppers, w, ""); r.Held || r.Observed != "no such purchases" {
		t.Errorf("no purchases: %+v", r)
	}
}

// A killed container is started at "lifted" and reachable again (by the
// checkout, through the engine's network) at "to": the promise counts from
// "to", when the checkout could have known, and a breaker whose probe got
// through in between closed with the dependency's return.
func TestBreakerClosesMeasuredFromTheReturn(t *testing.T) {
	faults := []scenarios.Fault{{Name: "crash", Target: "payment"}}
	ft := FaultTimes{"crash": {10 * sec, 18 * sec, 20 * sec}}
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

// The breakers' records: a breaker behind a fault gets how long it took to
// open after the fault's start and to close after its end; one behind no
// fault only its transitions; one that never closed again no close.
func TestBreakerRecords(t *testing.T) {
	faults := []scenarios.Fault{{Name: "crash", Target: "payment"}, {Name: "slow", Target: "inventory"}}
	ft := FaultTimes{"crash": {From: 10 * sec, Lifted: 18 * sec, To: 20 * sec}, "slow": {From: 5 * sec, Lifted: 9 * sec, To: 9 * sec}}
	trans := map[string][]Transition{
		"payment":   {{State: "open", AtMS: 10250}, {State: "half-open", AtMS: 21000}, {State: "closed", AtMS: 21400}},
		"inventory": {{State: "open", AtMS: 5100}},
		"sessions":  {{State: "open", AtMS: 1000}, {State: "closed", AtMS: 2000}},
	}
	got := Breakers(trans, faults, ft)
	ms := func(p *int64) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprint(*p)
	}
	for dep, want := range map[string][2]string{"payment": {"250", "1400"}, "inventory": {"100", "-"}, "sessions": {"-", "-"}} {
		b := got[dep]
		if ms(b.OpenedAfterMS) != want[0] || ms(b.ClosedAfterMS) != want[1] || len(b.Transitions) != len(trans[dep]) {
			t.Errorf("%s: opened after %s, closed after %s, %d transitions; want %s, %s, %d", dep, ms(b.OpenedAfterMS), ms(b.ClosedAfterMS), len(b.Transitions), want[0], want[1], len(trans[dep]))
		}
	}
}

// A metric promise with no sampler is "not sampled"; with a sampler that
// took nothing in its window, "no sample in that window"; with samples,
// judged on every one of them, and a sample that could not be read says
// so. One that could not be observed is not checked — neither held nor
// broken, and the run inconclusive — unless a sample that was read broke
// it: before, a Prometheus that did not answer failed the run.
func TestMetricPromises(t *testing.T) {
	below := 0.5
	sc := &scenarios.Scenario{Expect: []scenarios.Expectation{{Metric: &scenarios.MetricBound{Query: "errors", Window: "during", Below: &below}}}}
	w := Windows{Faults: []Span{{From: 10 * sec, Lifted: 20 * sec, To: 20 * sec}}, End: 30 * sec}
	refused := fmt.Errorf("connection refused")
	for _, c := range []struct {
		name       string
		samples    map[string][]Sample
		held       bool
		notChecked bool
		observed   string
		verdict    Verdict
	}{
		{"no sampler", nil, false, true, "not sampled", runrecord.VerdictInconclusive},
		{"nothing in the window", map[string][]Sample{"errors": {{At: 5 * sec, V: 0.1}}}, false, true, "no sample in that window", runrecord.VerdictInconclusive},
		{"held", map[string][]Sample{"errors": {{At: 12 * sec, V: 0.1}, {At: 15 * sec, V: 0.4}}}, true, false, "0.1 to 0.4 over 2 samples (0 outside)", runrecord.VerdictPass},
		{"broken", map[string][]Sample{"errors": {{At: 12 * sec, V: 0.1}, {At: 15 * sec, V: 0.9}}}, false, false, "0.1 to 0.9 over 2 samples (1 outside)", runrecord.VerdictFail},
		{"unreadable", map[string][]Sample{"errors": {{At: 12 * sec, Err: refused}}}, false, true, "1 could not be read: connection refused", runrecord.VerdictInconclusive},
		{"partly unreadable", map[string][]Sample{"errors": {{At: 12 * sec, V: 0.1}, {At: 15 * sec, Err: refused}}}, false, true, "0.1 to 0.1 over 1 samples (0 outside); 1 could not be read: connection refused", runrecord.VerdictInconclusive},
		{"the series gone", map[string][]Sample{"errors": {{At: 12 * sec, V: 0.1}, {At: 15 * sec, Err: fmt.Errorf("no single value: gave 0 series"), NoValue: true}}}, false, false, "0.1 to 0.1 over 1 samples (0 outside); 1 without a value: no single value: gave 0 series", runrecord.VerdictFail},
		{"broken, partly unreadable", map[string][]Sample{"errors": {{At: 12 * sec, V: 0.9}, {At: 15 * sec, Err: refused}}}, false, false, "0.9 to 0.9 over 1 samples (1 outside); 1 could not be read: connection refused", runrecord.VerdictFail},
	} {
		r := Evaluate(sc, nil, w, nil, nil, nil, c.samples, nil)[0]
		if r.Held != c.held || r.NotChecked != c.notChecked || r.Observed != c.observed {
			t.Errorf("%s: held %v, not checked %v (%s), want %v, %v (%s)", c.name, r.Held, r.NotChecked, r.Observed, c.held, c.notChecked, c.observed)
		}
		if j := Decide(Ending{Expectations: []ExpectationResult{r}}); j.Verdict != c.verdict {
			t.Errorf("%s: verdict %s (%s), want %s", c.name, j.Verdict, j.Reason, c.verdict)
		}
	}
}
