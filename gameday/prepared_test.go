package gameday_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday"
	"github.com/gameday-dev/gameday/scenarios"
)

// One environment prepared, driven twice: the checkout is started once
// (both drives reach it at the same address), each drive is a drill of
// its own (its directory, checkout ids, books and verdict), and the second
// one's books hold none of the first one's orders. A scenario that asks
// for another environment is refused before anything is sent.
func TestPreparedDrivesMany(t *testing.T) {
	sc := lookup(t, "payment-latency")
	o := options(t)
	p, err := gameday.Prepare(context.Background(), sc, o)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := p.Close(); err != nil {
			t.Error(err)
		}
	}()
	var recs []*gameday.Record
	var dirs []string
	for i, seed := range []int64{2, 7} {
		s := sc.Clone()
		s.Seed = seed
		rec, dir, err := p.Drive(context.Background(), s)
		if err != nil {
			t.Fatalf("drive %d: %v", i+1, err)
		}
		sameOnRejudge(t, dir)
		if rec.Verdict != gameday.VerdictPass {
			t.Fatalf("drive %d: %s (%s); notes %q", i+1, rec.Verdict, rec.Reason, rec.Notes)
		}
		recs, dirs = append(recs, rec), append(dirs, dir)
	}
	a, b := recs[0], recs[1]
	if dirs[0] == dirs[1] || a.CheckoutPrefix == b.CheckoutPrefix {
		t.Errorf("the drives share a directory (%s, %s) or ids (%s, %s)", dirs[0], dirs[1], a.CheckoutPrefix, b.CheckoutPrefix)
	}
	if a.Environment.Checkout == "" || a.Environment.Checkout != b.Environment.Checkout {
		t.Errorf("checkout at %q, then %q: the environment was brought up again", a.Environment.Checkout, b.Environment.Checkout)
	}
	for i, r := range recs {
		if got := r.Ledger.Orders; got != r.Outcomes["confirmed"] {
			t.Errorf("drive %d: %d orders in its books for %d confirmed shoppers", i+1, got, r.Outcomes["confirmed"])
		}
	}

	other := sc.Clone()
	other.Stock++
	if _, _, err := p.Drive(context.Background(), other); err == nil || !strings.Contains(err.Error(), "stock: differs from payment-latency's") {
		t.Errorf("a scenario with other stock: %v", err)
	}
}

// BenchmarkTrial is what a short trial costs, as gameday explore runs
// hundreds: a 2 s sale of the reference checkout (10 arrivals a second,
// no fault) driven in an environment prepared once, beside the same drill
// run whole (the environment brought up and stopped each time). Each
// reports the seconds a trial takes and what is not the sale itself
// (setting up the books, settling, judging, recording, and for the whole
// run the environment): the fixed cost that bounds trials per hour.
//
//	go test -run '^$' -bench Trial -benchtime 5x ./gameday/
func BenchmarkTrial(b *testing.B) {
	src := `name: trial
matrix: {dependency: none, failure: baseline}
stock: 100
load:
  stages: [{duration: 2s, target: 10}]
  patience: 2s
`
	sc, err := scenarios.Parse("trial.yaml", []byte(src))
	if err != nil {
		b.Fatal(err)
	}
	report := func(b *testing.B, took time.Duration) {
		per := took.Seconds() / float64(b.N)
		b.ReportMetric(per, "s/trial")
		b.ReportMetric(per-sc.TotalDuration().Seconds(), "fixed-s/trial")
		b.ReportMetric(3600/per, "trials/hour")
	}
	// prepared drives sc in an environment prepared once for prep,
	// each trial's record as want says.
	prepared := func(b *testing.B, prep *scenarios.Scenario, want func(*gameday.Record) bool) {
		o := options(b)
		o.TimeScale, o.PredictRuns = 1, -1
		p, err := gameday.Prepare(context.Background(), prep, o)
		if err != nil {
			b.Fatal(err)
		}
		defer p.Close()
		b.ResetTimer()
		start := time.Now()
		for range b.N {
			if rec, _, err := p.Drive(context.Background(), sc); err != nil || rec.Verdict != gameday.VerdictPass || !want(rec) {
				b.Fatalf("%v %+v", err, rec)
			}
		}
		report(b, time.Since(start))
	}
	b.Run("prepared", func(b *testing.B) {
		prepared(b, sc, func(*gameday.Record) bool { return true })
	})
	// As gameday explore prepares: a relay behind every dependency's
	// proxy, each trial's request kinds read back after it.
	b.Run("prepared-relayed", func(b *testing.B) {
		prep := sc.Clone()
		for _, dep := range []string{"payment", "inventory", "sessions", "catalog"} {
			prep.Faults = append(prep.Faults, scenarios.Fault{Name: "relay-" + dep, Target: dep, Toxic: &scenarios.Toxic{Type: "lost_reply"}})
		}
		prepared(b, prep, func(rec *gameday.Record) bool { return len(rec.Requests) > 0 })
	})
	b.Run("whole", func(b *testing.B) {
		o := options(b)
		o.TimeScale, o.PredictRuns = 1, -1
		start := time.Now()
		for range b.N {
			if rec, _, err := gameday.Run(context.Background(), sc, o); err != nil || rec.Verdict != gameday.VerdictPass {
				b.Fatalf("%v %+v", err, rec)
			}
		}
		report(b, time.Since(start))
	})
}
