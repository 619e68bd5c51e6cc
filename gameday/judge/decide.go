package judge

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gameday-dev/gameday/gameday/runrecord"
)

// Ending is how the load ended and what was judged of it: everything the
// verdict is decided from, and nothing the drill must still do. Decide
// turns it into the verdict, so that the precedence is one pure function,
// tested on its own (decide_test.go).
type Ending struct {
	// Fault is the error of a fault that could not be injected or lifted
	// at its time, which stopped the drill; nil when none did.
	Fault error
	// Idle are the request-aware faults (lost_reply, the HTTP toxics)
	// that acted on no request, each with what it saw, and those whose
	// hits could not be read back, with why: such a fault was in place
	// and did nothing, or may have, and a drill that held up to it proved
	// nothing of it.
	Idle []string
	// Left is the error of the removal of the faults when the load ended,
	// when some could not be removed; nil when all were.
	Left error
	// Aborted: the halt condition (Halt says why) or the abort guard
	// (Guard says why) stopped the load.
	Aborted bool
	// ShardLost is the error of a load worker that failed, so that the
	// load was not sent whole; nil when none did.
	ShardLost error
	// Interrupted: the run was asked to stop (SIGINT, SIGTERM).
	Interrupted bool
	// Halt is the halt condition's reason when it stopped the load; Guard
	// the abort guard's otherwise, when it did.
	Halt, Guard string
	// Unsettled: the books were read before they settled (the run was
	// interrupted and did not wait for them, or the system's settled
	// fact never answered).
	Unsettled bool
	// Untrusted says why the stock figures cannot be trusted (the books
	// gained orders of other runs while the run was on: OtherRuns), whose
	// invariants Checks then mark unjudged; "" when they can be.
	Untrusted string
	// Unread is the error of the books, or the parts of them, that could
	// not be read; Checks then judge what was read.
	Unread error
	// Expectations are the scenario's promises, judged; Checks the
	// invariants, judged (nil when the books could not be read).
	Expectations, Checks []ExpectationResult
	// Starved: for a broken promise or invariant, the account of the
	// machine starving while it was judged, or "" when it did not. Called
	// only when everything else held up to the promises.
	Starved func() (starved []string, others int)
	// Host describes the machine's starvation, for the reason.
	Host string
	// ReadLate says which charges after leaving were not counted because
	// a stall may have kept the shopper from taking its answer
	// (markReadLate); "" when none. Books right but for them are not a
	// pass.
	ReadLate string
}

// Judgement is the verdict, its reason, and the promises that failed while
// the machine was starved (recorded as the host's).
type Judgement struct {
	Verdict Verdict
	Reason  string
	Starved []string
}

// Decide applies the verdict's precedence. Money or stock proven wrong
// fails the run whatever else happened — a fault that could not be
// injected or lifted, a run cut short, books of which a part could not be
// read: what was reconciled is real, and the reason says what else went
// wrong; otherwise a run that could not be carried out is an error, and
// one cut short, or whose steady state failed before any fault, proves
// nothing. Books read before they settled (an interrupted run does not
// wait), or with a fault still in place (one that could not be removed
// when the load ended), prove only an oversell (units sold beyond the
// stock never come back): a held lease or a void still pending, or held
// back by the fault, would read as lost units, a charge without an order
// or a double charge. Of such books the rest is shown, not judged. A
// promise that could not be observed (a metric with no sample), or a
// request-aware fault that acted on no request, makes a run in which
// nothing failed inconclusive. A drill whose only broken
// promises fell while the runner's machine was starved measured the
// machine, and is inconclusive; so is one whose books were right but for
// charges after leaving that a stall kept from being judged (ReadLate).
func Decide(e Ending) Judgement {
	var books, checks, unjudged []ExpectationResult
	for _, c := range Provisional(slices.Clone(e.Checks), e.Unsettled, e.Left) {
		if c.Unjudged != "" {
			unjudged = append(unjudged, c)
			continue
		}
		checks = append(checks, c)
		if c.Invariant != "dropped" {
			books = append(books, c)
		}
	}
	shown := ""
	if b := broken(unjudged, ""); b != "" {
		shown = fmt.Sprintf("the books, %s, showed %s (not judged)", unjudged[0].Unjudged, b)
	}
	unread := func(reason string) string {
		if e.Unread != nil {
			reason += fmt.Sprintf("; besides, reconcile the books: %v", e.Unread)
		}
		return reason
	}
	also := func(reason string) string {
		if e.Untrusted != "" && !strings.HasPrefix(reason, e.Untrusted) {
			reason += "; besides, " + e.Untrusted
		}
		if shown != "" {
			reason += "; " + shown
		}
		return reason
	}
	switch {
	case broken(books, "") != "":
		reason := broken(books, "")
		if e.Fault != nil {
			reason += fmt.Sprintf("; besides, %v, and the drill was stopped", e.Fault)
		}
		if e.Left != nil {
			reason += fmt.Sprintf("; besides, %v", e.Left)
		}
		return Judgement{Verdict: runrecord.VerdictFail, Reason: also(unread(reason))}
	case e.Fault != nil:
		return Judgement{Verdict: runrecord.VerdictError, Reason: also(unread(fmt.Sprintf("%v; the drill was stopped", e.Fault)))}
	case e.Left != nil:
		return Judgement{Verdict: runrecord.VerdictError, Reason: also(unread(fmt.Sprintf("could not remove every fault when the load ended: %v", e.Left)))}
	case e.Unread != nil:
		return Judgement{Verdict: runrecord.VerdictError, Reason: also(fmt.Sprintf("reconcile the books: %v", e.Unread))}
	case e.Interrupted:
		return Judgement{Verdict: runrecord.VerdictInconclusive, Reason: also("interrupted: the load was stopped and every fault removed")}
	case e.Aborted && e.Halt != "":
		return Judgement{Verdict: runrecord.VerdictInconclusive, Reason: also("aborted by the halt condition: " + e.Halt)}
	case e.Aborted:
		return Judgement{Verdict: runrecord.VerdictInconclusive, Reason: also("aborted by the guard: " + e.Guard)}
	case e.ShardLost != nil:
		return Judgement{Verdict: runrecord.VerdictInconclusive, Reason: also(fmt.Sprintf("the load was not sent whole (%v): the load was stopped everywhere and every fault removed", e.ShardLost))}
	case steadyStateFailed(e.Expectations):
		return Judgement{Verdict: runrecord.VerdictInconclusive, Reason: also("the steady state failed before any fault: " + broken(e.Expectations, "before"))}
	}
	all := append(append([]ExpectationResult{}, e.Expectations...), checks...)
	b := broken(all, "")
	switch {
	case b == "" && e.Untrusted != "":
		return Judgement{Verdict: runrecord.VerdictInconclusive, Reason: also(e.Untrusted)}
	case b == "" && len(e.Idle) > 0:
		return Judgement{Verdict: runrecord.VerdictInconclusive, Reason: also("a fault acted on no request, or what it did is not known, so the drill proved nothing of it: " + strings.Join(e.Idle, "; "))}
	case b == "" && unobservedPromises(e.Expectations) != "":
		return Judgement{Verdict: runrecord.VerdictInconclusive, Reason: also("a promise could not be observed, and proves nothing either way: " + unobservedPromises(e.Expectations))}
	case b == "" && e.ReadLate != "":
		return Judgement{Verdict: runrecord.VerdictInconclusive, Starved: []string{e.ReadLate},
			Reason: fmt.Sprintf("the machine could not keep up with the drill (%s): %s", e.Host, e.ReadLate)}
	case b == "":
		return Judgement{Verdict: runrecord.VerdictPass}
	}
	var starved []string
	others := 1
	if e.Starved != nil {
		starved, others = e.Starved()
	}
	if e.ReadLate != "" {
		starved = append(starved, e.ReadLate)
	}
	if len(starved) > 0 && others == 0 {
		return Judgement{Verdict: runrecord.VerdictInconclusive, Starved: starved,
			Reason: fmt.Sprintf("the machine could not keep up with the drill (%s): these promises failed while it was starved, and measure the machine, not the system under test: %s", e.Host, strings.Join(starved, "; "))}
	}
	return Judgement{Verdict: runrecord.VerdictFail, Reason: also(b), Starved: starved}
}

// Provisional marks the invariant checks that books read before they
// settled (an interrupted run does not wait for them), or with a fault
// still in place (one that could not be removed when the load ended),
// cannot judge: all but an oversell and dropped arrivals. Their counts
// are kept and shown; Unjudged says why they were not judged. It returns
// checks, marked, for the run's record and for Decide.
func Provisional(checks []ExpectationResult, unsettled bool, left error) []ExpectationResult {
	why := ""
	switch {
	case unsettled:
		why = "read before they settled"
	case left != nil:
		why = "read with a fault still in place"
	default:
		return checks
	}
	for i, c := range checks {
		if c.Invariant != "oversold" && c.Invariant != "dropped" && !c.NotChecked {
			checks[i].Unjudged = why
		}
	}
	return checks
}

// steadyStateFailed reports whether a promise about the time before any
// fault was broken: then the drill proved nothing of the faults.
func steadyStateFailed(es []ExpectationResult) bool {
	for _, e := range es {
		if e.Window == "before" && !e.Held && !e.NotChecked {
			return true
		}
	}
	return false
}

// unobservedPromises lists the scenario's promises that could not be observed
// (a metric Prometheus did not answer for), with why; "" when none. An
// invariant the system gives no facts for is not one: the system file
// says so once, and the run is judged on the rest.
func unobservedPromises(es []ExpectationResult) string {
	var out []string
	for _, e := range es {
		if e.NotChecked && e.Invariant == "" {
			out = append(out, e.Promise+" (observed: "+e.Observed+")")
		}
	}
	return strings.Join(out, "; ")
}

// broken lists the broken promises (of window, or all when ""), with what
// was observed; "" when none was broken. Those not checked are not broken.
func broken(es []ExpectationResult, window string) string {
	var out []string
	for _, e := range es {
		if !e.Held && !e.NotChecked && (window == "" || e.Window == window) {
			out = append(out, e.Promise+" (observed: "+e.Observed+e.ExamplesText()+")")
		}
	}
	return strings.Join(out, "; ")
}
