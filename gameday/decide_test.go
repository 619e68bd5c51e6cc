package gameday

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gameday-dev/gameday/gameday/fleet"
)

// The verdict's precedence, rule by rule, from judged promises and how the
// load ended: no drill is run.
func TestVerdictPrecedence(t *testing.T) {
	held := func(p string) ExpectationResult { return ExpectationResult{Promise: p, Held: true, Observed: "ok"} }
	brokenE := func(p, window string) ExpectationResult {
		return ExpectationResult{Promise: p, Window: window, Observed: "bad"}
	}
	inv := func(name string, n int64) ExpectationResult {
		return ExpectationResult{Promise: strings.ReplaceAll(name, "_", " ") + " is at most 0", Invariant: name, Held: n == 0, Observed: fmt.Sprint(n)}
	}
	books := func(broken ...string) []ExpectationResult {
		var out []ExpectationResult
		for _, n := range []string{"oversold", "lost_units", "charges_without_order", "dropped"} {
			var v int64
			for _, b := range broken {
				if b == n {
					v = 1
				}
			}
			out = append(out, inv(n, v))
		}
		return out
	}
	fine := []ExpectationResult{held("p99 under 300ms"), held("breaker opens")}
	late := append([]ExpectationResult{brokenE("p99 under 300ms", "during")}, fine[1:]...)
	starvedAll := func() ([]string, int) { return []string{"p99 under 300ms (the runner stalled)"}, 0 }
	starvedSome := func() ([]string, int) { return []string{"p99 under 300ms (the runner stalled)"}, 1 }
	shardErr := fmt.Errorf("%w: shard 2 of 4 stopped answering", fleet.ErrShard)
	cases := []struct {
		name    string
		e       ending
		verdict string
		reason  string // a part of the reason
		starved bool   // the starved promises are recorded
	}{
		{"everything held", ending{expectations: fine, checks: books()}, VerdictPass, "", false},
		{"a promise broke", ending{expectations: late, checks: books()}, VerdictFail, "p99 under 300ms (observed: bad)", false},
		{"an invariant broke", ending{expectations: fine, checks: books("lost_units")}, VerdictFail, "lost units", false},
		{"a fault could not be injected", ending{cause: fmt.Errorf("%w: slow: refused", errFault), checks: books("oversold")}, VerdictError, "the drill was stopped", false},
		{"books beat an interruption", ending{interrupted: true, checks: books("oversold")}, VerdictFail, "oversold", false},
		{"books beat the guard", ending{cause: errAborted, guard: "errors 95%", checks: books("charges_without_order")}, VerdictFail, "charges without order", false},
		{"books beat a lost shard", ending{loadErr: shardErr, checks: books("lost_units")}, VerdictFail, "lost units", false},
		{"books beat a failed steady state", ending{expectations: []ExpectationResult{brokenE("baseline p95", "before")}, checks: books("oversold")}, VerdictFail, "oversold", false},
		{"unsettled books prove only an oversell", ending{interrupted: true, unsettled: true, checks: books("lost_units")}, VerdictInconclusive, "showed lost units is at most 0 (observed: 1) (not judged)", false},
		{"unsettled books still prove an oversell", ending{interrupted: true, unsettled: true, checks: books("oversold")}, VerdictFail, "oversold", false},
		{"dropped arrivals are not the books", ending{interrupted: true, checks: books("dropped")}, VerdictInconclusive, "interrupted", false},
		{"interrupted", ending{interrupted: true, expectations: late, checks: books()}, VerdictInconclusive, "interrupted: the load was stopped", false},
		{"interrupted beats the guard", ending{interrupted: true, cause: errAborted, guard: "errors 95%"}, VerdictInconclusive, "interrupted", false},
		{"the halt condition", ending{cause: errAborted, halt: "p99 over 2s", guard: "unused"}, VerdictInconclusive, "aborted by the halt condition: p99 over 2s", false},
		{"the abort guard", ending{cause: errAborted, guard: "errors 95% for 12s"}, VerdictInconclusive, "aborted by the guard: errors 95% for 12s", false},
		{"a lost shard", ending{loadErr: shardErr, expectations: late}, VerdictInconclusive, "the load was not sent whole", false},
		{"the steady state failed", ending{expectations: []ExpectationResult{brokenE("baseline p95", "before"), brokenE("p99 under 300ms", "during")}}, VerdictInconclusive, "before any fault: baseline p95", false},
		{"a starved machine broke every broken promise", ending{expectations: late, checks: books(), starved: starvedAll, host: "stalls up to 900ms"}, VerdictInconclusive, "could not keep up with the drill (stalls up to 900ms)", true},
		{"a starved machine and a real failure", ending{expectations: []ExpectationResult{brokenE("p99 under 300ms", "during"), brokenE("breaker opens", "")}, checks: books(), starved: starvedSome}, VerdictFail, "breaker opens", true},
		{"books beat a starved machine", ending{expectations: late, checks: books("lost_units"), starved: starvedAll}, VerdictFail, "lost units", false},
		{"without books, promises still judge", ending{expectations: late}, VerdictFail, "p99 under 300ms", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			j := decide(c.e)
			if j.verdict != c.verdict || !strings.Contains(j.reason, c.reason) {
				t.Errorf("verdict %s (%s), want %s with %q", j.verdict, j.reason, c.verdict, c.reason)
			}
			if (j.starved != nil) != c.starved {
				t.Errorf("starved recorded: %v, want %v", j.starved, c.starved)
			}
			if c.verdict == VerdictPass && j.reason != "" {
				t.Errorf("a pass with a reason: %q", j.reason)
			}
		})
	}
}

// The machine's starvation is asked about only when the verdict hangs on
// it: a run that passed, or stopped for another reason, never pays for it.
func TestStarvationIsAskedOnlyForBrokenPromises(t *testing.T) {
	asked := 0
	starved := func() ([]string, int) { asked++; return nil, 1 }
	decide(ending{expectations: []ExpectationResult{{Promise: "p", Held: true}}, starved: starved})
	decide(ending{interrupted: true, expectations: []ExpectationResult{{Promise: "p"}}, starved: starved})
	if asked != 0 {
		t.Errorf("asked %d times, want 0", asked)
	}
	decide(ending{expectations: []ExpectationResult{{Promise: "p"}}, starved: starved})
	if asked != 1 {
		t.Errorf("asked %d times for a broken promise, want 1", asked)
	}
}
