package load

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The same seed gives the same plan whatever the number of shards: every
// arrival is in exactly one shard, at its planned instant, with its own
// choices, and each shard keeps the ramp's shape (its arrivals spread over
// the whole sale, not a slice of it).
func TestShardsSplitThePlan(t *testing.T) {
	plan := validPlan()
	plan.Stages = []Stage{{Duration: time.Second, Target: 500}, {Duration: time.Second, Target: 500}}
	sched := Schedule(plan.Stages)
	for _, of := range []int{1, 2, 3, 7} {
		seen := make([]int, len(sched))
		for k := range of {
			sh := Shard{Index: k, Of: of}
			if err := sh.Validate(); err != nil {
				t.Fatal(err)
			}
			var first, last time.Duration = -1, 0
			for i := range sched {
				if !sh.Has(i) {
					continue
				}
				seen[i]++
				if first < 0 {
					first = sched[i]
				}
				last = sched[i]
			}
			if of > 1 && (first > sched[of-1] || last < sched[len(sched)-of]) {
				t.Errorf("shard %d of %d spans %v to %v: not the whole sale", k, of, first, last)
			}
		}
		for i, n := range seen {
			if n != 1 {
				t.Fatalf("%d shards: arrival %d in %d of them", of, i, n)
			}
		}
	}
	for _, bad := range []Shard{{Index: 1}, {Index: 3, Of: 3}, {Index: -1, Of: 2}, {Of: -2}} {
		if bad.Validate() == nil {
			t.Errorf("%+v passed Validate", bad)
		}
	}
}

// Four shards run at once, each from the same start instant, merge into
// the report of the whole sale: the same arrivals, checkout ids, instants,
// deadlines and outcomes as one process sending all of it, and the counts
// exact.
func TestShardsMergeIntoTheWholeSale(t *testing.T) {
	plan := validPlan()
	plan.Stages = []Stage{{Duration: 10 * time.Millisecond, Target: 1000}, {Duration: 200 * time.Millisecond, Target: 1000}}
	plan.MaxShoppers = 400
	// Every third checkout id is declined, the others confirmed: outcomes
	// that depend on the shopper, not on which process sent it.
	answerOf := func(_ context.Context, c *Call, _ int) (Answer, error) {
		n, err := strconv.Atoi(c.CheckoutID[strings.LastIndexByte(c.CheckoutID, '-')+1:])
		if err != nil {
			return Answer{}, err
		}
		if n%3 == 0 {
			return answer(MeansDeclined), nil
		}
		return answer(MeansConfirmed), nil
	}
	whole, err := Run(context.Background(), plan, newFake(t, answerOf), Options{})
	if err != nil {
		t.Fatal(err)
	}

	const of = 4
	start := time.Now().Add(50 * time.Millisecond)
	reports := make([]*Report, of)
	var wg sync.WaitGroup
	for k := range of {
		wg.Go(func() {
			rep, err := Run(context.Background(), plan, newFake(t, answerOf), Options{Shard: Shard{Index: k, Of: of}, Start: start})
			if err != nil {
				t.Errorf("shard %d: %v", k, err)
			}
			reports[k] = rep
		})
	}
	wg.Wait()
	merged, err := Merge(reports...)
	if err != nil {
		t.Fatal(err)
	}
	if merged.Scheduled != whole.Scheduled || merged.Started+merged.Dropped != whole.Scheduled || !merged.Start.Equal(start) {
		t.Fatalf("merged: %d scheduled, %d started, %d dropped, start %v; the whole sale %d", merged.Scheduled, merged.Started, merged.Dropped, merged.Start, whole.Scheduled)
	}
	if o := whole.Outcomes(); o[OutcomeDeclined] == 0 || o[OutcomeConfirmed] == 0 {
		t.Fatalf("one process: %v, want both declined and confirmed shoppers", o)
	}
	if fmt.Sprint(merged.Outcomes()) != fmt.Sprint(whole.Outcomes()) {
		t.Errorf("outcomes: merged %v, one process %v", merged.Outcomes(), whole.Outcomes())
	}
	for i, m := range merged.Shoppers {
		w := whole.Shoppers[i]
		if m.Index != i || m.ID != w.ID || m.Session != w.Session || m.Scheduled != w.Scheduled || m.Deadline != w.Deadline || m.Outcome != w.Outcome {
			t.Fatalf("arrival %d: merged %+v\none process %+v", i, m, w)
		}
	}
	if merged.LateP99 > 20*time.Millisecond {
		t.Logf("merged lateness p99 %v (four schedulers on one machine)", merged.LateP99)
	}
	// A report given twice, or with another start, is refused.
	if _, err := Merge(reports[0], reports[0]); err == nil {
		t.Error("a shard merged twice")
	}
	if _, err := Merge(reports[0], whole); err == nil {
		t.Error("reports with different starts merged")
	}
}

// TestCompleteRefusesWhatThePlanDoesNotHave: records from shards are
// joined into the whole plan; the arrivals no record came back for keep no
// outcome, and a record twice, or of no arrival of the plan, is refused.
func TestCompleteRefusesWhatThePlanDoesNotHave(t *testing.T) {
	plan := Plan{Stages: []Stage{{Duration: time.Second, Target: 10}, {Duration: time.Second, Target: 10}}, Patience: time.Second, MaxShoppers: 4, Seed: 3}
	n := len(Schedule(plan.Stages))
	start := time.Now()
	got := []*Shopper{{Index: 2, Outcome: OutcomeConfirmed, Started: time.Millisecond}, {Index: 0, Outcome: OutcomeDropped}}
	r, err := Complete(plan, start, got)
	if err != nil {
		t.Fatal(err)
	}
	if r.Scheduled != n || r.Started != 1 || r.Dropped != 1 || len(r.Shoppers) != n || r.Shoppers[1].Outcome != "" || r.Shoppers[1].ID != Shoppers(plan)[1].ID {
		t.Fatalf("report %+v: want %d arrivals, 1 started, 1 dropped, the rest named and unreached", r, n)
	}
	for _, bad := range [][]*Shopper{
		{{Index: 1}, {Index: 1}},
		{{Index: n}},
		{{Index: -1}},
	} {
		if _, err := Complete(plan, start, bad); err == nil {
			t.Errorf("Complete(%+v) took it", bad[0])
		}
	}
}
