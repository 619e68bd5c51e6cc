package judge

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gameday-dev/gameday/gameday/runrecord"
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
	shardErr := errors.New("shard 2 of 4 stopped answering")
	cases := []struct {
		name    string
		e       Ending
		verdict Verdict
		reason  string // a part of the reason
		starved bool   // the starved promises are recorded
	}{
		{"everything held", Ending{Expectations: fine, Checks: books()}, runrecord.VerdictPass, "", false},
		{"a promise broke", Ending{Expectations: late, Checks: books()}, runrecord.VerdictFail, "p99 under 300ms (observed: bad)", false},
		{"an invariant broke", Ending{Expectations: fine, Checks: books("lost_units")}, runrecord.VerdictFail, "lost units", false},
		// A request-aware fault that acted on nothing proved nothing: the
		// run cannot pass on it, though what broke still fails it.
		{"a fault acted on no request", Ending{Expectations: fine, Checks: books(), Idle: []string{"commits-lost on postgres acted on 0 of 0 matching requests"}}, runrecord.VerdictInconclusive, "a fault acted on no request, or what it did is not known, so the drill proved nothing of it: commits-lost", false},
		{"books beat an idle fault", Ending{Expectations: fine, Checks: books("oversold"), Idle: []string{"commits-lost"}}, runrecord.VerdictFail, "oversold", false},
		{"a fault could not be injected", Ending{Fault: errors.New("inject fault slow: refused"), Checks: books()}, runrecord.VerdictError, "the drill was stopped", false},
		// Money and stock proven wrong fail the drill whatever else
		// happened, and the reason says what else did.
		{"books beat a fault that could not be injected", Ending{Fault: errors.New("inject fault slow: refused"), Checks: books("oversold")}, runrecord.VerdictFail, "oversold is at most 0 (observed: 1); besides, inject fault slow: refused, and the drill was stopped", false},
		{"a fault left in place", Ending{Left: errors.New("remove fault slow: 500"), Expectations: fine, Checks: books()}, runrecord.VerdictError, "could not remove every fault when the load ended: remove fault slow: 500", false},
		// Books read with a fault still in place prove only an oversell:
		// a void the fault held back reads as a charge without an order.
		{"an oversell beats a fault left in place", Ending{Left: errors.New("remove fault slow: 500"), Checks: books("oversold")}, runrecord.VerdictFail, "oversold is at most 0 (observed: 1); besides, remove fault slow: 500", false},
		{"books read with a fault in place prove no more", Ending{Left: errors.New("remove fault slow: 500"), Checks: books("charges_without_order")}, runrecord.VerdictError, "could not remove every fault when the load ended: remove fault slow: 500; the books, read with a fault still in place, showed charges without order is at most 0 (observed: 1) (not judged)", false},
		// Books not read in whole: what was read is judged.
		{"an oversell beats books not read in whole", Ending{Unread: errors.New("shop b: read books.charges: 500"), Checks: books("oversold")}, runrecord.VerdictFail, "oversold is at most 0 (observed: 1); besides, reconcile the books: shop b: read books.charges: 500", false},
		{"books not read in whole", Ending{Unread: errors.New("read books.charges: 500"), Expectations: late, Checks: books()}, runrecord.VerdictError, "reconcile the books: read books.charges: 500", false},
		{"unsettled books and a broken promise", Ending{Interrupted: true, Unsettled: true, Expectations: late, Checks: books("lost_units")}, runrecord.VerdictInconclusive, "interrupted: the load was stopped and every fault removed; the books, read before they settled, showed lost units", false},
		{"a fault left in place beats a broken promise", Ending{Left: errors.New("remove fault slow: 500"), Expectations: late, Checks: books()}, runrecord.VerdictError, "could not remove every fault", false},
		{"books beat an interruption", Ending{Interrupted: true, Checks: books("oversold")}, runrecord.VerdictFail, "oversold", false},
		{"books beat the guard", Ending{Aborted: true, Guard: "errors 95%", Checks: books("charges_without_order")}, runrecord.VerdictFail, "charges without order", false},
		{"books beat a lost shard", Ending{ShardLost: shardErr, Checks: books("lost_units")}, runrecord.VerdictFail, "lost units", false},
		{"books beat a failed steady state", Ending{Expectations: []ExpectationResult{brokenE("baseline p95", "before")}, Checks: books("oversold")}, runrecord.VerdictFail, "oversold", false},
		{"unsettled books prove only an oversell", Ending{Interrupted: true, Unsettled: true, Checks: books("lost_units")}, runrecord.VerdictInconclusive, "showed lost units is at most 0 (observed: 1) (not judged)", false},
		{"unsettled books still prove an oversell", Ending{Interrupted: true, Unsettled: true, Checks: books("oversold")}, runrecord.VerdictFail, "oversold", false},
		{"dropped arrivals are not the books", Ending{Interrupted: true, Checks: books("dropped")}, runrecord.VerdictInconclusive, "interrupted", false},
		{"interrupted", Ending{Interrupted: true, Expectations: late, Checks: books()}, runrecord.VerdictInconclusive, "interrupted: the load was stopped", false},
		{"interrupted beats the guard", Ending{Interrupted: true, Aborted: true, Guard: "errors 95%"}, runrecord.VerdictInconclusive, "interrupted", false},
		{"the halt condition", Ending{Aborted: true, Halt: "p99 over 2s", Guard: "unused"}, runrecord.VerdictInconclusive, "aborted by the halt condition: p99 over 2s", false},
		{"the abort guard", Ending{Aborted: true, Guard: "errors 95% for 12s"}, runrecord.VerdictInconclusive, "aborted by the guard: errors 95% for 12s", false},
		{"a lost shard", Ending{ShardLost: shardErr, Expectations: late}, runrecord.VerdictInconclusive, "the load was not sent whole", false},
		{"the steady state failed", Ending{Expectations: []ExpectationResult{brokenE("baseline p95", "before"), brokenE("p99 under 300ms", "during")}}, runrecord.VerdictInconclusive, "before any fault: baseline p95", false},
		{"a starved machine broke every broken promise", Ending{Expectations: late, Checks: books(), Starved: starvedAll, Host: "stalls up to 900ms"}, runrecord.VerdictInconclusive, "could not keep up with the drill (stalls up to 900ms)", true},
		{"a starved machine and a real failure", Ending{Expectations: []ExpectationResult{brokenE("p99 under 300ms", "during"), brokenE("breaker opens", "")}, Checks: books(), Starved: starvedSome}, runrecord.VerdictFail, "breaker opens", true},
		{"books beat a starved machine", Ending{Expectations: late, Checks: books("lost_units"), Starved: starvedAll}, runrecord.VerdictFail, "lost units", false},
		{"without books, promises still judge", Ending{Expectations: late}, runrecord.VerdictFail, "p99 under 300ms", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			j := Decide(c.e)
			if j.Verdict != c.verdict || !strings.Contains(j.Reason, c.reason) {
				t.Errorf("verdict %s (%s), want %s with %q", j.Verdict, j.Reason, c.verdict, c.reason)
			}
			if (j.Starved != nil) != c.starved {
				t.Errorf("starved recorded: %v, want %v", j.Starved, c.starved)
			}
			if c.verdict == runrecord.VerdictPass && j.Reason != "" {
				t.Errorf("a pass with a reason: %q", j.Reason)
			}
		})
	}
}

// The machine's starvation is asked about only when the verdict hangs on
// it: a run that passed, or stopped for another reason, never pays for it.
func TestStarvationIsAskedOnlyForBrokenPromises(t *testing.T) {
	asked := 0
	starved := func() ([]string, int) { asked++; return nil, 1 }
	Decide(Ending{Expectations: []ExpectationResult{{Promise: "p", Held: true}}, Starved: starved})
	Decide(Ending{Interrupted: true, Expectations: []ExpectationResult{{Promise: "p"}}, Starved: starved})
	if asked != 0 {
		t.Errorf("asked %d times, want 0", asked)
	}
	Decide(Ending{Expectations: []ExpectationResult{{Promise: "p"}}, Starved: starved})
	if asked != 1 {
		t.Errorf("asked %d times for a broken promise, want 1", asked)
	}
}

// Books read before they settled, or with a fault in place, are recorded
// as shown, not judged: every invariant but an oversell and dropped
// arrivals says why in run.json, and Decide reads the same marks.
func TestProvisionalMarksWhatTheBooksCannotProve(t *testing.T) {
	mk := func() []ExpectationResult {
		return []ExpectationResult{
			{Invariant: "oversold", Observed: "0", Held: true},
			{Invariant: "lost_units", Observed: "2"},
			{Invariant: "charges_without_order", Observed: "0", Held: true},
			{Invariant: "dropped", Observed: "0", Held: true},
			{Invariant: "wrong_amounts", NotChecked: true, Needs: "books.charges.amount"},
		}
	}
	for _, c := range []struct {
		name      string
		unsettled bool
		left      error
		want      string
	}{
		{"settled", false, nil, ""},
		{"unsettled", true, nil, "read before they settled"},
		{"a fault in place", false, errors.New("remove fault slow: 500"), "read with a fault still in place"},
	} {
		got := Provisional(mk(), c.unsettled, c.left)
		for _, r := range got {
			want := c.want
			if r.Invariant == "oversold" || r.Invariant == "dropped" || r.NotChecked {
				want = ""
			}
			if r.Unjudged != want {
				t.Errorf("%s: %s marked %q, want %q", c.name, r.Invariant, r.Unjudged, want)
			}
		}
		j := Decide(Ending{Interrupted: c.unsettled, Unsettled: c.unsettled, Left: c.left, Checks: got})
		if c.want != "" && j.Verdict == runrecord.VerdictFail {
			t.Errorf("%s: lost units shown, not judged, failed the run: %s", c.name, j.Reason)
		}
		if c.want == "" && j.Verdict != runrecord.VerdictFail {
			t.Errorf("%s: lost units judged did not fail the run: %s %s", c.name, j.Verdict, j.Reason)
		}
	}
}
