package judge

import (
	"strings"
	"testing"

	"github.com/gameday-dev/gameday/gameday/runrecord"
)

// Orders are read by the run's checkout ids, stock is not: an order of an
// earlier run (a queue not drained) written while this run was on spends
// this run's stock, and reads as this run's lost unit. The books can see
// it, so the run says so, and its stock figures are shown, not judged: the
// run is inconclusive, not the system's failure. What this run's own
// orders and charges prove (a double charge) still fails it.
func TestOrdersOfOtherRunsMakeTheStockUntrusted(t *testing.T) {
	facts := func() *Facts {
		return &Facts{Initial: p64(10), Available: p64(8), Reserved: p64(0), Final: true, OrdersKnown: true, ChargesKnown: true,
			Orders:  []Order{{CheckoutID: "r2-1", Units: 1}},
			Charges: []Charge{{CheckoutID: "r2-1", ID: "ch1", Status: "approved"}},
			// r1-7's order, queued by the run before, written now.
			OtherRunOrders: 1, OtherRunIDs: []string{"r1-7"}}
	}
	shoppers := []Shopper{{ID: "r2-1", Outcome: Confirmed, Told: "confirmed"}}
	judge := func(f *Facts) Judgement {
		var j Judged
		notChecked, examples := reconcileBooks([]Books{{Name: "shop", Facts: f}}, shoppers, &j)
		checks, untrusted := OtherRuns(InvariantResults(j.Invariants, nil, notChecked, examples), []Books{{Facts: f}})
		return Decide(Ending{Checks: checks, Untrusted: untrusted})
	}
	d := judge(facts())
	if d.Verdict != runrecord.VerdictInconclusive || !strings.Contains(d.Reason, "the books gained 1 order of other runs while this run was on (checkout ids r1-7)") ||
		!strings.Contains(d.Reason, "showed lost units is at most 0 (observed: 1) (not judged)") {
		t.Errorf("a unit spent by another run's order: %s: %s", d.Verdict, d.Reason)
	}
	f := facts()
	f.Charges = append(f.Charges, Charge{CheckoutID: "r2-1", ID: "ch2", Status: "approved"})
	if d := judge(f); d.Verdict != runrecord.VerdictFail || !strings.Contains(d.Reason, "double charges") || !strings.Contains(d.Reason, "besides, the books gained 1 order") {
		t.Errorf("a double charge beside orders of other runs: %s: %s", d.Verdict, d.Reason)
	}
	f = facts()
	f.OtherRunOrders, f.OtherRunIDs = 0, nil
	if d := judge(f); d.Verdict != runrecord.VerdictFail || !strings.Contains(d.Reason, "lost units") {
		t.Errorf("a lost unit with no other run's order: %s: %s", d.Verdict, d.Reason)
	}
}
