package judge

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gameday-dev/gameday/internal/stats"

	"github.com/gameday-dev/gameday/scenarios"
)

// Attempt is one checkout request as the verdict sees it.
type Attempt struct {
	At       time.Duration `json:"at_ns"`      // when it was sent, from the start of the load
	Latency  time.Duration `json:"latency_ns"` // answer time minus its start (for a first attempt, minus the scheduled start)
	Status   string        `json:"status"`
	Degraded bool          `json:"degraded,omitempty"`
}

// Shopper is one shopper as judging sees it: what the promises read (when
// it arrived, how it ended, its attempts) and what reconciliation reads
// (its checkout id, when it left, what it was told).
type Shopper struct {
	ID   string `json:"id"`             // its checkout id
	Shop string `json:"shop,omitempty"` // its shop, in a sale across shops
	// Journey is the journey of a visit (Observations.Visits); "" for a
	// purchase.
	Journey   string        `json:"journey,omitempty"`
	Shard     int           `json:"shard"`        // the load worker that timed it, when the load came from workers
	Scheduled time.Duration `json:"scheduled_ns"` // its arrival, from the start of the load
	Outcome   Outcome       `json:"outcome"`      // "" when it never started
	Attempts  []Attempt     `json:"attempts"`
	LeftAt    time.Time     `json:"left_at"` // when the shopper gave up waiting (its deadline)
	// Finished is when it got its final answer or left, from the start
	// of the load; zero when it never started.
	Finished time.Duration `json:"finished_ns"`
	// Cut: the runner stopped the load while this shopper was in flight;
	// it did not leave of its own accord, so a charge it did not see
	// confirmed is the interruption's, not the system's.
	Cut bool `json:"cut,omitempty"`
	// Told is what the answer to the shopper's last attempt meant
	// ("unavailable", "retry_later", ...); "" when it left before one came.
	Told string `json:"told"`
	// ToldPending is when the shopper's last answer that said the
	// purchase was going on or paid and not yet confirmed (retry_later:
	// in progress, pending) came; zero when none did, when a final
	// answer after it said the purchase failed, or when the purchase went
	// on to its next step (a pending answer speaks for its own step). A
	// refusal after it on that step (come back) does not unsay it. A
	// shopper told so left knowing it might have bought.
	ToldPending time.Time `json:"told_pending"`
	// ReadLate: it left at its deadline with its last request unanswered
	// while the machine that timed it was stalled (or just after), so
	// that an answer the system sent in time may have been taken too
	// late. Judging marks it from the stalls (markReadLate); the
	// observations never hold it.
	ReadLate bool `json:"-"`
}

// Span is when a fault was in place: from its injection to the moment it
// was gone (a killed process reachable again, as the system under test
// reaches it). Lifted is when the runner began to lift it: a breaker's
// probe may get through between the two.
type Span struct {
	From   time.Duration `json:"from_ns"`
	Lifted time.Duration `json:"lifted_ns"`
	To     time.Duration `json:"to_ns"`
}

// Windows are the parts of the run a promise can look at.
type Windows struct {
	Faults []Span // when each fault was in place
	End    time.Duration
}

func (w Windows) Contains(name scenarios.Window, t time.Duration) bool {
	switch name {
	case "all", "":
		return true
	case "before":
		return len(w.Faults) == 0 || t < w.Faults[0].From
	case "after":
		if len(w.Faults) == 0 {
			return false
		}
		last := w.Faults[0].To
		for _, f := range w.Faults {
			last = max(last, f.To)
		}
		return t >= last
	case "during":
		for _, f := range w.Faults {
			if t >= f.From && t < f.To {
				return true
			}
		}
	}
	return false
}

// Bounds returns the part of the run a window names, as [from, to).
func (w Windows) Bounds(name scenarios.Window) (time.Duration, time.Duration) {
	switch name {
	case "before":
		if len(w.Faults) == 0 {
			return 0, w.End
		}
		return 0, w.Faults[0].From
	case "after":
		last := time.Duration(0)
		for _, f := range w.Faults {
			last = max(last, f.To)
		}
		return last, w.End
	case "during":
		if len(w.Faults) == 0 {
			return 0, 0
		}
		from, to := w.Faults[0].From, w.Faults[0].To
		for _, f := range w.Faults {
			from, to = min(from, f.From), max(to, f.To)
		}
		return from, to
	}
	return 0, w.End
}

// FaultTimes are the real start and end of each fault, by name.
type FaultTimes map[string]Span

// Evaluate checks every expectation of the scenario against what was seen:
// the shoppers (the purchases, and the visits of other journeys, told
// apart by Journey: a promise reads the purchases unless it names
// journeys), the windows and real spans of the faults, the breakers'
// transitions by dependency, and the metrics' samples by query (nil when
// none were taken).
func Evaluate(sc *scenarios.Scenario, shoppers []Shopper, w Windows, ft FaultTimes, faultOrder []scenarios.Fault, brk map[string][]Transition, metrics map[string][]Sample, moves map[string]Move) []ExpectationResult {
	out := make([]ExpectationResult, 0, len(sc.Expect))
	all := shoppers
	shoppers = purchasesOf(all)
	for _, e := range sc.Expect {
		switch {
		case e.BreakerOpens != nil:
			out = append(out, breakerExpectation(e.BreakerOpens, "open", ft, faultOrder, brk))
		case e.BreakerCloses != nil:
			out = append(out, breakerExpectation(e.BreakerCloses, "closed", ft, faultOrder, brk))
		case e.Latency != nil:
			out = append(out, latencyExpectation(e.Latency, only(all, e.Latency.Select, sc.Shops), w, selectWords(e.Latency.Select)))
		case e.Ratio != nil:
			out = append(out, ratioExpectation(e.Ratio, only(all, e.Ratio.Select, sc.Shops), w, selectWords(e.Ratio.Select)))
		case e.Moved != nil:
			out = append(out, movedExpectation(e.Moved, moves))
		case e.BlastRadius != nil:
			out = append(out, blastRadiusExpectation(e.BlastRadius, only(all, e.BlastRadius.Select, sc.Shops), w))
		case e.Degraded != nil:
			out = append(out, degradedExpectation(e.Degraded, shoppers, w))
		case e.FastRefusals != nil:
			out = append(out, fastRefusalsExpectation(e.FastRefusals, shoppers, ft, w.End))
		case e.Metric != nil:
			out = append(out, metricExpectation(e.Metric, metrics[e.Metric.Key()], metrics != nil, w))
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
func breakerExpectation(b *scenarios.BreakerWithin, state string, ft FaultTimes, order []scenarios.Fault, brk map[string][]Transition) ExpectationResult {
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
	after, ok := firstAfter(brk[b.Dependency], state, sp.From)
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

// Breakers are the breakers' records: each dependency's transitions and,
// where a fault of the scenario was on it, how long after the fault's
// start it opened and after the fault's end it closed.
func Breakers(trans map[string][]Transition, faults []scenarios.Fault, ft FaultTimes) map[string]BreakerRecord {
	out := make(map[string]BreakerRecord, len(trans))
	for dep, ts := range trans {
		br := BreakerRecord{Transitions: ts}
		if f, ok := faultFor("", dep, faults); ok {
			if sp, ok := ft[f.Name]; ok {
				if a, ok := firstAfter(ts, "open", sp.From); ok {
					v := a.Milliseconds()
					br.OpenedAfterMS = &v
				}
				if a, ok := closedAfter(ts, sp); ok {
					v := a.Milliseconds()
					br.ClosedAfterMS = &v
				}
			}
		}
		out[dep] = br
	}
	return out
}

// closedAfter is how long after the fault's end (sp.To: the dependency
// back, as the system under test reaches it) the breaker closed, counting
// from its first close once lifting began: a breaker whose probe got
// through before the runner saw the dependency back closed with it (0).
func closedAfter(ts []Transition, sp Span) (time.Duration, bool) {
	at, ok := firstAfter(ts, "closed", sp.Lifted)
	if !ok {
		return 0, false
	}
	return max(0, sp.Lifted+at-sp.To), true
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

// latencyExpectation is a latency promise over checkout requests, or, of
// purchases, over whole purchases: each shopper that arrived in the
// window, from its scheduled arrival to its final answer or its leaving.
func latencyExpectation(lb *scenarios.LatencyBound, shoppers []Shopper, w Windows, of string) ExpectationResult {
	in := outcomeSet(lb.Outcomes)
	var ls []time.Duration
	var unit, promise string
	if lb.Of == scenarios.LatencyOfPurchases {
		unit = "purchases"
		which := "purchases" + of
		if len(lb.Outcomes) > 0 {
			which = strings.Join(lb.Outcomes, "/") + " purchases" + of
		}
		promise = fmt.Sprintf("p%g of %s arriving %s, first request to final answer, stays under %s", lb.Percentile, which, WindowWords(lb.Window), lb.Below.D())
		for _, s := range shoppers {
			if s.Outcome != "" && s.Outcome != Dropped && w.Contains(lb.Window, s.Scheduled) && in(string(s.Outcome)) {
				ls = append(ls, s.Finished-s.Scheduled)
			}
		}
	} else {
		unit = "requests"
		which := "checkout requests" + of
		if len(lb.Journeys) > 0 {
			which = "requests" + of
		}
		if len(lb.Outcomes) > 0 {
			which = strings.Join(lb.Outcomes, "/") + " answers" + of
		}
		promise = fmt.Sprintf("p%g of %s %s stays under %s", lb.Percentile, which, WindowWords(lb.Window), lb.Below.D())
		for _, s := range shoppers {
			for _, a := range s.Attempts {
				if w.Contains(lb.Window, a.At) && in(a.Status) {
					ls = append(ls, a.Latency)
				}
			}
		}
	}
	r := ExpectationResult{Window: string(lb.Window), Promise: promise}
	if len(ls) == 0 {
		r.Observed = "no such " + unit
		return r
	}
	p := stats.PercentileOf(ls, lb.Percentile)
	r.Held = p < lb.Below.D()
	r.Observed = fmt.Sprintf("p%g %s over %d %s", lb.Percentile, p.Round(time.Millisecond), len(ls), unit)
	return r
}

func ratioExpectation(rb *scenarios.RatioBound, shoppers []Shopper, w Windows, of string) ExpectationResult {
	var bounds []string
	if rb.AtLeast != nil {
		bounds = append(bounds, fmt.Sprintf("at least %g%%", *rb.AtLeast*100))
	}
	if rb.AtMost != nil {
		bounds = append(bounds, fmt.Sprintf("at most %g%%", *rb.AtMost*100))
	}
	who := "shoppers"
	if len(rb.Journeys) > 0 && !slices.Contains(rb.Journeys, scenarios.PurchaseJourney) {
		who = "visitors"
	}
	r := ExpectationResult{Window: string(rb.Window), Promise: fmt.Sprintf("%s of %s%s arriving %s: outcome %s", strings.Join(bounds, " and "), who, of, WindowWords(rb.Window), strings.Join(rb.Outcomes, " or "))}
	in := outcomeSet(rb.Outcomes)
	n, hit := 0, 0
	for _, s := range shoppers {
		if s.Outcome == "" || s.Outcome == Dropped || !w.Contains(rb.Window, s.Scheduled) {
			continue
		}
		n++
		if in(string(s.Outcome)) {
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

func degradedExpectation(d *scenarios.DegradedSeen, shoppers []Shopper, w Windows) ExpectationResult {
	r := ExpectationResult{Window: string(d.Window), Promise: fmt.Sprintf("at least %d answers %s are marked degraded", d.AtLeast, WindowWords(d.Window))}
	n := 0
	for _, s := range shoppers {
		for _, a := range s.Attempts {
			if a.Degraded && w.Contains(d.Window, a.At) {
				n++
			}
		}
	}
	r.Held = n >= d.AtLeast
	r.Observed = fmt.Sprintf("%d degraded answers", n)
	return r
}

// WindowWords says a window in words, for promises ("during the fault").
func WindowWords(w scenarios.Window) string {
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

// InvariantResults turns the invariant counts into promises: each is zero
// unless the scenario allows more. An invariant whose facts the system
// could not give (notChecked, with what it needs) is marked not checked.
func InvariantResults(iv Invariants, allow map[string]int64, notChecked map[string]string, examples map[string]Cases) []ExpectationResult {
	names := scenarios.InvariantNames() // the names a scenario may allow
	counts := iv.ByName()
	out := make([]ExpectationResult, 0, len(names))
	for _, n := range names {
		limit := allow[n]
		r := ExpectationResult{Promise: fmt.Sprintf("%s is at most %d", strings.ReplaceAll(n, "_", " "), limit), Held: counts[n] <= limit, Observed: fmt.Sprint(counts[n]), Invariant: n}
		if !r.Held {
			r.Examples, r.Checkouts = examples[n].IDs, examples[n].Checkouts
			r.Leads, r.Leading = examples[n].Leads, examples[n].Leading
		}
		if needs, ok := notChecked[n]; ok {
			r = ExpectationResult{Promise: r.Promise, Observed: "not checked", Invariant: n, NotChecked: true, Needs: needs}
		}
		out = append(out, r)
	}
	return out
}
