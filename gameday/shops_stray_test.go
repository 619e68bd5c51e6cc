package gameday

import (
	"slices"
	"strings"
	"testing"

	"github.com/gameday-dev/gameday/gameday/judge"
	"github.com/gameday-dev/gameday/gameday/system"
)

// A charge of this run that no shopper made (its checkout id has the run's
// prefix, but no shopper has it) is a charge without order, counted once,
// whether the sale has one shop or several: before, a sale across shops
// dropped it from every shop and counted 0. Every shop reads the charges
// of the provider they share, so the stray charge is read twice and still
// counts once; a second stray charge of the same checkout is a double
// charge. The run's notes say which checkout ids belong to no shop.
func TestStrayChargesCountInEverySale(t *testing.T) {
	sys := &system.System{Name: "shop", File: "shop.yaml"}
	charge := func(id, chargeID string) judge.Charge {
		return judge.Charge{CheckoutID: id, ID: chargeID, Status: "approved"}
	}
	shared := []judge.Charge{charge("s1-0", "ch0"), charge("s1-1", "ch1"), charge("s1-9", "ch9"), charge("s1-8", "ch8a"), charge("s1-8", "ch8b")}
	shoppers := []judge.Shopper{
		{ID: "s1-0", Shop: "a", Outcome: judge.Confirmed},
		{ID: "s1-1", Shop: "b", Outcome: judge.Confirmed},
	}
	order := func(id string) judge.Order { return judge.Order{CheckoutID: id, Units: 1} }
	facts := func(orders ...judge.Order) *judge.Facts {
		return &judge.Facts{OrdersKnown: true, ChargesKnown: true, Orders: orders, Charges: slices.Clone(shared)}
	}

	// One shop: s1-9's charge and both of s1-8's have no order (3), and
	// one of s1-8's is a double charge.
	one := &drill{rec: &Record{}, ledgers: []*ledger{{sys: sys}}}
	one.reconcile([]*judge.Facts{facts(order("s1-0"), order("s1-1"))}, shoppers, nil)
	if iv := one.rec.Invariants; iv.ChargesWithoutOrder != 3 || iv.DoubleCharges != 1 {
		t.Fatalf("one shop: %+v", iv)
	}

	// Two shops, each reading the shared provider's charges: the same.
	two := &drill{rec: &Record{}, ledgers: []*ledger{{shop: "a", sys: sys}, {shop: "b", sys: sys}}}
	_, examples := two.reconcile([]*judge.Facts{facts(order("s1-0")), facts(order("s1-1"))}, shoppers, nil)
	if iv := two.rec.Invariants; iv.ChargesWithoutOrder != 3 || iv.DoubleCharges != 1 {
		t.Errorf("two shops: %+v, want what one shop counts", iv)
	}
	for _, sh := range two.rec.Shops {
		if sh.Invariants.ChargesWithoutOrder != 0 || sh.Invariants.DoubleCharges != 0 {
			t.Errorf("shop %s: %+v: the stray charges are no shop's", sh.Name, sh.Invariants)
		}
	}
	if c := examples["charges_without_order"]; !slices.Equal(c.IDs, []string{"s1-8", "s1-9"}) {
		t.Errorf("examples %+v", examples)
	}
	if two.rec.Charges.Approved != 5 {
		t.Errorf("approved charges %d, want the 5 the provider holds", two.rec.Charges.Approved)
	}
	note := "3 charges and 0 orders of this run belong to no shop's shopper (checkout ids s1-8, s1-9): reconciled on their own, counted in the sale's invariants, in no shop's: double_charges 1, charges_without_order 3"
	if !slices.ContainsFunc(two.rec.Notes, func(n string) bool { return strings.Contains(n, note) }) {
		t.Errorf("notes %q\nwant %q", two.rec.Notes, note)
	}

	// The stray rows of a sale with none: nothing added, no note.
	clean := &drill{rec: &Record{}, ledgers: []*ledger{{shop: "a", sys: sys}, {shop: "b", sys: sys}}}
	shared = shared[:2]
	clean.reconcile([]*judge.Facts{facts(order("s1-0")), facts(order("s1-1"))}, shoppers, nil)
	if iv := clean.rec.Invariants; iv.ChargesWithoutOrder != 0 || slices.ContainsFunc(clean.rec.Notes, func(n string) bool { return strings.Contains(n, "no shop's shopper") }) {
		t.Errorf("a sale without stray rows: %+v, %q", iv, clean.rec.Notes)
	}
}
