package judge

import (
	"math/big"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func p64(n int64) *int64 { return &n }

func amt(s string) *big.Rat {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		panic(s)
	}
	return r
}

// Each invariant is proven to fire: a table of books broken on purpose,
// one way each, and the count that must catch it.
func TestReconcileCatchesEachBreak(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	// The healthy books every row starts from: 2 of 3 units sold, both
	// paid; c declined.
	healthy := func() (*Facts, []Shopper) {
		return &Facts{
				Initial: p64(3), Available: p64(1), Sold: p64(2), Reserved: p64(0),
				Orders:      []Order{{CheckoutID: "a", Charge: "ch_a", Units: 1, Amount: amt("12.99")}, {CheckoutID: "b", Charge: "ch_b", Units: 1, Amount: amt("12.99")}},
				OrdersKnown: true, OrderCharges: true, OrderAmounts: true,
				Charges: []Charge{{CheckoutID: "a", ID: "ch_a", Status: "approved", At: t0, Amount: amt("12.990")}, {CheckoutID: "b", ID: "ch_b", Status: "approved", At: t0, Amount: amt("12.99")},
					{CheckoutID: "c", ID: "ch_c", Status: "declined", At: t0}},
				ChargesKnown: true, ChargeAmounts: true, Final: true, SaysSettled: true,
			}, []Shopper{
				{ID: "a", Outcome: "confirmed", LeftAt: t0.Add(time.Minute), Told: "confirmed"},
				{ID: "b", Outcome: "confirmed", LeftAt: t0.Add(time.Minute), Told: "confirmed"},
				{ID: "c", Outcome: "declined", LeftAt: t0.Add(time.Minute), Told: "declined"},
			}
	}
	cases := []struct {
		name  string
		brk   func(f *Facts, s []Shopper)
		field func(Invariants) int64
	}{
		// One more sold than there was stock.
		{"oversold", func(f *Facts, _ []Shopper) { f.Sold, f.Available = p64(4), p64(-1) },
			func(iv Invariants) int64 { return iv.Oversold }},
		// A unit neither available, reserved nor sold.
		{"lost unit", func(f *Facts, _ []Shopper) { f.Available = p64(0) },
			func(iv Invariants) int64 { return iv.LostUnits }},
		// A second approved charge for the same shopper.
		{"double charge", func(f *Facts, _ []Shopper) {
			f.Charges = append(f.Charges, Charge{CheckoutID: "a", ID: "ch_a2", Status: "approved", At: t0})
		}, func(iv Invariants) int64 { return iv.DoubleCharges }},
		// Money taken for a unit nobody got.
		{"charge without order", func(f *Facts, _ []Shopper) { f.Charges[2].Status = "approved" },
			func(iv Invariants) int64 { return iv.ChargesWithoutOrder }},
		// An order whose charge was voided.
		{"order without charge", func(f *Facts, _ []Shopper) { f.Charges[1].Status = "voided" },
			func(iv Invariants) int64 { return iv.OrdersWithoutCharge }},
		// An order paid with a charge the provider does not have.
		{"order with another charge", func(f *Facts, _ []Shopper) { f.Orders[1].Charge = "ch_zz" },
			func(iv Invariants) int64 { return iv.OrdersWithoutCharge }},
		// A shopper who gave up, charged after leaving.
		{"charged after leaving", func(f *Facts, s []Shopper) {
			f.Charges[2].Status = "approved"
			f.Charges[2].At = t0.Add(2 * time.Minute)
			s[2].Outcome = "gave_up"
		}, func(iv Invariants) int64 { return iv.ChargedAfterLeaving }},
		// Told the purchase failed, and the order exists: "503 but the
		// order exists".
		{"order told failed", func(_ *Facts, s []Shopper) { s[1].Outcome, s[1].Told = "unavailable", "unavailable" },
			func(iv Invariants) int64 { return iv.OrdersToldFailed }},
		// Told confirmed, and no order.
		{"confirmed without order", func(_ *Facts, s []Shopper) { s[2].Outcome, s[2].Told = "confirmed", "confirmed" },
			func(iv Invariants) int64 { return iv.ConfirmedWithoutOrder }},
		// A charge that took other than its order costs: the price of
		// two units for one.
		{"wrong amount", func(f *Facts, _ []Shopper) { f.Charges[1].Amount = amt("25.98") },
			func(iv Invariants) int64 { return iv.WrongAmounts }},
		// An approved charge whose amount the books do not give, where
		// they give the rest: not a pass.
		{"amount missing", func(f *Facts, _ []Shopper) { f.Charges[0].Amount = nil },
			func(iv Invariants) int64 { return iv.WrongAmounts }},
		// A unit from nowhere: still available after two of three sold
		// and one more (a shop's stock copied to a second pod).
		{"units created", func(f *Facts, _ []Shopper) { f.Available = p64(2) },
			func(iv Invariants) int64 { return iv.UnitsCreated }},
		// c's unit, whose charge was declined, never given back: held
		// when the books are final. Not lost (held is counted), not
		// created; stranded.
		{"stranded unit", func(f *Facts, _ []Shopper) { f.Available, f.Reserved = p64(0), p64(1) },
			func(iv Invariants) int64 { return iv.StrandedUnits }},
		// The shop's reservation took b's unit and counted it sold, but
		// no order was written and b was told 502: available + sold is
		// still the stock, and every stock invariant reads 0.
		{"sold without an order", func(f *Facts, s []Shopper) {
			f.Orders, f.Charges[1].Status = f.Orders[:1], "voided"
			s[1].Outcome, s[1].Told = "error", "error"
		}, func(iv Invariants) int64 { return iv.SoldWithoutOrder }},
		// The order writer delivered a's order twice: 3 order units for
		// the 2 the shop counts sold.
		{"order written twice", func(f *Facts, _ []Shopper) { f.Orders = append(f.Orders, f.Orders[0]) },
			func(iv Invariants) int64 { return iv.OrdersBeyondSold }},
		// c was told its purchase was queued, and the books never
		// settled: nothing of it was ever written.
		{"accepted, never finished", func(f *Facts, s []Shopper) {
			f.StillOpen, f.Charges = true, f.Charges[:2]
			s[2].Outcome, s[2].Told, s[2].ToldPending = "gave_up", "retry_later", t0
		}, func(iv Invariants) int64 { return iv.AcceptedNotFinished }},
		// A hold released twice: the reservation count below zero must
		// not cancel the unit the second release put back on sale.
		{"hold released twice", func(f *Facts, _ []Shopper) { f.Available, f.Reserved = p64(2), p64(-1) },
			func(iv Invariants) int64 { return iv.UnitsCreated }},
	}
	f, s := healthy()
	if iv, nc := Reconcile(f, s, 0); iv != (Invariants{}) || len(nc) != 0 {
		t.Fatalf("healthy books: %+v (not checked %v), want all zero", iv, nc)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, s := healthy()
			c.brk(f, s)
			if iv, _ := Reconcile(f, s, 0); c.field(iv) == 0 {
				t.Errorf("%s not caught: %+v", c.name, iv)
			}
		})
	}
	// The sale's price: an order that records what was charged cannot
	// vouch for the charge. Both sides at the list price, 15.99 for a
	// unit of 12.99, pass against each other and fail against the price.
	f, s = healthy()
	for i := range f.Orders {
		f.Orders[i].Amount = amt("15.99")
		f.Charges[i].Amount = amt("15.99")
	}
	if iv, _ := Reconcile(f, s, 0); iv.WrongAmounts != 0 {
		t.Fatalf("list price on both sides, no price given: %+v", iv)
	}
	f.Price = amt("12.99")
	if iv, _ := Reconcile(f, s, 0); iv.WrongAmounts != 2 {
		t.Errorf("list price on both sides, price 12.99: wrong amounts %d, want 2", iv.WrongAmounts)
	}
	if n := AmountsNote(f); !strings.Contains(n, "took 15.99 for an order of 1 at 12.99 (books.price)") {
		t.Errorf("note %q", n)
	}
	// With the price and the orders' amounts, both hold the charge: an
	// order that records 45 for a charge of 12.99 at the price 12.99 is
	// still a wrong amount, told against the order.
	f, s = healthy()
	f.Price, f.Orders[0].Amount = amt("12.99"), amt("45")
	if iv, _ := Reconcile(f, s, 0); iv.WrongAmounts != 1 {
		t.Errorf("the order's amount wrong, the charge right at the price: wrong amounts %d, want 1", iv.WrongAmounts)
	}
	if n := AmountsNote(f); !strings.Contains(n, "took 12.990 for an order of 45") && !strings.Contains(n, "took 12.99 for an order of 45") {
		t.Errorf("note %q", n)
	}
	// With the price, orders need no amount of their own, and an order of
	// two units costs twice the price.
	f, s = healthy()
	f.Price, f.OrderAmounts = amt("12.99"), false
	f.Orders[0].Units, f.Charges[0].Amount = 2, amt("25.98")
	for i := range f.Orders {
		f.Orders[i].Amount = nil
	}
	if iv, nc := Reconcile(f, s, 0); iv.WrongAmounts != 0 || nc["wrong_amounts"] != "" {
		t.Errorf("priced orders without amounts: %+v (not checked %v)", iv, nc)
	}
	// A stranded unit is that only: not a lost unit, not one created.
	// Read before the books are final (no settle step, an interrupt),
	// a held unit may be on its way, and is not judged.
	f, s = healthy()
	f.Available, f.Reserved = p64(0), p64(1)
	if iv, nc := Reconcile(f, s, 0); iv != (Invariants{StrandedUnits: 1}) || len(nc) != 0 {
		t.Errorf("a stranded unit: %+v (not checked %v), want stranded_units 1 only", iv, nc)
	}
	f.Final = false
	if iv, nc := Reconcile(f, s, 0); iv != (Invariants{}) || nc["stranded_units"] == "" {
		t.Errorf("held before the books were final: %+v (not checked %v), want stranded_units not checked", iv, nc)
	}
	// A hold left on a unit that was sold (the order committed, its hold
	// never cleared) counts the unit twice: units created, not stranded.
	f, s = healthy()
	f.Reserved = p64(1)
	if iv, _ := Reconcile(f, s, 0); iv != (Invariants{UnitsCreated: 1}) {
		t.Errorf("a sold unit still held: %+v, want units_created 1 only", iv)
	}
	// An oversell from the stock there was is an oversell, not units
	// created: available goes below zero by what was oversold.
	f, s = healthy()
	f.Sold, f.Available = p64(4), p64(-1)
	if iv, _ := Reconcile(f, s, 0); iv.UnitsCreated != 0 || iv.Oversold != 1 {
		t.Errorf("an oversell counted as units created: %+v", iv)
	}
	// Nor is a lost update whose phantom units were all sold (two sales
	// read 1 left and both wrote 0): 4 sold of 3, 0 available.
	f, s = healthy()
	f.Sold, f.Available = p64(4), p64(0)
	if iv, _ := Reconcile(f, s, 0); iv.UnitsCreated != 0 || iv.Oversold != 1 {
		t.Errorf("a lost update counted twice: %+v", iv)
	}
	// One whose phantom units are still for sale is both, each unit
	// once: 4 sold of 3 and 2 more still offered.
	f.Available = p64(2)
	if iv, _ := Reconcile(f, s, 0); iv.UnitsCreated != 2 || iv.Oversold != 1 {
		t.Errorf("phantom units sold and still for sale: %+v, want 1 oversold and 2 created", iv)
	}
	// Units held while available is below zero balance what was sold:
	// 3 of 3 sold, 1 held, -1 available is nothing created.
	f, s = healthy()
	f.Sold, f.Available, f.Reserved = p64(3), p64(-1), p64(1)
	if iv, _ := Reconcile(f, s, 0); iv.UnitsCreated != 0 {
		t.Errorf("held units beside a negative available counted as created: %+v", iv)
	}
	// An order kept as line items, two rows of 5 made with one charge of
	// 10, is paid in full; two orders of one checkout, each with its own
	// charge, are each compared with their own: 50 for 5 is caught.
	f, s = healthy()
	f.Orders = []Order{{CheckoutID: "a", Charge: "ch_a", Units: 1, Amount: amt("5")}, {CheckoutID: "a", Charge: "ch_a", Units: 1, Amount: amt("5")},
		{CheckoutID: "b", Charge: "ch_b", Units: 1, Amount: amt("12.99")}}
	f.Sold, f.Available = p64(3), p64(0)
	f.Charges[0].Amount = amt("10")
	if iv, _ := Reconcile(f, s, 0); iv.WrongAmounts != 0 {
		t.Errorf("an order in two rows, paid in full: %+v", iv)
	}
	f.Orders[1].Charge = "ch_a2"
	f.Charges[0].Amount = amt("50")
	f.Charges = append(f.Charges, Charge{CheckoutID: "a", ID: "ch_a2", Status: "approved", At: t0, Amount: amt("5")})
	if iv, _ := Reconcile(f, s, 0); iv.WrongAmounts != 1 {
		t.Errorf("two orders of one checkout, one charge of 50 for 5: %+v, want 1 wrong amount", iv)
	}
	// A second approved charge beside the one the order was made with is
	// one double charge, not also a charge without order; one whose order
	// names a charge that was voided is a charge without order (and the
	// order one without charge).
	f, s = healthy()
	f.Charges = append(f.Charges, Charge{CheckoutID: "a", ID: "ch_a2", Status: "approved", At: t0, Amount: amt("12.99")})
	if iv, _ := Reconcile(f, s, 0); iv.DoubleCharges != 1 || iv.ChargesWithoutOrder != 0 {
		t.Errorf("one extra charge: %+v, want 1 double charge only", iv)
	}
	f.Charges[0].Status = "voided"
	if iv, _ := Reconcile(f, s, 0); iv.DoubleCharges != 0 || iv.ChargesWithoutOrder != 1 || iv.OrdersWithoutCharge != 1 {
		t.Errorf("the order's charge voided, another approved: %+v, want a charge without order and an order without charge", iv)
	}
}

// An oracle whose facts the system cannot give is not checked, and says
// what it needs; it is never counted as held.
func TestOraclesWithoutTheirFactsAreNotChecked(t *testing.T) {
	iv, nc := Reconcile(&Facts{Available: p64(3), AvailableBefore: p64(5), OrdersKnown: true, Orders: []Order{{CheckoutID: "a", Units: 2}}}, nil, 0)
	if iv.LostUnits != 0 || iv.Oversold != 0 {
		t.Errorf("from available before and after and the orders: %+v", iv)
	}
	for _, name := range []string{"double_charges", "charges_without_order", "orders_without_charge", "charged_after_leaving", "wrong_amounts"} {
		if nc[name] == "" {
			t.Errorf("%s: checked without charges (not checked: %v)", name, nc)
		}
	}
	for _, name := range []string{"oversold", "lost_units", "orders_told_failed", "confirmed_without_order"} {
		if _, ok := nc[name]; ok {
			t.Errorf("%s: not checked, though its facts are there", name)
		}
	}
	rs := InvariantResults(iv, nil, nc, nil)
	for _, r := range rs {
		if r.Invariant == "double_charges" && (!r.NotChecked || r.Held || r.Needs == "") {
			t.Errorf("double charges result: %+v", r)
		}
	}
	if b := broken(rs, ""); b != "" {
		t.Errorf("not checked counted as broken: %s", b)
	}
	// With nothing at all, every book oracle is not checked.
	if _, nc := Reconcile(&Facts{}, nil, 0); len(nc) != len(oracles) {
		t.Errorf("no facts: %d not checked, want %d", len(nc), len(oracles))
	}
}

// The note on wrong amounts names the first in the plan's order with both
// amounts, or, where every charge took the same hundredfold or
// thousandfold, says the two are likely in different units.
func TestAmountsNote(t *testing.T) {
	books := func(pairs ...string) *Facts {
		f := &Facts{OrdersKnown: true, ChargesKnown: true, OrderAmounts: true, ChargeAmounts: true}
		for i := 0; i < len(pairs); i += 2 {
			id := "r-" + strconv.Itoa(10-i)
			f.Orders = append(f.Orders, Order{CheckoutID: id, Units: 1, Amount: amt(pairs[i])})
			f.Charges = append(f.Charges, Charge{CheckoutID: id, ID: "ch" + id, Status: "approved", Amount: amt(pairs[i+1])})
		}
		return f
	}
	for _, c := range []struct {
		f    *Facts
		want string
	}{
		{books("19.99", "19.990", "5", "5"), ""},
		{books("19.99", "19.98", "5", "5", "5", "6"), "wrong amounts: the charge chr-6 of r-6 took 6 for an order of 5 (the first of 2)"},
		{books("19.99", "1999", "5", "500"), "every approved charge took 100 times what its order costs"},
		{books("5", "5000", "2", "2000"), "every approved charge took 1000 times what its order costs: if books.charges gives amounts in a smaller unit than books.orders (cents against whole units), give both in the same unit (in books.orders' SQL: amount * 1000 AS amount)"},
		{books("1999", "19.99", "500", "5"), "every approved charge took a 100th of what its order costs"},
		// One right beside them: not a matter of units.
		{books("19.99", "1999", "5", "5"), "wrong amounts: the charge chr-10 of r-10 took 1999 for an order of 19.99 (the first of 1)"},
	} {
		if got := AmountsNote(c.f); !strings.HasPrefix(got, c.want) || (c.want == "") != (got == "") {
			t.Errorf("%+v: note %q, want %q", c.f.Orders, got, c.want)
		}
	}
}

func TestInvariantResultsHonourAllowances(t *testing.T) {
	iv := Invariants{Dropped: 3, Oversold: 1}
	rs := InvariantResults(iv, map[string]int64{"dropped": 5}, nil, nil)
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
	f := &Facts{Initial: p64(1), Sold: p64(1), OrdersKnown: true, ChargesKnown: true,
		Orders: []Order{{CheckoutID: "a", Charge: "ch_a", Units: 1}}, Charges: []Charge{{CheckoutID: "a", ID: "ch_a", Status: "approved", At: t0}}}
	left := []Shopper{{ID: "a", Outcome: "gave_up", LeftAt: t0.Add(-time.Second)}}
	if iv, _ := Reconcile(f, left, 0); iv.ChargedAfterLeaving != 1 {
		t.Fatalf("a shopper who left by its deadline: charged after leaving %d, want 1", iv.ChargedAfterLeaving)
	}
	left[0].Cut = true
	if iv, _ := Reconcile(f, left, 0); iv.ChargedAfterLeaving != 0 {
		t.Errorf("a shopper the runner cut: charged after leaving %d, want 0", iv.ChargedAfterLeaving)
	}
}

// A broken invariant names the checkouts that broke it, the smallest ids
// first and at most MaxExamples of them, and the verdict's reason names
// them too: where an SRE starts looking in the system's own logs.
func TestBrokenInvariantsNameTheirCheckouts(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	f := &Facts{OrdersKnown: true, ChargesKnown: true}
	var s []Shopper
	for i := range 8 {
		id := string(rune('a' + i))
		s = append(s, Shopper{ID: id, Outcome: "confirmed", LeftAt: t0.Add(time.Minute), Told: "confirmed"})
		f.Orders = append(f.Orders, Order{CheckoutID: id, Units: 1})
		f.Charges = append(f.Charges, Charge{CheckoutID: id, ID: "ch_" + id, Status: "approved", At: t0})
	}
	// h, g, f, e, d, c charged twice, and h three times; b's order
	// missing.
	for _, id := range []string{"h", "g", "f", "e", "d", "c", "h"} {
		f.Charges = append(f.Charges, Charge{CheckoutID: id, ID: "ch2_" + id, Status: "approved", At: t0})
	}
	f.Orders = append(f.Orders[:1], f.Orders[2:]...)
	r := ReconcileAll(f, s, 0)
	if r.Invariants.DoubleCharges != 7 || r.Invariants.ConfirmedWithoutOrder != 1 {
		t.Fatalf("invariants %+v", r.Invariants)
	}
	for name, want := range map[string]Cases{"double_charges": {Checkouts: 6, IDs: []string{"c", "d", "e", "f", "g"}}, "confirmed_without_order": {Checkouts: 1, IDs: []string{"b"}}, "charges_without_order": {Checkouts: 1, IDs: []string{"b"}}} {
		if got := r.Examples[name]; !slices.Equal(got.IDs, want.IDs) || got.Checkouts != want.Checkouts {
			t.Errorf("%s: examples %v, want %v", name, got, want)
		}
	}
	if len(r.Examples["oversold"].IDs) != 0 || len(r.Examples["orders_told_failed"].IDs) != 0 {
		t.Errorf("examples of invariants that held: %v", r.Examples)
	}
	rs := InvariantResults(r.Invariants, map[string]int64{"charges_without_order": 1}, nil, r.Examples)
	b := broken(rs, "")
	// Seven double charges of six checkouts, the first five named; one
	// confirmed without order, of one.
	if !strings.Contains(b, "double charges is at most 0 (observed: 7; in 6 checkouts, the first 5: c, d, e, f, g)") || !strings.Contains(b, "confirmed without order is at most 0 (observed: 1; in 1 checkout: b)") {
		t.Errorf("broken: %s", b)
	}
	// The cases of two shops' books add up, the first five of both named.
	if c := (Cases{Checkouts: 2, IDs: []string{"s-3", "s-9"}}).Add(Cases{Checkouts: 4, IDs: []string{"s-1", "s-4", "s-10", "s-12"}}); c.Checkouts != 6 || !slices.Equal(c.IDs, []string{"s-1", "s-3", "s-4", "s-9", "s-10"}) {
		t.Errorf("added: %+v", c)
	}
	// A record written before the count was kept says what it has.
	if got := (ExpectationResult{Examples: []string{"a", "b"}}).ExamplesText(); got != "; checkout ids: a, b" {
		t.Errorf("an older record: %q", got)
	}
	for _, x := range rs {
		if x.Held && len(x.Examples) > 0 {
			t.Errorf("%s held (allowed) yet names checkouts %v", x.Promise, x.Examples)
		}
	}
}

// Checkout ids sort as the plan numbers them, not as strings: an
// example list starts with the sale's first shoppers.
func TestSortIDs(t *testing.T) {
	got := SortIDs([]string{"s1t2-10", "s1t2-9", "s1t2-103", "s1t2-0", "s1t2-hot", "a-1"})
	want := []string{"a-1", "s1t2-0", "s1t2-9", "s1t2-10", "s1t2-103", "s1t2-hot"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// A query that finds no row of the run, where shoppers were told
// confirmed, is said: it reads as a shop that lost every sale.
func TestEmptyBooksNotes(t *testing.T) {
	where := func(table string) string { return "books." + table + " of shop (shop.yaml)" }
	confirmed := []Shopper{{ID: "r-0", Outcome: Confirmed}, {ID: "r-1", Outcome: "sold_out"}}
	f := &Facts{OrdersKnown: true, ChargesKnown: true, Charges: []Charge{{CheckoutID: "r-0", Status: "approved"}}}
	n := EmptyBooksNotes(f, confirmed, where)
	if len(n) != 1 || !strings.HasPrefix(n[0], "books.orders of shop (shop.yaml) gave no row of this run, though 1 shopper was told confirmed") {
		t.Errorf("orders empty: %q", n)
	}
	// Rows of the run, or nobody told confirmed, or a table not
	// described: nothing to say.
	f.Orders = []Order{{CheckoutID: "r-0"}}
	if n := EmptyBooksNotes(f, confirmed, where); len(n) != 0 {
		t.Errorf("orders of the run: %q", n)
	}
	if n := EmptyBooksNotes(&Facts{OrdersKnown: true}, confirmed[1:], where); len(n) != 0 {
		t.Errorf("nobody confirmed: %q", n)
	}
	if n := EmptyBooksNotes(&Facts{}, confirmed, where); len(n) != 0 {
		t.Errorf("no books described: %q", n)
	}
}

// A purchase the system accepted — its last answer said pending, or
// queued — that left nothing in the books (no order, no charge) while the
// system still said work was open when settle_within ran out was
// accepted and never finished: a broken promise to a shopper, counted
// with its checkout id. Books that settled finished every purchase their
// way, and a shopper whose purchase left an order or a charge, or whose
// last answer was final, was not left waiting.
func TestAcceptedPurchasesNeverFinished(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	facts := func() *Facts {
		return &Facts{OrdersKnown: true, ChargesKnown: true, Final: true, SaysSettled: true, StillOpen: true,
			Orders:  []Order{{CheckoutID: "q-1", Units: 1}},
			Charges: []Charge{{CheckoutID: "q-1", ID: "ch1", Status: "approved", At: t0}, {CheckoutID: "q-2", ID: "ch2", Status: "declined", At: t0}}}
	}
	pending := func(id string, o Outcome) Shopper {
		return Shopper{ID: id, Outcome: o, ToldPending: t0, Told: "retry_later", LeftAt: t0.Add(time.Minute)}
	}
	shoppers := []Shopper{
		pending("q-1", GaveUp),      // bought: its order is there
		pending("q-2", GaveUp),      // finished: its charge was declined
		pending("q-3", GaveUp),      // queued, never processed
		pending("q-4", Unavailable), // queued, then a poll found the store down
		{ID: "q-5", Outcome: SoldOut, Told: "sold_out", LeftAt: t0.Add(time.Minute)}, // told sold out
	}
	r := ReconcileAll(facts(), shoppers, 0)
	if r.Invariants.AcceptedNotFinished != 2 || !slices.Equal(r.Examples["accepted_not_finished"].IDs, []string{"q-3", "q-4"}) {
		t.Errorf("accepted, never finished: %d %v, want 2 (q-3, q-4)", r.Invariants.AcceptedNotFinished, r.Examples["accepted_not_finished"])
	}
	f := facts()
	f.StillOpen = false
	if r := ReconcileAll(f, shoppers, 0); r.Invariants.AcceptedNotFinished != 0 || r.NotChecked["accepted_not_finished"] != "" {
		t.Errorf("books that settled: %d (not checked %q), want 0, checked", r.Invariants.AcceptedNotFinished, r.NotChecked["accepted_not_finished"])
	}
	f = facts()
	f.SaysSettled = false
	if r := ReconcileAll(f, shoppers, 0); r.NotChecked["accepted_not_finished"] == "" {
		t.Errorf("books that cannot say they are final: checked (%d)", r.Invariants.AcceptedNotFinished)
	}
}

// A lost unit names no checkout: the stock is counted, not kept per order.
// The verdict says so plainly, and names where to start: the shoppers
// whose purchases were retried, errored or went unanswered while the
// stock fell (before the sale sold out), each with its answers. A
// shopper whose purchase went through at once is no lead, nor is one who
// came after the sale was sold out.
func TestALostUnitNamesItsLeads(t *testing.T) {
	at := func(d time.Duration, st string) Attempt { return Attempt{At: d, Status: st} }
	f := &Facts{Initial: p64(3), Available: p64(0), OrdersKnown: true,
		Orders: []Order{{CheckoutID: "s-1", Units: 1}, {CheckoutID: "s-2", Units: 1}}}
	shoppers := []Shopper{
		{ID: "s-1", Outcome: Confirmed, Attempts: []Attempt{at(0, "confirmed")}},
		{ID: "s-2", Outcome: Confirmed, Attempts: []Attempt{at(time.Second, "unavailable"), at(2*time.Second, "confirmed")}},
		{ID: "s-3", Outcome: Error, Attempts: []Attempt{at(time.Second, "error")}},
		{ID: "s-4", Outcome: SoldOut, Attempts: []Attempt{at(3*time.Second, "sold_out")}},
		{ID: "s-5", Outcome: SoldOut, Attempts: []Attempt{at(4*time.Second, "unavailable"), at(5*time.Second, "sold_out")}},
	}
	r := ReconcileAll(f, shoppers, 0)
	if r.Invariants.LostUnits != 1 {
		t.Fatalf("lost units %d, want 1", r.Invariants.LostUnits)
	}
	res := InvariantResults(r.Invariants, nil, r.NotChecked, r.Examples)
	i := slices.IndexFunc(res, func(e ExpectationResult) bool { return e.Invariant == "lost_units" })
	want := "; no checkout to name (the stock is counted, not kept per order); to start with, 2 shoppers whose purchases were retried, errored or went unanswered while the stock fell: s-2: unavailable, confirmed; s-3: error"
	if got := res[i].ExamplesText(); got != want {
		t.Errorf("lost units:\n got %q\nwant %q", got, want)
	}
	if d := Decide(Ending{Checks: res}); !strings.Contains(d.Reason, "lost units is at most 0 (observed: 1; no checkout to name") {
		t.Errorf("reason: %s", d.Reason)
	}
}
