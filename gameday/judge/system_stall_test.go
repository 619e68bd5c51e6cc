package judge

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/runrecord"
	"github.com/gameday-dev/gameday/scenarios"
)

// systemStarved is evidence of the system's own starvation as a run's
// observations keep it (observations.json.gz): spans in which its
// threads waited for a CPU, each with the time waited. Decoded from the
// JSON, as a run judged again reads it.
func systemStarved(t *testing.T, runner []Stall, spans ...[3]time.Duration) Starvation {
	t.Helper()
	var sys []string
	for _, s := range spans {
		sys = append(sys, fmt.Sprintf(`{"from_ns": %d, "to_ns": %d, "waited_ns": %d}`, s[0], s[1], s[2]))
	}
	r, err := json.Marshal(runner)
	if err != nil {
		t.Fatal(err)
	}
	var st Starvation
	if err := json.Unmarshal([]byte(fmt.Sprintf(`{"runner": %s, "system": [%s]}`, r, strings.Join(sys, ", "))), &st); err != nil {
		t.Fatal(err)
	}
	return st
}

// The class: the system on the runner's host stalled where the
// runner did not (the checkout's containers stalled 100-160 ms beside 17
// ms on the runner). A latency promise about what the system answered
// then is judged with the benefit of the doubt as for the runner's stalls,
// in proportion to the time its threads waited: answers 400 ms against a
// bound of 300 ms are excused when the system waited the whole of their
// span, or three quarters of it, not when it waited a quarter, nor when
// it was starved at another time. The verdict says whose stall it was.
func TestSystemStallExcusesWhatTheSystemAnswered(t *testing.T) {
	p95 := scenarios.Expectation{Latency: &scenarios.LatencyBound{Window: "during", Percentile: 95, Below: scenarios.Duration(300 * ms)}}
	for _, c := range []struct {
		name    string
		span    [3]time.Duration // from, to, waited
		excused bool
	}{
		{"waited throughout", [3]time.Duration{7900 * ms, 8500 * ms, 600 * ms}, true},
		{"waited three quarters", [3]time.Duration{7900 * ms, 8500 * ms, 450 * ms}, true},
		{"waited a quarter", [3]time.Duration{7900 * ms, 8500 * ms, 150 * ms}, false},
		{"starved at another time", [3]time.Duration{15 * time.Second, 16 * time.Second, time.Second}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newSale(p95)
			for i := range s.shoppers {
				if at := s.shoppers[i].Scheduled; at >= 8*time.Second && at < 8500*ms {
					s.shoppers[i].Attempts[0].Latency = 400 * ms
					s.shoppers[i].Finished = at + 400*ms
				}
			}
			o := &Observations{End: s.o.Windows.End, Faults: s.o.Faults, Shoppers: s.shoppers, Breakers: s.o.Breakers,
				Starvation: systemStarved(t, nil, c.span), Host: "a thread of the system under test waited up to 100 ms for a CPU in one sample"}
			j := Run(s.sc, o)
			if j.Expectations[0].Held {
				t.Fatalf("held (%s): the test is wrong", j.Expectations[0].Observed)
			}
			want := runrecord.VerdictFail
			if c.excused {
				want = runrecord.VerdictInconclusive
			}
			if j.Verdict != want {
				t.Fatalf("verdict %s (%s), want %s", j.Verdict, j.Reason, want)
			}
			if c.excused && (len(j.Starved) != 1 || !strings.Contains(j.Starved[0], "the system under test's threads waited")) {
				t.Errorf("starved %q: want the system's evidence named", j.Starved)
			}
		})
	}
}

// The system's stalls excuse what the system did in them whoever timed
// it: a breaker that opened late by less than the time its threads waited
// since the fault began, a shopper that gave up in their shadow, the
// answers timed by a load worker that did not stall. What they never
// excuse: dropped arrivals (the load generator's, which runs on the
// runner's machine, not the system's), a count of degraded answers (the
// system's markers), a metric (the system's own figures).
func TestSystemStallExcusesLikeTheRunners(t *testing.T) {
	starved := func(from, to, waited time.Duration) Starvation {
		return Starvation{System: []Stall{{From: from, To: to, Waited: waited}}}
	}
	t.Run("a breaker", func(t *testing.T) {
		opens := scenarios.Expectation{BreakerOpens: &scenarios.BreakerWithin{Dependency: "payment", Fault: "slow", Within: scenarios.Duration(2 * time.Second)}}
		for _, c := range []struct {
			waited  time.Duration
			excused bool
		}{{700 * ms, true}, {300 * ms, false}} {
			s := newSale(opens)
			s.o.Breakers["payment"] = []Transition{{State: "open", AtMS: 7500}} // 2.5 s after the fault
			res, st, others := s.judged(starved(6*time.Second, 6700*ms, c.waited))
			wantExcused(t, res, st, others, c.excused)
		}
	})
	t.Run("shoppers that gave up", func(t *testing.T) {
		s := newSale(ratio("during", 0.9, "confirmed"))
		for i := range s.shoppers {
			if at := s.shoppers[i].Scheduled; at >= 7*time.Second && at < 7600*ms {
				s.shoppers[i].Outcome = GaveUp
			}
		}
		res, st, others := s.judged(starved(7050*ms, 7250*ms, 200*ms))
		wantExcused(t, res, st, others, true)
	})
	t.Run("a worker's shoppers", func(t *testing.T) {
		s := newSale(scenarios.Expectation{Latency: &scenarios.LatencyBound{Window: "during", Percentile: 95, Below: scenarios.Duration(300 * ms)}})
		for i := range s.shoppers {
			s.shoppers[i].Shard = i % 2
			if at := s.shoppers[i].Scheduled; at >= 8*time.Second && at < 9*time.Second {
				s.shoppers[i].Attempts[0].Latency = 400 * ms
			}
		}
		st := starved(7900*ms, 9500*ms, 1600*ms)
		st.Shards = [][]Stall{nil, nil}
		res, excused, others := s.judged(st)
		wantExcused(t, res, excused, others, true)
	})
	t.Run("dropped arrivals", func(t *testing.T) {
		s := newSale()
		s.shoppers[300].Outcome = Dropped
		s.o.Shoppers = s.shoppers
		dropped := ExpectationResult{Promise: "dropped is at most 0", Invariant: "dropped", Observed: "1"}
		if excused, others := Excuse(s.sc, nil, []ExpectationResult{dropped}, s.o, starved(2900*ms, 3100*ms, 200*ms)); len(excused) != 0 || others != 1 {
			t.Errorf("excused %q, others %d", excused, others)
		}
	})
	t.Run("degraded answers", func(t *testing.T) {
		s := newSale(scenarios.Expectation{Degraded: &scenarios.DegradedSeen{Window: "during", AtLeast: 30}})
		res, excused, others := s.judged(starved(5*time.Second, 10*time.Second, 5*time.Second))
		wantExcused(t, res, excused, others, false)
	})
	t.Run("a metric", func(t *testing.T) {
		s := newSale(scenarios.Expectation{Metric: &scenarios.MetricBound{Query: "rate(x[1m])", Window: "during", Below: new(float64)}})
		s.o.Shoppers = s.shoppers
		res := []ExpectationResult{{Promise: "rate(x[1m]) stays below 0", Observed: "3"}}
		if excused, others := Excuse(s.sc, res, nil, s.o, starved(5*time.Second, 10*time.Second, 5*time.Second)); len(excused) != 0 || others != 1 {
			t.Errorf("excused %q, others %d", excused, others)
		}
	})
}

// The stalled time of a span is the runner's where it stalled (it could
// run nothing), and the system's share of it elsewhere: the two machines'
// evidence is joined, never added where both stalled.
func TestEvidenceJoinsTheRunnersAndTheSystems(t *testing.T) {
	for _, c := range []struct {
		name     string
		own, sys []Stall
		from, to time.Duration
		want     time.Duration
	}{
		{"the runner's alone", []Stall{{From: 0, To: 100 * ms}}, nil, 0, time.Second, 100 * ms},
		{"the system's, in proportion", nil, []Stall{{From: 0, To: 200 * ms, Waited: 100 * ms}}, 0, 100 * ms, 50 * ms},
		{"both at once count once", []Stall{{From: 0, To: 100 * ms}}, []Stall{{From: 0, To: 100 * ms, Waited: 100 * ms}}, 0, time.Second, 100 * ms},
		{"the system's beside the runner's", []Stall{{From: 0, To: 100 * ms}}, []Stall{{From: 50 * ms, To: 250 * ms, Waited: 100 * ms}}, 0, time.Second, 100*ms + 75*ms},
		{"outside the span", []Stall{{From: 0, To: 100 * ms}}, []Stall{{From: 2 * time.Second, To: 3 * time.Second, Waited: time.Second}}, 0, time.Second, 100 * ms},
	} {
		if got := (evidence{own: c.own, system: c.sys}).overlap(c.from, c.to); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

// The system's stalls are kept in the run's observations with the time
// waited in each: a run judged again reads the same evidence.
func TestSystemStallsKeptInObservations(t *testing.T) {
	o := &Observations{Version: ObservationsVersion, End: 20 * time.Second,
		Starvation: Starvation{Runner: stall(sec, sec+150*ms), System: []Stall{{From: 2 * sec, To: 2*sec + 600*ms, Waited: 450 * ms}}}}
	path := filepath.Join(t.TempDir(), ObservationsFile)
	if err := WriteObservations(path, o); err != nil {
		t.Fatal(err)
	}
	back, err := ReadObservations(path)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.Starvation.System, o.Starvation.System) || !slices.Equal(back.Starvation.Runner, o.Starvation.Runner) {
		t.Errorf("read back %+v, wrote %+v", back.Starvation, o.Starvation)
	}
}
