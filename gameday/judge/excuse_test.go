package judge

import (
	"strings"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/runrecord"
	"github.com/gameday-dev/gameday/scenarios"
)

const ms = time.Millisecond

// sale is a drill's observations for the excuse's tests: a fault on
// payment from 5 s to 10 s of a 20 s load, 100 shoppers a second, each
// answered (confirmed unless said otherwise) 50 ms after it arrived.
type sale struct {
	sc       *scenarios.Scenario
	shoppers []Shopper
	o        Observed
}

func newSale(expect ...scenarios.Expectation) *sale {
	fault := scenarios.Fault{Name: "slow", Target: "payment"}
	sp := Span{From: 5 * time.Second, Lifted: 10 * time.Second, To: 10 * time.Second}
	s := &sale{sc: &scenarios.Scenario{Faults: []scenarios.Fault{fault}, Expect: expect}}
	for i := range 2000 {
		at := time.Duration(i) * 10 * ms
		s.shoppers = append(s.shoppers, Shopper{ID: "c", Scheduled: at, Outcome: Confirmed, Finished: at + 50*ms,
			Attempts: []Attempt{{At: at, Latency: 50 * ms, Status: string(Confirmed)}}})
	}
	s.o = Observed{Windows: Windows{Faults: []Span{sp}, End: 20 * time.Second}, Faults: FaultTimes{"slow": sp}, Order: s.sc.Faults,
		Breakers: map[string][]Transition{}}
	return s
}

// judged evaluates the sale's promises and sorts the broken ones with the
// evidence given.
func (s *sale) judged(st Starvation) (results []ExpectationResult, starved []string, others int) {
	s.o.Shoppers = s.shoppers
	results = Evaluate(s.sc, s.shoppers, s.o.Windows, s.o.Faults, s.o.Order, s.o.Breakers, map[string][]Sample{}, nil)
	starved, others = Excuse(s.sc, results, nil, s.o, st)
	return results, starved, others
}

func stall(from, to time.Duration) []Stall { return []Stall{{From: from, To: to}} }

func ratio(window scenarios.Window, atLeast float64, outcomes ...string) scenarios.Expectation {
	return scenarios.Expectation{Ratio: &scenarios.RatioBound{Window: window, Outcomes: outcomes, AtLeast: &atLeast}}
}

// The reproduction: no shopper confirmed during the fault, one
// stall of 100 ms. Before, any stall of 100 ms in the window excused any
// failure; the stall explains at most the shoppers whose outcome came
// during it or just after (about 20 of 500), so the promise still fails.
func TestOneStallDoesNotExcuseNothingConfirmed(t *testing.T) {
	s := newSale(ratio("during", 0.9, "confirmed"))
	for i := range s.shoppers {
		if s.shoppers[i].Scheduled >= 5*time.Second && s.shoppers[i].Scheduled < 10*time.Second {
			s.shoppers[i].Outcome = "unavailable"
		}
	}
	res, starved, others := s.judged(Starvation{Runner: stall(7*time.Second, 7100*ms)})
	if res[0].Held || len(starved) != 0 || others != 1 {
		t.Fatalf("held %v, starved %q, others %d: want the failure kept", res[0].Held, starved, others)
	}
	j := Decide(Ending{Expectations: res, Starved: func() ([]string, int) { return starved, others }})
	if j.Verdict != runrecord.VerdictFail {
		t.Errorf("verdict %s (%s), want fail", j.Verdict, j.Reason)
	}
	// A miss the stall can explain: 60 shoppers from 7 s on gave up (88%
	// confirmed); 40 of them left during the stall or just after, and
	// left uncounted the other 460 keep the window's 90%.
	s = newSale(ratio("during", 0.9, "confirmed"))
	for i := range s.shoppers {
		if at := s.shoppers[i].Scheduled; at >= 7*time.Second && at < 7600*ms {
			s.shoppers[i].Outcome = "gave_up"
		}
	}
	res, starved, others = s.judged(Starvation{Runner: stall(7050*ms, 7250*ms)})
	if res[0].Held || len(starved) != 1 || others != 0 {
		t.Fatalf("a near miss: held %v (%s), starved %q, others %d: want it excused", res[0].Held, res[0].Observed, starved, others)
	}
	if !strings.Contains(starved[0], "stalled 200ms") || !strings.Contains(starved[0], "benefit of the doubt") {
		t.Errorf("no evidence in %q", starved[0])
	}
}

// A latency promise over the bound: the stalled time each answer overlaps
// is taken off it. A stall that explains the miss excuses it; one that
// explains only part of it does not.
func TestLatencyMissExcusedInProportion(t *testing.T) {
	p95 := scenarios.Expectation{Latency: &scenarios.LatencyBound{Window: "during", Percentile: 95, Below: scenarios.Duration(300 * ms)}}
	slow := func(lat time.Duration) *sale {
		s := newSale(p95)
		// Answers of shoppers arriving from 8 s to 8.5 s came lat late.
		for i := range s.shoppers {
			if at := s.shoppers[i].Scheduled; at >= 8*time.Second && at < 8500*ms {
				s.shoppers[i].Attempts[0].Latency = lat
				s.shoppers[i].Finished = at + lat
			}
		}
		return s
	}
	for _, c := range []struct {
		name    string
		lat     time.Duration
		stalls  []Stall
		excused bool
	}{
		// Held up by a stall of 600 ms that covers them: 400 ms - 600 ms.
		{"a stall as long as the delay", 400 * ms, stall(7900*ms, 8500*ms), true},
		// 2 s answers and a stall of 150 ms: still 1.85 s at best.
		{"a stall far shorter than the delay", 2 * time.Second, stall(8000*ms, 8150*ms), false},
		// The stall came after the answers.
		{"a stall elsewhere", 400 * ms, stall(15*time.Second, 16*time.Second), false},
		// No evidence at all.
		{"no stall", 400 * ms, nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, starved, others := slow(c.lat).judged(Starvation{Runner: c.stalls})
			if res[0].Held {
				t.Fatalf("the promise held (%s): the test is wrong", res[0].Observed)
			}
			if got := len(starved) == 1 && others == 0; got != c.excused {
				t.Errorf("starved %q, others %d; want excused %v", starved, others, c.excused)
			}
		})
	}
}

// A breaker that opened late by less than the stalled time since the fault
// began is excused; one that never opened, or opened later than any stall
// explains, is not. A metric promise is never excused.
func TestBreakerAndMetricExcuses(t *testing.T) {
	opens := scenarios.Expectation{BreakerOpens: &scenarios.BreakerWithin{Dependency: "payment", Fault: "slow", Within: scenarios.Duration(2 * time.Second)}}
	for _, c := range []struct {
		name    string
		opened  time.Duration // after the fault's start; 0: never
		stalls  []Stall
		excused bool
	}{
		{"late by less than the stall", 2500 * ms, stall(6*time.Second, 6700*ms), true},
		{"late by more than the stall", 4 * time.Second, stall(6*time.Second, 6700*ms), false},
		{"never opened", 0, stall(6*time.Second, 9*time.Second), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newSale(opens)
			if c.opened > 0 {
				s.o.Breakers["payment"] = []Transition{{State: "open", AtMS: (5*time.Second + c.opened).Milliseconds()}}
			}
			res, starved, others := s.judged(Starvation{Runner: c.stalls})
			wantExcused(t, res, starved, others, c.excused)
		})
	}
	// Closing: the fault is lifted at 10 s and the breaker is to close
	// within 2 s; it closed at 12.5 s.
	closes := scenarios.Expectation{BreakerCloses: &scenarios.BreakerWithin{Dependency: "payment", Fault: "slow", Within: scenarios.Duration(2 * time.Second)}}
	for _, c := range []struct {
		name    string
		stalls  []Stall
		excused bool
	}{
		{"closed late by less than a stall after the lifting", stall(11*time.Second, 11700*ms), true},
		{"closed late, the stall before the lifting", stall(9*time.Second, 9700*ms), false},
		{"closed late by more than the stall", stall(11*time.Second, 11200*ms), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newSale(closes)
			s.o.Breakers["payment"] = []Transition{{State: "open", AtMS: 6000}, {State: "closed", AtMS: 12500}}
			res, starved, others := s.judged(Starvation{Runner: c.stalls})
			wantExcused(t, res, starved, others, c.excused)
		})
	}
	t.Run("a metric promise", func(t *testing.T) {
		s := newSale(scenarios.Expectation{Metric: &scenarios.MetricBound{Query: "rate(x[1m])", Window: "during", Below: new(float64)}})
		res := []ExpectationResult{{Promise: "rate(x[1m]) stays below 0", Observed: "3"}}
		s.o.Shoppers = s.shoppers
		starved, others := Excuse(s.sc, res, nil, s.o, Starvation{Runner: stall(5*time.Second, 10*time.Second)})
		if len(starved) != 0 || others != 1 {
			t.Errorf("starved %q, others %d: a metric promise is never excused", starved, others)
		}
	})
}

// In a sale sent from workers, a shopper's promise is excused only by the
// stalls of the worker that timed it: not by the coordinator's, which sent
// nothing, nor by another worker's.
func TestShardedEvidenceComesFromTheWorkers(t *testing.T) {
	p95 := scenarios.Expectation{Latency: &scenarios.LatencyBound{Window: "during", Percentile: 95, Below: scenarios.Duration(300 * ms)}}
	s := newSale(p95)
	for i := range s.shoppers {
		s.shoppers[i].Shard = i % 2
		// Shard 1's shoppers from 8 s to 9 s were held up 400 ms.
		if at := s.shoppers[i].Scheduled; s.shoppers[i].Shard == 1 && at >= 8*time.Second && at < 9*time.Second {
			s.shoppers[i].Attempts[0].Latency = 400 * ms
		}
	}
	held := stall(7900*ms, 9500*ms)
	for _, c := range []struct {
		name    string
		st      Starvation
		excused bool
	}{
		{"the coordinator stalled", Starvation{Runner: held, Shards: [][]Stall{nil, nil}}, false},
		{"the other worker stalled", Starvation{Shards: [][]Stall{held, nil}}, false},
		{"the worker that timed them stalled", Starvation{Shards: [][]Stall{nil, held}}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, starved, others := s.judged(c.st)
			wantExcused(t, res, starved, others, c.excused)
		})
	}
}

// Dropped arrivals are the generator's: excused when every one was due
// while its machine was stalled or just after, not when some were not.
// An invariant not checked is neither excused nor another failure.
func TestDroppedAndNotCheckedInvariants(t *testing.T) {
	s := newSale()
	s.shoppers[300].Outcome, s.shoppers[301].Outcome = Dropped, Dropped // due at 3 s and 3.01 s
	dropped := ExpectationResult{Promise: "dropped is at most 0", Invariant: "dropped", Observed: "2"}
	notChecked := ExpectationResult{Promise: "wrong amounts is at most 0", Invariant: "wrong_amounts", Observed: "not checked", NotChecked: true}
	s.o.Shoppers = s.shoppers
	checks := []ExpectationResult{dropped, notChecked}
	if starved, others := Excuse(s.sc, nil, checks, s.o, Starvation{Runner: stall(2900*ms, 3005*ms)}); len(starved) != 1 || others != 0 {
		t.Errorf("both due in a stall's shadow: starved %q, others %d", starved, others)
	}
	s.shoppers[1500].Outcome = Dropped // due at 15 s, far from it
	dropped.Observed = "3"
	if starved, others := Excuse(s.sc, nil, []ExpectationResult{dropped, notChecked}, s.o, Starvation{Runner: stall(2900*ms, 3005*ms)}); len(starved) != 0 || others != 1 {
		t.Errorf("one due far from any stall: starved %q, others %d", starved, others)
	}
}

// A ratio promise is excused only by shoppers whose ending the clock
// decided: 0 of 500 confirmed during the fault, a stall of 300 ms. When
// the system refused them (503: unavailable) or failed them (500: error),
// the stall explains none of it, however low the bound; when they gave
// up, those in the stall's shadow are left uncounted, never counted as
// confirmed, so 0 % stays 0 %.
func TestRatioExcusesOnlyWhatTheClockDecided(t *testing.T) {
	for _, c := range []struct {
		outcome Outcome
		bound   scenarios.Expectation
		excused bool
	}{
		{Unavailable, ratio("during", 0.1, "confirmed"), false},
		{Error, ratio("during", 0.1, "confirmed"), false},
		{GaveUp, ratio("during", 0.1, "confirmed"), false},
		{TooLate, ratio("during", 0.1, "confirmed"), false},
	} {
		t.Run(string(c.outcome), func(t *testing.T) {
			s := newSale(c.bound)
			for i := range s.shoppers {
				if at := s.shoppers[i].Scheduled; at >= 5*time.Second && at < 10*time.Second {
					s.shoppers[i].Outcome = c.outcome
				}
			}
			res, starved, others := s.judged(Starvation{Runner: stall(7*time.Second, 7300*ms)})
			wantExcused(t, res, starved, others, c.excused)
		})
	}
	// "At most": at most 5 % errors or give-ups during the fault; 60
	// shoppers from 7 s on ended so (12 %), and a stall of 200 ms at 7.05 s
	// shadows 40 of them. Errors the system answered are its own;
	// give-ups in the shadow are left uncounted (20 of 460: 4.3 %).
	atMost := func(outcomes ...string) scenarios.Expectation {
		bound := 0.05
		return scenarios.Expectation{Ratio: &scenarios.RatioBound{Window: "during", Outcomes: outcomes, AtMost: &bound}}
	}
	for _, c := range []struct {
		outcome Outcome
		excused bool
	}{{Error, false}, {GaveUp, true}} {
		t.Run("at most/"+string(c.outcome), func(t *testing.T) {
			s := newSale(atMost(string(c.outcome)))
			for i := range s.shoppers {
				if at := s.shoppers[i].Scheduled; at >= 7*time.Second && at < 7600*ms {
					s.shoppers[i].Outcome = c.outcome
				}
			}
			res, starved, others := s.judged(Starvation{Runner: stall(7050*ms, 7250*ms)})
			wantExcused(t, res, starved, others, c.excused)
		})
	}
}

// A blast radius promise: the shoppers of the part judged that gave up in
// a stall's shadow are left uncounted; those the system refused count.
func TestBlastRadiusExcusesOnlyWhatTheClockDecided(t *testing.T) {
	radius := scenarios.Expectation{BlastRadius: &scenarios.BlastRadius{Window: "during", Baseline: "before", ConfirmedAtLeast: 0.95}}
	for _, c := range []struct {
		outcome Outcome
		excused bool
	}{{Unavailable, false}, {GaveUp, true}} {
		t.Run(string(c.outcome), func(t *testing.T) {
			s := newSale(radius)
			// 60 shoppers from 7 s on (12 % of the fault's 500); a stall
			// of 200 ms at 7.05 s shadows 40 of them.
			for i := range s.shoppers {
				if at := s.shoppers[i].Scheduled; at >= 7*time.Second && at < 7600*ms {
					s.shoppers[i].Outcome = c.outcome
				}
			}
			res, starved, others := s.judged(Starvation{Runner: stall(7050*ms, 7250*ms)})
			wantExcused(t, res, starved, others, c.excused)
		})
	}
}

// A degraded promise counts the system's markers: an answer without one
// is the system's, and one that never came (a shopper that gave up during
// a stall) is unknown, never counted as degraded. No stall excuses it.
func TestDegradedIsNeverExcused(t *testing.T) {
	degraded := scenarios.Expectation{Degraded: &scenarios.DegradedSeen{Window: "during", AtLeast: 30}}
	for _, gaveUp := range []bool{false, true} {
		s := newSale(degraded)
		if gaveUp {
			for i := range s.shoppers {
				if at := s.shoppers[i].Scheduled; at >= 6*time.Second && at < 6500*ms {
					s.shoppers[i].Outcome = GaveUp
					s.shoppers[i].Attempts[0].Status = string(Error)
				}
			}
		}
		res, starved, others := s.judged(Starvation{Runner: stall(6*time.Second, 6200*ms)})
		if res[0].Held {
			t.Fatal("held")
		}
		if len(starved) != 0 || others != 1 {
			t.Errorf("gave up %v: starved %q, others %d; want the failure kept", gaveUp, starved, others)
		}
	}
}

// A fast-refusals promise: refusals the stall slowed lose the stalled
// time they overlap, and count as fast when that explains their delay;
// refusals far slower than any stall stay slow.
func TestFastRefusalsExcusedInProportion(t *testing.T) {
	fast := scenarios.Expectation{FastRefusals: &scenarios.FastRefusals{Fault: "slow", Below: scenarios.Duration(100 * ms), Share: 0.5, RisesWithin: scenarios.Duration(2 * time.Second)}}
	for _, c := range []struct {
		name    string
		lat     time.Duration
		excused bool
	}{
		{"refusals slowed by the stall", 150 * ms, true},
		{"refusals slower than the stall explains", 2 * time.Second, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newSale(fast)
			// Every answer during the fault is a refusal, lat after its
			// arrival; the runner stalled for the fault's first 5 s, 600
			// ms at a time with 100 ms between.
			for i := range s.shoppers {
				if at := s.shoppers[i].Scheduled; at >= 5*time.Second && at < 10*time.Second {
					s.shoppers[i].Outcome = Unavailable
					s.shoppers[i].Attempts[0].Status = string(Unavailable)
					s.shoppers[i].Attempts[0].Latency = c.lat
					s.shoppers[i].Finished = at + c.lat
				}
			}
			var stalls []Stall
			for from := 5 * time.Second; from < 10*time.Second; from += 700 * ms {
				stalls = append(stalls, Stall{From: from, To: from + 600*ms})
			}
			res, starved, others := s.judged(Starvation{Runner: stalls})
			wantExcused(t, res, starved, others, c.excused)
		})
	}
}

// wantExcused checks that the one promise judged failed, and that the
// stalls excused it or not, as excused says.
func wantExcused(t *testing.T, res []ExpectationResult, starved []string, others int, excused bool) {
	t.Helper()
	if res[0].Held {
		t.Fatalf("held: %s", res[0].Observed)
	}
	if got := len(starved) == 1 && others == 0; got != excused {
		t.Errorf("starved %q, others %d; want excused %v", starved, others, excused)
	}
}
