package gameday

import (
	"fmt"
	"github.com/gameday-dev/gameday/internal/stats"
	"slices"
	"strings"
	"time"

	"github.com/gameday-dev/gameday/scenarios"
)

// attemptView is one checkout request as the verdict sees it.
type attemptView struct {
	at       time.Duration // when it was sent, from the start of the load
	latency  time.Duration // answer time minus its start (for a first attempt, minus the scheduled start)
	status   string
	degraded bool
}

// shopperRun is one shopper as the verdict sees it.
type shopperRun struct {
	scheduled time.Duration
	outcome   string
	attempts  []attemptView
}

// span is when a fault was in place: from its injection to the moment it
// was gone (a killed process reachable again, as the system under test
// reaches it). lifted is when the runner began to lift it: a breaker's
// probe may get through between the two.
type span struct{ from, lifted, to time.Duration }

// windows are the parts of the run a promise can look at.
type windows struct {
	faults []span // when each fault was in place
	end    time.Duration
}

func (w windows) contains(name scenarios.Window, t time.Duration) bool {
	switch name {
	case "all", "":
		return true
	case "before":
		return len(w.faults) == 0 || t < w.faults[0].from
	case "after":
		if len(w.faults) == 0 {
			return false
		}
		last := w.faults[0].to
		for _, f := range w.faults {
			last = max(last, f.to)
		}
		return t >= last
	case "during":
		for _, f := range w.faults {
			if t >= f.from && t < f.to {
				return true
			}
		}
	}
	return false
}

// span returns the part of the run a window names, as [from, to).
func (w windows) span(name scenarios.Window) (time.Duration, time.Duration) {
	switch name {
	case "before":
		if len(w.faults) == 0 {
			return 0, w.end
		}
		return 0, w.faults[0].from
	case "after":
		last := time.Duration(0)
		for _, f := range w.faults {
			last = max(last, f.to)
		}
		return last, w.end
	case "during":
		if len(w.faults) == 0 {
			return 0, 0
		}
		from, to := w.faults[0].from, w.faults[0].to
		for _, f := range w.faults {
			from, to = min(from, f.from), max(to, f.to)
		}
		return from, to
	}
	return 0, w.end
}

// faultTimes are the real start and end of each fault, by name.
type faultTimes map[string]span

// evaluate checks every expectation of the scenario against what was seen.
func evaluate(sc *scenarios.Scenario, shoppers []shopperRun, w windows, ft faultTimes, faultOrder []scenarios.Fault, brk map[string][]Transition, ms *metricSampler) []ExpectationResult {
	out := make([]ExpectationResult, 0, len(sc.Expect))
	for _, e := range sc.Expect {
		switch {
		case e.BreakerOpens != nil:
			out = append(out, breakerExpectation(e.BreakerOpens, "open", ft, faultOrder, brk))
		case e.BreakerCloses != nil:
			out = append(out, breakerExpectation(e.BreakerCloses, "closed", ft, faultOrder, brk))
		case e.Latency != nil:
			out = append(out, latencyExpectation(e.Latency, shoppers, w))
		case e.Ratio != nil:
			out = append(out, ratioExpectation(e.Ratio, shoppers, w))
		case e.Degraded != nil:
			out = append(out, degradedExpectation(e.Degraded, shoppers, w))
		case e.FastRefusals != nil:
			out = append(out, fastRefusalsExpectation(e.FastRefusals, shoppers, ft, w.end))
		case e.Metric != nil:
			out = append(out, ms.expectation(e.Metric, w))
		}
	}
	return out
}

// faultFor is the fault an expectation on a dependency refers to.
func faultFor(name, dep string, order []scenarios.Fault) (scenarios.Fault, bool) {
	for _, f := range order {
		if (name != "" && f.Name == name) || (name == "" && f.Target == dep) {
			return f, true
		}
	}
	return scenarios.Fault{}, false
}

// breakerExpectation: the breaker reaches state within the bound of the
// fault's start (open) or end (closed).
func breakerExpectation(b *scenarios.BreakerWithin, state string, ft faultTimes, order []scenarios.Fault, brk map[string][]Transition) ExpectationResult {
	verb, from := "opens", "start"
	if state == "closed" {
		verb, from = "closes", "end"
	}
	r := ExpectationResult{Promise: fmt.Sprintf("the %s breaker %s within %s of the fault's %s", b.Dependency, verb, b.Within.D(), from)}
	f, ok := faultFor(b.Fault, b.Dependency, order)
	if !ok {
		r.Observed = "no such fault"
		return r
	}
	sp, ok := ft[f.Name]
	if !ok {
		r.Observed = "the fault " + f.Name + " never started"
		return r
	}
	r.Promise = strings.Replace(r.Promise, "the fault's", "fault "+f.Name+"'s", 1)
	after, ok := firstAfter(brk[b.Dependency], state, sp.from)
	if state == "closed" {
		after, ok = closedAfter(brk[b.Dependency], sp)
	}
	if !ok {
		r.Observed = fmt.Sprintf("it never %s", map[string]string{"open": "opened", "closed": "closed"}[state])
		return r
	}
	r.Held = after <= b.Within.D()
	r.Observed = fmt.Sprintf("%s after %s", map[string]string{"open": "opened", "closed": "closed"}[state], after.Round(time.Millisecond))
	return r
}

// closedAfter is how long after the fault's end (sp.to: the dependency
// back, as the system under test reaches it) the breaker closed, counting
// from its first close once lifting began: a breaker whose probe got
// through before the runner saw the dependency back closed with it (0).
func closedAfter(ts []Transition, sp span) (time.Duration, bool) {
	at, ok := firstAfter(ts, "closed", sp.lifted)
	if !ok {
		return 0, false
	}
	return max(0, sp.lifted+at-sp.to), true
}

// firstAfter is the time from ref to the first transition into state at
// or after ref.
func firstAfter(ts []Transition, state string, ref time.Duration) (time.Duration, bool) {
	for _, t := range ts {
		at := time.Duration(t.AtMS) * time.Millisecond
		if t.State == state && at >= ref {
			return at - ref, true
		}
	}
	return 0, false
}

func outcomeSet(os []string) func(string) bool {
	if len(os) == 0 {
		return func(string) bool { return true }
	}
	return func(o string) bool { return slices.Contains(os, o) }
}

func latencyExpectation(lb *scenarios.LatencyBound, shoppers []shopperRun, w windows) ExpectationResult {
	which := "checkout requests"
	if len(lb.Outcomes) > 0 {
		which = strings.Join(lb.Outcomes, "/") + " answers"
	}
	r := ExpectationResult{Window: string(lb.Window), Promise: fmt.Sprintf("p%g of %s %s stays under %s", lb.Percentile, which, windowWords(lb.Window), lb.Below.D())}
	in := outcomeSet(lb.Outcomes)
	var ls []time.Duration
	for _, s := range shoppers {
		for _, a := range s.attempts {
			if w.contains(lb.Window, a.at) && in(a.status) {
				ls = append(ls, a.latency)
			}
		}
	}
	if len(ls) == 0 {
		r.Observed = "no such requests"
		return r
	}
	p := stats.PercentileOf(ls, lb.Percentile)
	r.Held = p < lb.Below.D()
	r.Observed = fmt.Sprintf("p%g %s over %d requests", lb.Percentile, p.Round(time.Millisecond), len(ls))
	return r
}

func ratioExpectation(rb *scenarios.RatioBound, shoppers []shopperRun, w windows) ExpectationResult {
	var bounds []string
	if rb.AtLeast != nil {
		bounds = append(bounds, fmt.Sprintf("at least %g%%", *rb.AtLeast*100))
	}
	if rb.AtMost != nil {
		bounds = append(bounds, fmt.Sprintf("at most %g%%", *rb.AtMost*100))
	}
	r := ExpectationResult{Window: string(rb.Window), Promise: fmt.Sprintf("%s of shoppers arriving %s end %s", strings.Join(bounds, " and "), windowWords(rb.Window), strings.Join(rb.Outcomes, " or "))}
	in := outcomeSet(rb.Outcomes)
	n, hit := 0, 0
	for _, s := range shoppers {
		if s.outcome == "" || s.outcome == "dropped" || !w.contains(rb.Window, s.scheduled) {
			continue
		}
		n++
		if in(s.outcome) {
			hit++
		}
	}
	if n == 0 {
		r.Observed = "no shoppers in that window"
		return r
	}
	ratio := float64(hit) / float64(n)
	r.Held = (rb.AtLeast == nil || ratio >= *rb.AtLeast) && (rb.AtMost == nil || ratio <= *rb.AtMost)
	r.Observed = fmt.Sprintf("%.1f%% (%d of %d)", ratio*100, hit, n)
	return r
}

func degradedExpectation(d *scenarios.DegradedSeen, shoppers []shopperRun, w windows) ExpectationResult {
	r := ExpectationResult{Window: string(d.Window), Promise: fmt.Sprintf("at least %d answers %s are marked degraded", d.AtLeast, windowWords(d.Window))}
	n := 0
	for _, s := range shoppers {
		for _, a := range s.attempts {
			if a.degraded && w.contains(d.Window, a.at) {
				n++
			}
		}
	}
	r.Held = n >= d.AtLeast
	r.Observed = fmt.Sprintf("%d degraded answers", n)
	return r
}

func windowWords(w scenarios.Window) string {
	switch w {
	case "before":
		return "before the fault"
	case "after":
		return "after the fault"
	case "all", "":
		return "over the whole run"
	}
	return "during the fault"
}

// invariantResults turns the invariant counts into promises: each is zero
// unless the scenario allows more. An invariant whose facts the system
// could not give (notChecked, with what it needs) is marked not checked.
func invariantResults(iv Invariants, allow map[string]int64, notChecked map[string]string) []ExpectationResult {
	names := scenarios.InvariantNames() // the names a scenario may allow
	counts := iv.ByName()
	out := make([]ExpectationResult, 0, len(names))
	for _, n := range names {
		limit := allow[n]
		r := ExpectationResult{Promise: fmt.Sprintf("%s is at most %d", strings.ReplaceAll(n, "_", " "), limit), Held: counts[n] <= limit, Observed: fmt.Sprint(counts[n]), Invariant: n}
		if needs, ok := notChecked[n]; ok {
			r = ExpectationResult{Promise: r.Promise, Observed: "not checked", Invariant: n, NotChecked: true, Needs: needs}
		}
		out = append(out, r)
	}
	return out
}
