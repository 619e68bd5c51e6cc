package judge

import (
	"slices"
	"strings"
	"testing"
)

// A charge of this run that no shopper made (its checkout id has the run's
// prefix, but no shopper has it) is a charge without order, counted once,
// whether the sale has one shop or several: before, a sale across shops
// dropped it from every shop and counted 0. Every shop reads the charges
// of the provider they share, so the stray charge is read twice and still
// counts once; a second stray charge of the same checkout is a double
// charge. The run's notes say which checkout ids belong to no shop.
func TestStrayChargesCountInEverySale(t *testing.T) {
	charge := func(id, chargeID string) Charge {
		return Charge{CheckoutID: id, ID: chargeID, Status: "approved"}
	}
	shared := []Charge{charge("s1-0", "ch0"), charge("s1-1", "ch1"), charge("s1-9", "ch9"), charge("s1-8", "ch8a"), charge("s1-8", "ch8b")}
	shoppers := []Shopper{
		{ID: "s1-0", Shop: "a", Outcome: Confirmed},
		{ID: "s1-1", Shop: "b", Outcome: Confirmed},
	}
	order := func(id string) Order { return Order{CheckoutID: id, Units: 1} }
	facts := func(orders ...Order) *Facts {
		return &Facts{OrdersKnown: true, ChargesKnown: true, Orders: orders, Charges: slices.Clone(shared)}
	}

	// One shop: s1-9's charge and both of s1-8's have no order (3), and
	// one of s1-8's is a double charge.
	var one Judged
	reconcileBooks([]Books{{Name: "shop", Facts: facts(order("s1-0"), order("s1-1"))}}, shoppers, &one)
	if iv := one.Invariants; iv.ChargesWithoutOrder != 3 || iv.DoubleCharges != 1 {
		t.Fatalf("one shop: %+v", iv)
	}

	// Two shops, each reading the shared provider's charges: the same.
	var two Judged
	_, examples := reconcileBooks([]Books{{Shop: "a", Facts: facts(order("s1-0"))}, {Shop: "b", Facts: facts(order("s1-1"))}}, shoppers, &two)
	if iv := two.Invariants; iv.ChargesWithoutOrder != 3 || iv.DoubleCharges != 1 {
		t.Errorf("two shops: %+v, want what one shop counts", iv)
	}
	for _, sh := range two.Shops {
		if sh.Invariants.ChargesWithoutOrder != 0 || sh.Invariants.DoubleCharges != 0 {
			t.Errorf("shop %s: %+v: the stray charges are no shop's", sh.Name, sh.Invariants)
		}
	}
	if c := examples["charges_without_order"]; !slices.Equal(c.IDs, []string{"s1-8", "s1-9"}) {
		t.Errorf("examples %+v", examples)
	}
	if two.Charges.Approved != 5 {
		t.Errorf("approved charges %d, want the 5 the provider holds", two.Charges.Approved)
	}
	note := "3 charges and 0 orders of this run belong to no shop's shopper (checkout ids s1-8, s1-9): reconciled on their own, counted in the sale's invariants, in no shop's: double_charges 1, charges_without_order 3"
	if !slices.ContainsFunc(two.Notes, func(n string) bool { return strings.Contains(n, note) }) {
		t.Errorf("notes %q\nwant %q", two.Notes, note)
	}

	// The stray rows of a sale with none: nothing added, no note.
	var clean Judged
	shared = shared[:2]
	reconcileBooks([]Books{{Shop: "a", Facts: facts(order("s1-0"))}, {Shop: "b", Facts: facts(order("s1-1"))}}, shoppers, &clean)
	if iv := clean.Invariants; iv.ChargesWithoutOrder != 0 || slices.ContainsFunc(clean.Notes, func(n string) bool { return strings.Contains(n, "no shop's shopper") }) {
		t.Errorf("a sale without stray rows: %+v, %q", iv, clean.Notes)
	}
}

// A shop moved between pods has its books on both, and the charges each
// pod's books read: the same rows where the pods share a provider (read
// twice, counted once), other rows where each pod has its own. The
// shop is judged on every charge either read, not on its home pod's read
// alone: a second charge made on the pod it moved to is a double charge,
// and a read that failed on one pod is made good by the other's.
func TestAMovedShopIsJudgedOnEveryPodsCharges(t *testing.T) {
	charge := func(id, chargeID string) Charge { return Charge{CheckoutID: id, ID: chargeID, Status: "approved"} }
	shoppers := []Shopper{{ID: "s1-0", Shop: "a", Outcome: Confirmed}, {ID: "s1-1", Shop: "a", Outcome: Confirmed}}
	home := &Facts{OrdersKnown: true, ChargesKnown: true, Orders: []Order{{CheckoutID: "s1-0", Units: 1}},
		Charges: []Charge{charge("s1-0", "ch0")}}
	away := &Facts{OrdersKnown: true, ChargesKnown: true, Orders: []Order{{CheckoutID: "s1-1", Units: 1}},
		Charges: []Charge{charge("s1-0", "ch0"), charge("s1-1", "ch1"), charge("s1-1", "ch1b")}}
	var j Judged
	reconcileBooks([]Books{{Shop: "a", Pod: "pod-1", Facts: home}, {Shop: "a", Pod: "pod-2", Away: true, Facts: away}}, shoppers, &j)
	if iv := j.Invariants; iv.DoubleCharges != 1 || iv.ChargesWithoutOrder != 0 || iv.OrdersWithoutCharge != 0 {
		t.Errorf("moved shop: %+v; want the second charge of s1-1 on pod-2 counted a double charge, ch0 read twice counted once", iv)
	}
	if j.Charges.Approved != 3 {
		t.Errorf("approved charges %d, want 3", j.Charges.Approved)
	}
	// The home pod's read of the charges failed; the other pod's is used.
	home.ChargesKnown, home.Charges = false, nil
	j = Judged{}
	nc, _ := reconcileBooks([]Books{{Shop: "a", Pod: "pod-1", Facts: home}, {Shop: "a", Pod: "pod-2", Away: true, Facts: away}}, shoppers, &j)
	if _, ok := nc["double_charges"]; ok || j.Invariants.DoubleCharges != 1 {
		t.Errorf("home pod's charges unread: not checked %v, %+v", nc, j.Invariants)
	}
}
