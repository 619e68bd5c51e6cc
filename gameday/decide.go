package gameday

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gameday-dev/gameday/gameday/fleet"
)

// ending is how the load ended and what was judged of it: everything the
// verdict is decided from, and nothing the drill must still do. decide
// turns it into the verdict, so that the precedence is one pure function,
// tested on its own (decide_test.go).
type ending struct {
	// cause is why the load stopped early: errFault, errAborted, or nil.
	cause error
	// loadErr is the load's own error (a fleet.ErrShard when a shard
	// failed).
	loadErr error
	// interrupted: the run was asked to stop (SIGINT, SIGTERM).
	interrupted bool
	// halt is the halt condition's reason when it stopped the load; the
	// abort guard's reason otherwise, when it did.
	halt, guard string
	// unsettled: the books were read before they settled.
	unsettled bool
	// expectations are the scenario's promises, judged; checks the
	// invariants, judged (nil when the books could not be read).
	expectations, checks []ExpectationResult
	// starved: for a broken promise or invariant, the account of the
	// machine starving while it was judged, or "" when it did not. Called
	// only when everything else held up to the promises.
	starved func() (starved []string, others int)
	// host describes the machine's starvation, for the reason.
	host string
}

// judgement is the verdict, its reason, and the promises that failed while
// the machine was starved (recorded as the host's).
type judgement struct {
	verdict, reason string
	starved         []string
}

// decide applies the verdict's precedence. Money or stock proven wrong
// fails the run even if it was cut short (what was reconciled is real);
// otherwise a run cut short, or whose steady state failed before any
// fault, proves nothing. Books read before they settled prove only an
// oversell (units sold beyond the stock never come back): a held lease or
// a void still pending would read as lost units or a charge without an
// order. A drill whose only broken promises fell while the runner's
// machine was starved measured the machine, and is inconclusive.
func decide(e ending) judgement {
	var books []ExpectationResult
	for _, c := range e.checks {
		if c.Invariant != "dropped" && (!e.unsettled || c.Invariant == "oversold") {
			books = append(books, c)
		}
	}
	switch {
	case errors.Is(e.cause, errFault):
		return judgement{verdict: VerdictError, reason: fmt.Sprintf("%v; the drill was stopped", e.cause)}
	case broken(books, "") != "":
		return judgement{verdict: VerdictFail, reason: broken(books, "")}
	case e.interrupted:
		j := judgement{verdict: VerdictInconclusive, reason: "interrupted: the load was stopped and every fault removed"}
		if b := broken(e.checks, ""); b != "" && e.unsettled {
			j.reason += "; the books, read before they settled, showed " + b + " (not judged)"
		}
		return j
	case errors.Is(e.cause, errAborted) && e.halt != "":
		return judgement{verdict: VerdictInconclusive, reason: "aborted by the halt condition: " + e.halt}
	case errors.Is(e.cause, errAborted):
		return judgement{verdict: VerdictInconclusive, reason: "aborted by the guard: " + e.guard}
	case errors.Is(e.loadErr, fleet.ErrShard):
		return judgement{verdict: VerdictInconclusive, reason: fmt.Sprintf("the load was not sent whole (%v): the load was stopped everywhere and every fault removed", e.loadErr)}
	case steadyStateFailed(e.expectations):
		return judgement{verdict: VerdictInconclusive, reason: "the steady state failed before any fault: " + broken(e.expectations, "before")}
	}
	all := append(append([]ExpectationResult{}, e.expectations...), e.checks...)
	b := broken(all, "")
	if b == "" {
		return judgement{verdict: VerdictPass}
	}
	var starved []string
	others := 1
	if e.starved != nil {
		starved, others = e.starved()
	}
	if len(starved) > 0 && others == 0 {
		return judgement{verdict: VerdictInconclusive, starved: starved,
			reason: fmt.Sprintf("the machine could not keep up with the drill (%s): these promises failed while it was starved, and measure the machine, not the system under test: %s", e.host, strings.Join(starved, "; "))}
	}
	return judgement{verdict: VerdictFail, reason: b, starved: starved}
}
