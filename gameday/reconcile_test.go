package gameday

import (
	"context"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/load"
)

func p64(n int64) *int64 { return &n }

// Each invariant is proven to fire: a table of books broken on purpose,
// one way each, and the count that must catch it.
func TestReconcileCatchesEachBreak(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	// The healthy books every row starts from: 2 of 3 units sold, both
	// paid; c declined.
	healthy := func() (*facts, []shopperView) {
		return &facts{
				initial: p64(3), available: p64(1), sold: p64(2), reserved: p64(0),
				orders:      []order{{checkoutID: "a", charge: "ch_a", units: 1}, {checkoutID: "b", charge: "ch_b", units: 1}},
				ordersKnown: true, orderCharges: true,
				charges: []charge{{checkoutID: "a", id: "ch_a", status: "approved", at: t0}, {checkoutID: "b", id: "ch_b", status: "approved", at: t0},
					{checkoutID: "c", id: "ch_c", status: "declined", at: t0}},
				chargesKnown: true,
			}, []shopperView{
				{checkoutID: "a", outcome: "confirmed", leftAt: t0.Add(time.Minute), told: "confirmed"},
				{checkoutID: "b", outcome: "confirmed", leftAt: t0.Add(time.Minute), told: "confirmed"},
				{checkoutID: "c", outcome: "declined", leftAt: t0.Add(time.Minute), told: "declined"},
			}
	}
	cases := []struct {
		name  string
		brk   func(f *facts, s []shopperView)
		field func(Invariants) int64
	}{
		// One more sold than there was stock.
		{"oversold", func(f *facts, _ []shopperView) { f.sold, f.available = p64(4), p64(-1) },
			func(iv Invariants) int64 { return iv.Oversold }},
		// A unit neither available, reserved nor sold.
		{"lost unit", func(f *facts, _ []shopperView) { f.available = p64(0) },
			func(iv Invariants) int64 { return iv.LostUnits }},
		// A second approved charge for the same shopper.
		{"double charge", func(f *facts, _ []shopperView) {
			f.charges = append(f.charges, charge{checkoutID: "a", id: "ch_a2", status: "approved", at: t0})
		}, func(iv Invariants) int64 { return iv.DoubleCharges }},
		// Money taken for a unit nobody got.
		{"charge without order", func(f *facts, _ []shopperView) { f.charges[2].status = "approved" },
			func(iv Invariants) int64 { return iv.ChargesWithoutOrder }},
		// An order whose charge was voided.
		{"order without charge", func(f *facts, _ []shopperView) { f.charges[1].status = "voided" },
			func(iv Invariants) int64 { return iv.OrdersWithoutCharge }},
		// An order paid with a charge the provider does not have.
		{"order with another charge", func(f *facts, _ []shopperView) { f.orders[1].charge = "ch_zz" },
			func(iv Invariants) int64 { return iv.OrdersWithoutCharge }},
		// A shopper who gave up, charged after leaving.
		{"charged after leaving", func(f *facts, s []shopperView) {
			f.charges[2].status = "approved"
			f.charges[2].at = t0.Add(2 * time.Minute)
			s[2].outcome = "gave_up"
		}, func(iv Invariants) int64 { return iv.ChargedAfterLeaving }},
		// Told the purchase failed, and the order exists: "503 but the
		// order exists".
		{"order told failed", func(_ *facts, s []shopperView) { s[1].outcome, s[1].told = "unavailable", "unavailable" },
			func(iv Invariants) int64 { return iv.OrdersToldFailed }},
		// Told confirmed, and no order.
		{"confirmed without order", func(_ *facts, s []shopperView) { s[2].outcome, s[2].told = "confirmed", "confirmed" },
			func(iv Invariants) int64 { return iv.ConfirmedWithoutOrder }},
	}
	f, s := healthy()
	if iv, nc := reconcile(f, s, 0); iv != (Invariants{}) || len(nc) != 0 {
		t.Fatalf("healthy books: %+v (not checked %v), want all zero", iv, nc)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, s := healthy()
			c.brk(f, s)
			if iv, _ := reconcile(f, s, 0); c.field(iv) == 0 {
				t.Errorf("%s not caught: %+v", c.name, iv)
			}
		})
	}
}

// An oracle whose facts the system cannot give is not checked, and says
// what it needs; it is never counted as held.
func TestOraclesWithoutTheirFactsAreNotChecked(t *testing.T) {
	iv, nc := reconcile(&facts{available: p64(3), availableBefore: p64(5), ordersKnown: true, orders: []order{{checkoutID: "a", units: 2}}}, nil, 0)
	if iv.LostUnits != 0 || iv.Oversold != 0 {
		t.Errorf("from available before and after and the orders: %+v", iv)
	}
	for _, name := range []string{"double_charges", "charges_without_order", "orders_without_charge", "charged_after_leaving"} {
		if nc[name] == "" {
			t.Errorf("%s: checked without charges (not checked: %v)", name, nc)
		}
	}
	for _, name := range []string{"oversold", "lost_units", "orders_told_failed", "confirmed_without_order"} {
		if _, ok := nc[name]; ok {
			t.Errorf("%s: not checked, though its facts are there", name)
		}
	}
	rs := invariantResults(iv, nil, nc)
	for _, r := range rs {
		if r.Invariant == "double_charges" && (!r.NotChecked || r.Held || r.Needs == "") {
			t.Errorf("double charges result: %+v", r)
		}
	}
	if b := broken(rs, ""); b != "" {
		t.Errorf("not checked counted as broken: %s", b)
	}
	// With nothing at all, every book oracle is not checked.
	if _, nc := reconcile(&facts{}, nil, 0); len(nc) != len(oracles) {
		t.Errorf("no facts: %d not checked, want %d", len(nc), len(oracles))
	}
}

func TestInvariantResultsHonourAllowances(t *testing.T) {
	iv := Invariants{Dropped: 3, Oversold: 1}
	rs := invariantResults(iv, map[string]int64{"dropped": 5}, nil)
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
	f := &facts{initial: p64(1), sold: p64(1), ordersKnown: true, chargesKnown: true,
		orders: []order{{checkoutID: "a", charge: "ch_a", units: 1}}, charges: []charge{{checkoutID: "a", id: "ch_a", status: "approved", at: t0}}}
	left := []shopperView{{checkoutID: "a", outcome: "gave_up", leftAt: t0.Add(-time.Second)}}
	if iv, _ := reconcile(f, left, 0); iv.ChargedAfterLeaving != 1 {
		t.Fatalf("a shopper who left by its deadline: charged after leaving %d, want 1", iv.ChargedAfterLeaving)
	}
	left[0].cut = true
	if iv, _ := reconcile(f, left, 0); iv.ChargedAfterLeaving != 0 {
		t.Errorf("a shopper the runner cut: charged after leaving %d, want 0", iv.ChargedAfterLeaving)
	}
}

// What a shopper was told is the answer to its last attempt: one told
// "come back" that came back and left before the answer knows nothing
// final (its charge, if any, is a charge after leaving, not an order it
// was told failed); one whose last answer was a refusal was told so.
func TestToldIsTheLastAttemptsAnswer(t *testing.T) {
	start := time.Now()
	rep := &load.Report{Start: start, Shoppers: []*load.Shopper{
		{ID: "came-back-and-left", Outcome: load.OutcomeGaveUp, Deadline: time.Second, Attempts: []load.Attempt{
			{Code: 503, Status: "unavailable", RetryAfter: time.Second},
			{Err: context.DeadlineExceeded.Error()},
		}},
		{ID: "refused", Outcome: load.OutcomeUnavailable, Deadline: time.Second, Attempts: []load.Attempt{
			{Code: 503, Status: "unavailable"},
		}},
	}}
	_, vs := views(rep)
	if len(vs) != 2 || vs[0].told != "" || vs[1].told != "unavailable" {
		t.Fatalf("told: %+v", vs)
	}
	f := &facts{ordersKnown: true, orders: []order{{checkoutID: "came-back-and-left", units: 1}, {checkoutID: "refused", units: 1}}}
	for _, o := range oracles {
		if o.name == "orders_told_failed" {
			if n := o.count(f, vs); n != 1 {
				t.Errorf("orders told failed: %d, want 1 (the refused shopper's)", n)
			}
		}
	}
}

// A shopper told its purchase was pending (paid, the order not yet
// confirmed: the store crashed between writing the order and answering)
// who left before it could ask again, and holds the order made with its
// charge, was charged while there and told the truth: not charged after
// leaving. Every other way of leaving with that charge still counts.
func TestAShopperToldPendingWhoHoldsTheOrderIsNotChargedAfterLeaving(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	// Charged at 100ms; told pending at 200ms (sent at 50ms, answered
	// 150ms later); refused; then gone with a request in flight.
	rep := &load.Report{Start: t0, Shoppers: []*load.Shopper{{ID: "a", Outcome: load.OutcomeGaveUp, Deadline: time.Second, Attempts: []load.Attempt{
		{At: 50 * time.Millisecond, Took: 150 * time.Millisecond, Code: 202, Status: "retry_later", Reason: "order_unconfirmed", RetryAfter: time.Second},
		{At: 400 * time.Millisecond, Took: time.Millisecond, Code: 503, Status: "unavailable", Reason: "breaker_open", RetryAfter: time.Second},
		{At: 900 * time.Millisecond, Took: 120 * time.Millisecond, Err: context.DeadlineExceeded.Error()},
	}}}}
	_, vs := views(rep)
	if len(vs) != 1 || !vs[0].toldPending.Equal(t0.Add(200*time.Millisecond)) || vs[0].told != "" {
		t.Fatalf("views: %+v", vs)
	}
	healthy := func() (*facts, []shopperView) {
		return &facts{initial: p64(1), sold: p64(1), ordersKnown: true, chargesKnown: true,
			orders:  []order{{checkoutID: "a", charge: "ch_a", units: 1}},
			charges: []charge{{checkoutID: "a", id: "ch_a", status: "approved", at: t0.Add(100 * time.Millisecond)}}}, []shopperView{vs[0]}
	}
	if f, s := healthy(); func() int64 { iv, _ := reconcile(f, s, 0); return iv.ChargedAfterLeaving }() != 0 {
		t.Fatal("told pending, holding the order made with its charge: counted as charged after leaving")
	}
	for name, brk := range map[string]func(f *facts, s []shopperView){
		"never told pending":            func(_ *facts, s []shopperView) { s[0].toldPending = time.Time{} },
		"told so before it was charged": func(f *facts, _ []shopperView) { f.charges[0].at = t0.Add(300 * time.Millisecond) },
		"no order":                      func(f *facts, _ []shopperView) { f.orders, f.sold = nil, p64(0) },
		"the order paid another way":    func(f *facts, _ []shopperView) { f.orders[0].charge = "ch_other" },
		"the order's charge unknown":    func(f *facts, _ []shopperView) { f.orders[0].charge = "" },
		"the charge's id unknown":       func(f *facts, _ []shopperView) { f.charges[0].id = "" },
		"the charge's time unknown":     func(f *facts, _ []shopperView) { f.charges[0].at = time.Time{} },
		"charged after its deadline": func(f *facts, s []shopperView) {
			f.charges[0].at = t0.Add(2 * time.Second)
			s[0].toldPending = t0.Add(3 * time.Second)
		},
		"orders unknown": func(f *facts, _ []shopperView) { f.orders, f.ordersKnown, f.sold = nil, false, p64(1) },
		"a second charge beside the order": func(f *facts, _ []shopperView) {
			f.charges = append(f.charges, charge{checkoutID: "a", id: "ch_a2", status: "approved", at: t0.Add(150 * time.Millisecond)})
		},
	} {
		f, s := healthy()
		brk(f, s)
		if iv, _ := reconcile(f, s, 0); iv.ChargedAfterLeaving != 1 {
			t.Errorf("%s: charged after leaving %d, want 1", name, iv.ChargedAfterLeaving)
		}
	}
}
