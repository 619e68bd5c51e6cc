package judge

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gameday-dev/gameday/gameday/runrecord"
	"github.com/gameday-dev/gameday/scenarios"
)

// VerdictFile is where a run directory keeps its judgement, the JSON of
// [Judged]: what gameday judge compares a new judgement with.
const VerdictFile = "verdict.json"

// Judged is what judging a run's observations decides: the verdict and
// everything the run's record says of it. The runner copies it into the
// record (run.json) and writes it whole (verdict.json).
type Judged struct {
	Verdict Verdict `json:"verdict"`
	Reason  string  `json:"reason,omitempty"`
	// Expectations are the scenario's promises, judged.
	Expectations []ExpectationResult `json:"expectations"`
	// Breakers are each dependency's breaker: its transitions and how soon
	// it opened and closed after its fault.
	Breakers map[string]BreakerRecord `json:"breakers"`
	// Invariants are the books' counts, InvariantChecks the same as
	// promises (nil when no books were read); Ledger, Charges and Shops
	// the books as reconciled.
	Invariants      Invariants          `json:"invariants"`
	InvariantChecks []ExpectationResult `json:"invariant_checks"`
	Ledger          LedgerSummary       `json:"ledger"`
	Charges         ChargeSummary       `json:"charges"`
	Shops           []runrecord.Shop    `json:"shops,omitempty"`
	// Notes are what judging found worth saying beside the verdict (books
	// empty, invariants not checked, rows of no shop).
	Notes []string `json:"notes,omitempty"`
	// Starved are the promises that failed while the machine was starved.
	Starved []string `json:"starved,omitempty"`
}

// Run judges a run: sc's promises and the books' invariants against what
// was observed, and the verdict. It reads nothing but its arguments, and
// the same arguments give the same Judged, to the byte once encoded.
func Run(sc *scenarios.Scenario, o *Observations) Judged {
	j := Judged{Breakers: map[string]BreakerRecord{}}
	w := NewWindows(sc.Faults, o.Faults, o.End)
	moves := make(map[string]Move, len(o.Moves))
	for _, m := range o.Moves {
		moves[m.Name] = m
	}
	maps.Copy(j.Breakers, Breakers(o.Breakers, sc.Faults, o.Faults))
	j.Expectations = Evaluate(sc, o.everyone(), w, o.Faults, sc.Faults, o.Breakers, o.Metrics, moves)

	// Books that could not be read in whole are judged as far as they
	// were read: an oversell they prove fails the run, and the run is an
	// error otherwise (Decide).
	left, unread := textErr(o.Ending.Left), textErr(o.Ending.Unread)
	readLate, untrusted := "", ""
	if slices.ContainsFunc(o.Books, func(b Books) bool { return b.Facts != nil }) {
		// A shopper a stall may have kept from taking its answer is
		// reconciled as such (markReadLate); what that left uncounted is
		// said, and is not a pass.
		shoppers, marked := markReadLate(o.Shoppers, o.Starvation)
		notChecked, examples := reconcileBooks(o.Books, shoppers, &j)
		// A visit the generator dropped is a drop like a purchase's: the
		// store's traffic was not what the scenario says.
		for _, v := range o.Visits {
			if v.Outcome == Dropped {
				j.Invariants.Dropped++
			}
		}
		if marked > 0 {
			readLate = readLateCharges(o.Books, o.Shoppers, shoppers, j.Invariants.ChargedAfterLeaving, o.Starvation)
		}
		j.InvariantChecks = Provisional(InvariantResults(j.Invariants, sc.Invariants.Allow, notChecked, examples), o.Unsettled, left)
		j.InvariantChecks, untrusted = OtherRuns(j.InvariantChecks, o.Books)
		if len(notChecked) > 0 {
			why := "for want of the facts in " + o.SystemFile
			if unread != nil {
				why += " or of those that could not be read"
			}
			j.Notes = append(j.Notes, fmt.Sprintf("not checked, %s: %s", why, strings.Join(slices.Sorted(maps.Keys(notChecked)), ", ")))
		}
	}

	e := Ending{
		Fault: textErr(o.Ending.Fault), Left: left, Unread: unread, ShardLost: textErr(o.Ending.ShardLost),
		Aborted: o.Ending.Aborted, Interrupted: o.Ending.Interrupted, Halt: o.Ending.Halt, Guard: o.Ending.Guard,
		Idle: o.Ending.Idle, Unsettled: o.Unsettled, Host: o.Host, ReadLate: readLate, Untrusted: untrusted,
		Expectations: j.Expectations, Checks: j.InvariantChecks,
	}
	seen := Observed{Shoppers: o.everyone(), Windows: w, Faults: o.Faults, Order: sc.Faults, Breakers: o.Breakers}
	e.Starved = func() ([]string, int) { return Excuse(sc, j.Expectations, j.InvariantChecks, seen, o.Starvation) }
	d := Decide(e)
	j.Verdict, j.Reason, j.Starved = d.Verdict, d.Reason, d.Starved
	return j
}
