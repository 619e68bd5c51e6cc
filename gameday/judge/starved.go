package judge

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gameday-dev/gameday/scenarios"
)

// Stall is a time in which a machine that measured the run could not run
// the drill: its timer was due at From and fired at To, both from the
// start of the load. Of the system under test's own (Starvation.System),
// Waited is how long its threads waited for a CPU within it; zero for a
// timer's stall, stalled throughout.
type Stall struct {
	From   time.Duration `json:"from_ns"`
	To     time.Duration `json:"to_ns"`
	Waited time.Duration `json:"waited_ns,omitempty"`
}

// stalled is how much of the stall's time was stalled.
func (s Stall) stalled() time.Duration {
	if s.Waited > 0 {
		return min(s.Waited, s.To-s.From)
	}
	return s.To - s.From
}

// part is the stalled time of the part d of the stall: all of it for a
// timer's, the share waited for the system's.
func (s Stall) part(d time.Duration) time.Duration {
	if s.Waited <= 0 || s.To <= s.From {
		return d
	}
	return time.Duration(float64(d) * float64(s.stalled()) / float64(s.To-s.From))
}

// Starvation is the evidence that the machines measuring a run were
// starved, kept by the machine that measured each observation, and that
// the system under test was, where it shares the runner's host.
type Starvation struct {
	// Runner is the runner's own: it sampled the breakers and, unless the
	// load came from workers, sent and timed the shoppers.
	Runner []Stall `json:"runner"`
	// Shards, when the load came from workers, are each worker's, by shard
	// index (Shopper.Shard): a promise over shoppers is excused only by
	// the stalls of the machines that timed them, never by the
	// coordinator's, which sent nothing.
	Shards [][]Stall `json:"shards,omitempty"`
	// System is the system under test's own, where it runs on the
	// runner's host: times in which its threads, ready to run, waited for
	// a CPU (hostmon), each with the time waited. They excuse what the
	// system did in them, whoever timed it, in proportion to that time;
	// nil where the system runs elsewhere.
	System []Stall `json:"system,omitempty"`
}

// measurer is the stalls of the machine that timed shopper s: a worker's
// in a sharded run, else the runner's.
func (st Starvation) measurer(s *Shopper) []Stall {
	if st.Shards == nil {
		return st.Runner
	}
	if s.Shard >= 0 && s.Shard < len(st.Shards) {
		return st.Shards[s.Shard]
	}
	return nil
}

// of is the evidence that applies to what shopper s saw: its measuring
// machine's stalls and the system's.
func (st Starvation) of(s *Shopper) evidence {
	return evidence{own: st.measurer(s), system: st.System}
}

// evidence is what may explain a delay in one observation: the stalls of
// the machine that measured it (own), stalled throughout, and the
// system's (system), stalled for the share of each that its threads
// waited. Each list is in order and its stalls do not meet.
type evidence struct{ own, system []Stall }

func (e evidence) empty() bool { return len(e.own) == 0 && len(e.system) == 0 }

// overlap is the stalled time within [from, to): where the measuring
// machine stalled, all of it; elsewhere, the system's share of its
// stalls. Where both stalled it counts once.
func (e evidence) overlap(from, to time.Duration) time.Duration {
	d := overlap(e.own, from, to)
	for _, s := range e.system {
		lo, hi := max(from, s.From), min(to, s.To)
		if hi <= lo {
			continue
		}
		d += s.part(hi - lo - overlap(e.own, lo, hi))
	}
	return d
}

// inShadow reports whether t falls in a stall of either, or within its
// stalled time after it.
func (e evidence) inShadow(t time.Duration) bool {
	return inShadow(e.own, t) || inShadow(e.system, t)
}

// Observed is what a run saw that its promises are judged on: Evaluate's
// inputs, without the metrics' samples and the moves, which the machine's
// stalls never excuse.
type Observed struct {
	Shoppers []Shopper
	Windows  Windows
	Faults   FaultTimes
	Order    []scenarios.Fault
	Breakers map[string][]Transition
}

// Excuse sorts a run's broken promises into those a starved machine can
// explain and the others. The rule is one for every promise: each
// observation a stall touched is given the benefit of the doubt — a
// duration loses the stalled time it overlaps, and an outcome the clock
// decided (a shopper that gave up, a request the system found too late)
// during a stall, or within one stall's length after it (what the stall
// held back comes out then), is not held against the promise: a shopper's
// is left uncounted — and the promise is judged again. What the system
// answered (a refusal, an error, an answer without the degraded marker)
// is its own, stall or not. A promise that holds then is excused, with
// the evidence; one that still fails is a failure the stalls cannot
// explain (0 % confirmed, a breaker that never opened) and stays one.
// The evidence is the stalls of the machine that measured the
// observation and, where the system under test runs on the runner's host,
// the system's own (Starvation.System), which count for the share of
// their time its threads waited for a CPU. Metric and PromQL promises are
// the system's own figures, as Prometheus scraped them: the runner's
// timer says nothing of them, and they are never excused; nor is how a
// move ended, nor a count of degraded answers (the system's markers).
// Books are never excused: money and stock must be right however slow the
// machine. Of the invariants only dropped arrivals are the generator's,
// excused when every one was due while the machine that was to send it
// was stalled or just after (never by the system's stalls).
func Excuse(sc *scenarios.Scenario, expectations, checks []ExpectationResult, o Observed, st Starvation) (starved []string, others int) {
	for i, r := range expectations {
		if r.Held || r.NotChecked {
			continue
		}
		if i < len(sc.Expect) {
			if why, ok := excuse(sc, sc.Expect[i], r, o, st); ok {
				starved = append(starved, why)
				continue
			}
		}
		others++
	}
	for _, c := range checks {
		if c.Held || c.NotChecked || c.Unjudged != "" {
			continue
		}
		if c.Invariant == "dropped" {
			if why, ok := excuseDropped(c, o.Shoppers, st); ok {
				starved = append(starved, why)
				continue
			}
		}
		others++
	}
	return starved, others
}

// excuse judges the broken promise e again with the benefit of the doubt,
// and says why it is excused when it then holds.
func excuse(sc *scenarios.Scenario, e scenarios.Expectation, r ExpectationResult, o Observed, st Starvation) (string, bool) {
	// A degraded promise counts the system's own markers: an answer that
	// came without one is the system's, and one that never came (a
	// shopper that gave up, a request a stall held out of the window) is
	// unknown, which is never counted as a success.
	if e.Metric != nil || e.Moved != nil || e.Degraded != nil {
		return "", false
	}
	breaker := e.BreakerOpens != nil || e.BreakerCloses != nil
	if !st.any(breaker) {
		return "", false
	}
	// What the stalls could touch: for a breaker, from the fault's start
	// or lifting on; for shoppers, from the window's start to the end of
	// the load (a shopper arriving in the window ends up to its patience
	// later).
	from, _ := expectationSpan(e, o.Windows, o.Faults, o.Order, o.Windows.End)
	to := o.Windows.End
	var stalled time.Duration
	if breaker {
		stalled = overlap(st.Runner, from, to)
	} else {
		stalled = st.stalledBetween(from, to)
	}
	best, ok := bestCase(sc, e, o, st)
	if !ok || !best.Held {
		return "", false
	}
	var evidence []string
	if stalled > 0 || len(st.System) == 0 {
		evidence = append(evidence, fmt.Sprintf("the machine that measured it stalled %s in all", stalled.Round(time.Millisecond)))
	}
	if waited := overlap(st.System, from, to); waited > 0 {
		evidence = append(evidence, fmt.Sprintf("the system under test's threads waited %s for a CPU", waited.Round(time.Millisecond)))
	}
	return fmt.Sprintf("%s (observed: %s; %s between %s and %s; given the benefit of the doubt for what the stalls touched: %s)",
		r.Promise, r.Observed, strings.Join(evidence, " and "), from.Round(time.Millisecond), to.Round(time.Millisecond), best.Observed), true
}

// any reports whether there is any evidence: the system's, and of the
// runner's for the breakers, else of the machines that timed the
// shoppers.
func (st Starvation) any(breakers bool) bool {
	if len(st.System) > 0 {
		return true
	}
	if breakers || st.Shards == nil {
		return len(st.Runner) > 0
	}
	for _, s := range st.Shards {
		if len(s) > 0 {
			return true
		}
	}
	return false
}

// stalledBetween is the most stalled time any one measuring machine shows
// within [from, to).
func (st Starvation) stalledBetween(from, to time.Duration) time.Duration {
	if st.Shards == nil {
		return overlap(st.Runner, from, to)
	}
	var worst time.Duration
	for _, s := range st.Shards {
		worst = max(worst, overlap(s, from, to))
	}
	return worst
}

// bestCase judges e on observations adjusted in its favour.
func bestCase(sc *scenarios.Scenario, e scenarios.Expectation, o Observed, st Starvation) (ExpectationResult, bool) {
	judge := func(e scenarios.Expectation, shoppers []Shopper, brk map[string][]Transition) ExpectationResult {
		one := *sc
		one.Expect = []scenarios.Expectation{e}
		return Evaluate(&one, shoppers, o.Windows, o.Faults, o.Order, brk, nil, nil)[0]
	}
	switch {
	case e.BreakerOpens != nil:
		return judge(e, o.Shoppers, earlierBreakers(o, e.BreakerOpens, false, evidence{own: st.Runner, system: st.System})), true
	case e.BreakerCloses != nil:
		return judge(e, o.Shoppers, earlierBreakers(o, e.BreakerCloses, true, evidence{own: st.Runner, system: st.System})), true
	case e.Latency != nil, e.FastRefusals != nil:
		return judge(e, adjust(o.Shoppers, st, func(*Shopper) bool { return true }, shorter), o.Breakers), true
	case e.Ratio != nil:
		// Each bound on its own: a shopper cannot be counted for both.
		rb := *e.Ratio
		var results []ExpectationResult
		for _, b := range []struct {
			atLeast, atMost *float64
		}{{rb.AtLeast, nil}, {nil, rb.AtMost}} {
			if b.atLeast == nil && b.atMost == nil {
				continue
			}
			one := rb
			one.AtLeast, one.AtMost = b.atLeast, b.atMost
			in := outcomeSet(rb.Outcomes)
			flip := func(s *Shopper, stalls evidence) {
				if !timedOut(s) || !stalls.inShadow(s.Finished) {
					return
				}
				// Counted against the bound: what it would have been
				// is unknown, so it is not counted at all.
				if b.atLeast != nil && !in(string(s.Outcome)) || b.atMost != nil && in(string(s.Outcome)) {
					s.Outcome = unobserved
				}
			}
			results = append(results, judge(scenarios.Expectation{Ratio: &one}, adjust(o.Shoppers, st, func(*Shopper) bool { return true }, flip), o.Breakers))
		}
		best := ExpectationResult{Held: true}
		for i, r := range results {
			best.Held = best.Held && r.Held
			if i > 0 {
				best.Observed += "; "
			}
			best.Observed += r.Observed
		}
		return best, len(results) > 0
	case e.BlastRadius != nil:
		// Only the shoppers of the part judged: the baseline's, given the
		// benefit of the doubt, would make the comparison stricter.
		name, from, to := e.BlastRadius.Span()
		judged := span{name: name, from: from, to: to}
		inJudged := func(s *Shopper) bool { return judged.contains(o.Windows, s.Scheduled) }
		return judge(e, adjust(o.Shoppers, st, inJudged, func(s *Shopper, stalls evidence) {
			shorter(s, stalls)
			if timedOut(s) && stalls.inShadow(s.Finished) {
				s.Outcome = unobserved
			}
		}), o.Breakers), true
	}
	return ExpectationResult{}, false
}

// unobserved is the outcome, in the best case, of a shopper whose ending
// the clock decided in a stall's shadow and that counted against the
// promise: what the system would have answered it is unknown, so the
// promise is judged on the shoppers the stalls did not touch (as a shopper
// never started, it is counted nowhere). It is never counted as a success:
// a stall explains a miss, it does not show what the system would have
// done.
const unobserved Outcome = ""

// adjust copies shoppers, applying f with each one's evidence to those
// pick takes and the evidence touches.
func adjust(shoppers []Shopper, st Starvation, pick func(*Shopper) bool, f func(*Shopper, evidence)) []Shopper {
	out := make([]Shopper, len(shoppers))
	for i := range shoppers {
		s := shoppers[i]
		if stalls := st.of(&s); !stalls.empty() && pick(&s) {
			s.Attempts = slices.Clone(s.Attempts)
			f(&s, stalls)
		}
		out[i] = s
	}
	return out
}

// shorter takes from each of the shopper's durations the stalled time it
// overlaps: a first attempt's from its scheduled start, a later one's from
// its sending, the whole purchase's from arrival to final answer.
func shorter(s *Shopper, stalls evidence) {
	for k := range s.Attempts {
		a := &s.Attempts[k]
		start := a.At
		if k == 0 {
			start = s.Scheduled
		}
		a.Latency -= stalls.overlap(start, start+a.Latency)
	}
	if s.Finished > s.Scheduled {
		s.Finished -= stalls.overlap(s.Scheduled, s.Finished)
	}
}

// timedOut reports whether how the shopper ended was decided by the
// clock of the machine that timed it rather than by the system's answer:
// it left when its deadline passed, or would have before it could come
// back (gave up), or the system saw that deadline pass (too late: a
// stalled runner sends late, a starved system reads late). A stall can
// explain these. A refusal, an
// error, a decline or sold out is what the system answered, and no stall
// of the runner's explains it: the best case never changes it.
func timedOut(s *Shopper) bool {
	return s.Outcome == GaveUp || s.Outcome == TooLate
}

// earlierBreakers moves the dependency's transitions after the reference
// (the fault's start for opens, its lifting for closes) earlier by the
// stalled time between the reference and each: the runner's, whose probe
// read them, and the system's, whose breaker it is.
func earlierBreakers(o Observed, b *scenarios.BreakerWithin, closes bool, stalls evidence) map[string][]Transition {
	out := make(map[string][]Transition, len(o.Breakers))
	for dep, ts := range o.Breakers {
		out[dep] = ts
	}
	f, ok := faultFor(b.Fault, b.Dependency, o.Order)
	sp, ok2 := o.Faults[f.Name]
	if !ok || !ok2 {
		return out
	}
	ref := sp.From
	if closes {
		ref = sp.Lifted
	}
	ts := slices.Clone(o.Breakers[b.Dependency])
	for i := range ts {
		at := time.Duration(ts[i].AtMS) * time.Millisecond
		if at > ref {
			ts[i].AtMS = (at - stalls.overlap(ref, at)).Milliseconds()
		}
	}
	out[b.Dependency] = ts
	return out
}

// excuseDropped excuses dropped arrivals when every one was due while the
// machine that was to send it was stalled, or within one stall's length
// after (the shoppers the stall held up were still holding the pool). The
// system's stalls do not: the generator is the runner's.
func excuseDropped(c ExpectationResult, shoppers []Shopper, st Starvation) (string, bool) {
	n, explained := 0, 0
	var stalled time.Duration
	for i := range shoppers {
		s := &shoppers[i]
		if s.Outcome != Dropped {
			continue
		}
		n++
		if stalls := st.measurer(s); inShadow(stalls, s.Scheduled) {
			explained++
			stalled = max(stalled, longest(stalls))
		}
	}
	if n == 0 || explained < n {
		return "", false
	}
	return fmt.Sprintf("%s (observed: %s; every dropped arrival was due while the machine that was to send it was stalled, up to %s, or just after)", c.Promise, c.Observed, stalled.Round(time.Millisecond)), true
}

// overlap is how much of [from, to) the stalls cover: of a stall of the
// system's, the share its threads waited.
func overlap(stalls []Stall, from, to time.Duration) time.Duration {
	var d time.Duration
	for _, s := range stalls {
		if lo, hi := max(from, s.From), min(to, s.To); hi > lo {
			d += s.part(hi - lo)
		}
	}
	return d
}

// inShadow reports whether t falls in a stall or within its stalled time
// after it (what the stall held back comes out then).
func inShadow(stalls []Stall, t time.Duration) bool {
	_, ok := shadowing(stalls, t)
	return ok
}

// shadowing is the stall in whose shadow t falls (inShadow).
func shadowing(stalls []Stall, t time.Duration) (Stall, bool) {
	for _, s := range stalls {
		if t >= s.From && t < s.To+s.stalled() {
			return s, true
		}
	}
	return Stall{}, false
}

func longest(stalls []Stall) time.Duration {
	var d time.Duration
	for _, s := range stalls {
		d = max(d, s.To-s.From)
	}
	return d
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
			return sp.Lifted, end
		}
		return sp.From, end
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
	case e.FastRefusals != nil:
		if sp, ok := ft[e.FastRefusals.Fault]; ok {
			return sp.From, min(end, sp.To+e.FastRefusals.FallsWithin.D()+settle)
		}
	case e.BlastRadius != nil:
		name, from, to := e.BlastRadius.Span()
		if to > 0 {
			return from, to
		}
		return w.Bounds(name)
	}
	return 0, end
}

// markReadLate marks the shoppers whose leaving a stall may have decided
// (Shopper.ReadLate): each that gave up at its deadline with its last
// request unanswered (it took no answer: Told is empty), not cut by the
// runner, and left in a stall of the machine that timed it or within the
// stall's length after it. Such a shopper may have been sent its
// confirmation in time and taken it too late, so a charge made before its
// deadline is no proof that it was charged after leaving. Only the
// measuring machine's stalls mark it, never the system's: a starved
// system that answered late answered late. It returns a marked copy and
// how many are marked (shoppers itself when none is).
func markReadLate(shoppers []Shopper, st Starvation) ([]Shopper, int) {
	var out []Shopper
	n := 0
	for i := range shoppers {
		s := &shoppers[i]
		if s.Outcome != GaveUp || s.Cut || s.Told != "" || len(s.Attempts) == 0 || !inShadow(st.measurer(s), s.Finished) {
			continue
		}
		if out == nil {
			out = slices.Clone(shoppers)
		}
		out[i].ReadLate = true
		n++
	}
	if out == nil {
		return shoppers, 0
	}
	return out, n
}

// readLateCharges says which charges after leaving the stalls kept from
// being counted, or "" when none: their number is what the books count
// with the shoppers as observed beyond what they count with those marked
// (counted); they are named by the marked shoppers charged, in time, by
// the books. Reconciling again costs only a run with shoppers marked.
func readLateCharges(books []Books, shoppers, marked []Shopper, counted int64, st Starvation) string {
	var all Judged
	reconcileBooks(books, shoppers, &all)
	n := all.Invariants.ChargedAfterLeaving - counted
	if n <= 0 {
		return ""
	}
	var ids []string
	var longest time.Duration
	for i := range marked {
		s := &marked[i]
		if !s.ReadLate || !chargedBy(books, s.ID, s.LeftAt) {
			continue
		}
		ids = append(ids, s.ID)
		if sp, ok := shadowing(st.measurer(s), s.Finished); ok {
			longest = max(longest, sp.stalled())
		}
	}
	ids = SortIDs(ids)
	what := "1 charge"
	if n > 1 {
		what = fmt.Sprintf("%d charges", n)
	}
	of := ""
	if len(ids) > 0 {
		word := "checkout"
		if len(ids) > 1 {
			word = "checkouts"
		}
		of = fmt.Sprintf(" of %s %s", word, strings.Join(ids[:min(len(ids), MaxExamples)], ", "))
		if len(ids) > MaxExamples {
			of += ", ..."
		}
	}
	return fmt.Sprintf("charged after leaving: %s%s, made before the shopper's deadline, not counted: the shopper left at its deadline with no answer taken while the machine that timed it was stalled (up to %s) or just after, so the system's confirmation may have been on its way",
		what, of, longest.Round(time.Millisecond))
}

// chargedBy reports whether the books hold an approved charge of checkout
// id made at or before by.
func chargedBy(books []Books, id string, by time.Time) bool {
	for _, b := range books {
		if b.Facts == nil {
			continue
		}
		for _, c := range b.Facts.Charges {
			if c.CheckoutID == id && c.Status == "approved" && !c.At.IsZero() && !c.At.After(by) {
				return true
			}
		}
	}
	return false
}
