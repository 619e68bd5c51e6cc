package judge

import (
	"fmt"
	"time"

	"github.com/gameday-dev/gameday/scenarios"
)

// Starved sorts the broken timing promises of a run: those that
// failed while the machine was starved (the runner's own timer stalled
// within the promise's window, as stalled says), with the evidence,
// and how many others failed. Books are never excused: money and stock
// must be right however slow the machine. stalled reports whether the
// runner's own timer stalled long enough to starve it within [from, to),
// and its worst stall.
func Starved(sc *scenarios.Scenario, expectations, checks []ExpectationResult, w Windows, ft FaultTimes, stalled func(from, to time.Duration) (bool, time.Duration)) (starved []string, others int) {
	end := w.End
	for i, r := range expectations {
		if r.Held {
			continue
		}
		from, to := expectationSpan(sc.Expect[i], w, ft, sc.Faults, end)
		if ok, worst := stalled(from, to); ok {
			starved = append(starved, fmt.Sprintf("%s (observed: %s; the runner stalled %s between %s and %s)", r.Promise, r.Observed, worst.Round(time.Millisecond), from.Round(time.Millisecond), to.Round(time.Millisecond)))
			continue
		}
		others++
	}
	for _, c := range checks {
		if c.Held {
			continue
		}
		// Dropped arrivals are the load generator's: a starved machine
		// cannot start its shoppers on time.
		if c.Invariant == "dropped" {
			if ok, worst := stalled(0, end); ok {
				starved = append(starved, fmt.Sprintf("%s (observed: %s; the runner stalled %s)", c.Promise, c.Observed, worst.Round(time.Millisecond)))
				continue
			}
		}
		others++
	}
	return starved, others
}

// expectationSpan is the part of the run an expectation judged: its
// window, or for a breaker promise the time from the fault's start (opens)
// or lift (closes) to the bound.
func expectationSpan(e scenarios.Expectation, w Windows, ft FaultTimes, order []scenarios.Fault, end time.Duration) (time.Duration, time.Duration) {
	breaker := func(b *scenarios.BreakerWithin, closes bool) (time.Duration, time.Duration) {
		f, ok := faultFor(b.Fault, b.Dependency, order)
		sp, ok2 := ft[f.Name]
		if !ok || !ok2 {
			return 0, end
		}
		if closes {
			return sp.Lifted, min(end, sp.To+b.Within.D())
		}
		return sp.From, min(end, sp.From+b.Within.D())
	}
	switch {
	case e.BreakerOpens != nil:
		return breaker(e.BreakerOpens, false)
	case e.BreakerCloses != nil:
		return breaker(e.BreakerCloses, true)
	case e.Latency != nil:
		return w.Bounds(e.Latency.Window)
	case e.Ratio != nil:
		return w.Bounds(e.Ratio.Window)
	case e.Degraded != nil:
		return w.Bounds(e.Degraded.Window)
	case e.Metric != nil:
		return w.Bounds(e.Metric.Window)
	case e.FastRefusals != nil:
		if sp, ok := ft[e.FastRefusals.Fault]; ok {
			return sp.From, min(end, sp.To+e.FastRefusals.FallsWithin.D()+settle)
		}
	case e.BlastRadius != nil:
		// The part judged and its baseline: a stall in either moves the
		// comparison.
		b := e.BlastRadius
		bounds := func(name scenarios.Window, from, to time.Duration) (time.Duration, time.Duration) {
			if to > 0 {
				return from, to
			}
			return w.Bounds(name)
		}
		f1, t1 := bounds(b.Span())
		f2, t2 := bounds(b.BaselineSpan())
		return min(f1, f2), max(t1, t2)
	case e.Moved != nil:
		// How a move ended is not the machine's doing: never excused.
		return 0, 0
	}
	return 0, end
}
