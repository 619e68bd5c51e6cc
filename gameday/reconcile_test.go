package gameday

import (
	"testing"
	"time"

	"github.com/gameday-dev/gameday/checkout"
	"github.com/gameday-dev/gameday/checkout/payment"
)

// Each invariant is proven to fire: a table of books broken on purpose,
// one way each, and the count that must catch it.
func TestReconcileCatchesEachBreak(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	order := func(id string) checkout.Order {
		return checkout.Order{CheckoutID: id, ChargeKey: id + "/1", ChargeID: "ch_" + id, Shopper: "s-" + id}
	}
	charge := func(id string, st payment.Status) payment.Charge {
		return payment.Charge{ID: "ch_" + id, Key: id + "/1", Shopper: "s-" + id, Status: st, CreatedAt: t0}
	}
	// The healthy books every row starts from: 2 of 3 units sold, both paid.
	healthy := func() (books, []shopperView) {
		return books{
				ledger:  checkout.Ledger{Initial: 3, Available: 1, Sold: 2, Orders: []checkout.Order{order("a"), order("b")}},
				charges: []payment.Charge{charge("a", payment.StatusApproved), charge("b", payment.StatusApproved), charge("c", payment.StatusDeclined)},
				hasPay:  true,
			}, []shopperView{
				{checkoutID: "a", outcome: "confirmed", leftAt: t0.Add(time.Minute)},
				{checkoutID: "b", outcome: "confirmed", leftAt: t0.Add(time.Minute)},
				{checkoutID: "c", outcome: "declined", leftAt: t0.Add(time.Minute)},
			}
	}
	cases := []struct {
		name  string
		brk   func(b *books, s []shopperView)
		field func(Invariants) int64
	}{
		// One more sold than there was stock.
		{"oversold", func(b *books, _ []shopperView) { b.ledger.Sold, b.ledger.Available = 4, -1 },
			func(iv Invariants) int64 { return iv.Oversold }},
		// A unit neither available, reserved nor sold.
		{"lost unit", func(b *books, _ []shopperView) { b.ledger.Available = 0 },
			func(iv Invariants) int64 { return iv.LostUnits }},
		// A second approved charge for the same shopper.
		{"double charge", func(b *books, _ []shopperView) {
			c := charge("a", payment.StatusApproved)
			c.ID, c.Key = "ch_a2", "a/2"
			b.charges = append(b.charges, c)
		}, func(iv Invariants) int64 { return iv.DoubleCharges }},
		// Money taken for a unit nobody got.
		{"charge without order", func(b *books, _ []shopperView) { b.charges[2].Status = payment.StatusApproved },
			func(iv Invariants) int64 { return iv.ChargesWithoutOrder }},
		// An order whose charge was voided.
		{"order without charge", func(b *books, _ []shopperView) { b.charges[1].Status = payment.StatusVoided },
			func(iv Invariants) int64 { return iv.OrdersWithoutCharge }},
		// A shopper who gave up, charged after leaving.
		{"charged after leaving", func(b *books, s []shopperView) {
			b.charges[2].Status = payment.StatusApproved
			b.charges[2].CreatedAt = t0.Add(2 * time.Minute)
			s[2].outcome = "gave_up"
		}, func(iv Invariants) int64 { return iv.ChargedAfterLeaving }},
	}
	b, s := healthy()
	if iv := reconcile(b, s, 0); iv != (Invariants{}) {
		t.Fatalf("healthy books: %+v, want all zero", iv)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, s := healthy()
			c.brk(&b, s)
			if got := c.field(reconcile(b, s, 0)); got == 0 {
				t.Errorf("%s not caught: %+v", c.name, reconcile(b, s, 0))
			}
		})
	}
}

func TestInvariantResultsHonourAllowances(t *testing.T) {
	iv := Invariants{Dropped: 3, Oversold: 1}
	rs := invariantResults(iv, map[string]int64{"dropped": 5})
	held := map[string]bool{}
	for _, r := range rs {
		held[r.Promise] = r.Held
	}
	if !held["dropped is at most 5"] || held["oversold is at most 0"] {
		t.Errorf("results: %+v", rs)
	}
}

// A shopper the runner cut when it stopped the load (SIGINT, the abort
// guard) did not leave of its own accord: a charge it did not see confirmed
// is the interruption's, and is not counted as charged after leaving. The
// same shopper leaving by its own deadline is counted.
func TestCutShoppersAreNotChargedAfterLeaving(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	b := books{
		ledger:  checkout.Ledger{Initial: 1, Sold: 1, Orders: []checkout.Order{{CheckoutID: "a", ChargeKey: "a/1", ChargeID: "ch_a"}}},
		charges: []payment.Charge{{ID: "ch_a", Key: "a/1", Status: payment.StatusApproved, CreatedAt: t0}},
		hasPay:  true,
	}
	left := []shopperView{{checkoutID: "a", outcome: "gave_up", leftAt: t0.Add(-time.Second)}}
	if got := reconcile(b, left, 0).ChargedAfterLeaving; got != 1 {
		t.Fatalf("a shopper who left by its deadline: charged after leaving %d, want 1", got)
	}
	left[0].cut = true
	if got := reconcile(b, left, 0).ChargedAfterLeaving; got != 0 {
		t.Errorf("a shopper the runner cut: charged after leaving %d, want 0", got)
	}
}
