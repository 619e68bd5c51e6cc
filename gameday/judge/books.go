package judge

import (
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strings"

	"github.com/gameday-dev/gameday/gameday/runrecord"
	"github.com/gameday-dev/gameday/scenarios"
)

// reconcileBooks checks every ledger's books against its shoppers and
// fills in j's invariants, books and, in a sale across shops, each shop's
// figures; it returns the invariants that could not be checked, each with
// the facts it lacked. A shop's books are its pod's, but its charges are
// at a provider all shops share: only those of its own shoppers are its.
func reconcileBooks(books []Books, shoppers []Shopper, j *Judged) (notChecked map[string]string, examples map[string]Cases) {
	notChecked, examples = map[string]string{}, map[string]Cases{}
	// An invariant is not checked only where no shop could check it; one
	// that some shops could not check is noted with their names.
	missing := map[string][]string{}
	shops := 0
	var total runrecord.Invariants
	facts := make([]*Facts, len(books))
	for i, b := range books {
		facts[i] = b.Facts
	}
	for i, b := range books {
		if b.Away {
			continue // merged into the shop's first ledger below
		}
		f, mine, dropped := facts[i], shoppers, 0
		for k := i + 1; k < len(books); k++ {
			if books[k].Shop == b.Shop && books[k].Away {
				if f == nil || facts[k] == nil {
					f = nil
					break
				}
				f = mergeFacts(f, facts[k])
			}
		}
		if f == nil {
			// Its books could not be read (the error says why, and makes
			// the run an error); the other shops' are still judged.
			continue
		}
		if b.Shop != "" {
			mine = nil
			for _, s := range shoppers {
				if s.Shop == b.Shop {
					mine = append(mine, s)
				}
			}
			f = onlyTheirs(f, mine)
		}
		for _, s := range mine {
			if s.Outcome == Dropped {
				dropped++
			}
		}
		j.Notes = append(j.Notes, EmptyBooksNotes(f, mine, func(table string) string {
			return fmt.Sprintf("books.%s of %s (%s)", table, b.Name, b.File)
		})...)
		r := ReconcileAll(f, mine, dropped)
		iv, nc := r.Invariants, r.NotChecked
		maps.Copy(notChecked, nc)
		for n, c := range r.Examples {
			examples[n] = examples[n].Add(c)
		}
		shops++
		for n := range nc {
			missing[n] = append(missing[n], b.Shop)
		}
		ledger, charges := Summarise(f)
		if b.Shop == "" {
			j.Invariants, j.Ledger, j.Charges = iv, ledger, charges
			return notChecked, examples
		}
		total = total.Add(iv)
		j.Ledger = j.Ledger.Add(ledger)
		j.Charges = j.Charges.Add(charges)
		outcomes := map[string]int{}
		for _, s := range mine {
			if s.Outcome != "" {
				outcomes[string(s.Outcome)]++
			}
		}
		j.Shops = append(j.Shops, runrecord.Shop{Name: b.Shop, Pod: b.Pod, Outcomes: outcomes, Invariants: iv, Ledger: ledger, Charges: charges})
	}
	// What belongs to no shop's shopper is no shop's, but it is the
	// sale's: a charge of this run that no shopper made still took money.
	if u := unattributed(facts, shoppers); u != nil {
		r := ReconcileAll(u, nil, 0)
		total = total.Add(r.Invariants)
		for n, c := range r.Examples {
			examples[n] = examples[n].Add(c)
		}
		ledger, charges := Summarise(u)
		j.Ledger.Orders += ledger.Orders
		j.Charges = j.Charges.Add(charges)
		j.Notes = append(j.Notes, unattributedNote(u, r.Invariants))
	}
	j.Invariants = total
	for _, n := range slices.Sorted(maps.Keys(missing)) {
		if who := missing[n]; len(who) < shops {
			delete(notChecked, n)
			j.Notes = append(j.Notes, fmt.Sprintf("%s not checked for shops %s, for want of the facts: checked for the others", n, strings.Join(who, ", ")))
		}
	}
	return notChecked, examples
}

// unattributed is what the books of a sale across shops hold of this run
// that belongs to no shop's shopper: the charges and orders whose checkout
// id begins with the run's prefix (the runner kept only those) and is
// none of the shoppers'. onlyTheirs leaves them out of every shop; here
// they are reconciled on their own, so that a charge no shopper made is
// counted once, as in a sale without shops (charges_without_order, and
// double_charges or wrong_amounts where they apply). The charges of a
// provider the shops share are read once per shop: a row read by several
// ledgers counts as often as the ledger that read it most holds it. nil
// when there is none.
func unattributed(facts []*Facts, shoppers []Shopper) *Facts {
	ids := make(map[string]bool, len(shoppers))
	for _, s := range shoppers {
		ids[s.ID] = true
	}
	u := &Facts{OrdersKnown: true, OrderCharges: true, OrderAmounts: true, ChargeAmounts: true}
	var chargeReads [][]Charge
	var orderLists [][]Order
	for i, f := range facts {
		if f == nil {
			continue
		}
		if i == 0 {
			u.Price = f.Price
		}
		u.OrdersKnown = u.OrdersKnown && f.OrdersKnown
		u.OrderCharges = u.OrderCharges && f.OrderCharges
		u.OrderAmounts = u.OrderAmounts && f.OrderAmounts
		if f.ChargesKnown {
			u.ChargesKnown = true
			u.ChargeAmounts = u.ChargeAmounts && f.ChargeAmounts
		}
		chargeReads = append(chargeReads, slices.DeleteFunc(slices.Clone(f.Charges), func(c Charge) bool { return ids[c.CheckoutID] }))
		orderLists = append(orderLists, slices.DeleteFunc(slices.Clone(f.Orders), func(o Order) bool { return ids[o.CheckoutID] }))
	}
	u.Charges = unionReads(chargeReads, chargeKey)
	u.Orders = unionReads(orderLists, orderKey)
	if len(u.Charges)+len(u.Orders) == 0 {
		return nil
	}
	return u
}

// unionReads is every row that several reads of one table hold: a row
// read by several counts as often as the read that holds it most (a
// provider read by every shop holds each charge once; a charge made
// twice is held twice by each). The rows are sorted by their key, so the
// same reads give the same rows whatever their order.
func unionReads[T any](reads [][]T, key func(T) string) []T {
	most := map[string]int{}
	row := map[string]T{}
	for _, read := range reads {
		mine := map[string]int{}
		for _, r := range read {
			k := key(r)
			mine[k]++
			row[k] = r
		}
		for k, n := range mine {
			most[k] = max(most[k], n)
		}
	}
	var out []T
	for _, k := range slices.Sorted(maps.Keys(most)) {
		for range most[k] {
			out = append(out, row[k])
		}
	}
	return out
}

// chargeKey and orderKey tell rows apart by everything the books read of
// them.
func chargeKey(c Charge) string {
	return fmt.Sprintf("%q %q %q %d %s", c.CheckoutID, c.ID, c.Status, c.At.UnixNano(), ratText(c.Amount))
}

func orderKey(o Order) string {
	return fmt.Sprintf("%q %q %d %s", o.CheckoutID, o.Charge, o.Units, ratText(o.Amount))
}

func ratText(r *big.Rat) string {
	if r == nil {
		return "-"
	}
	return r.RatString()
}

// unattributedNote says which rows of this run belong to no shop's
// shopper, and what they broke.
func unattributedNote(u *Facts, iv Invariants) string {
	var ids []string
	seen := map[string]bool{}
	for _, c := range u.Charges {
		if !seen[c.CheckoutID] {
			seen[c.CheckoutID] = true
			ids = append(ids, c.CheckoutID)
		}
	}
	for _, o := range u.Orders {
		if !seen[o.CheckoutID] {
			seen[o.CheckoutID] = true
			ids = append(ids, o.CheckoutID)
		}
	}
	ids = SortIDs(ids)
	shown := strings.Join(ids[:min(len(ids), MaxExamples)], ", ")
	if len(ids) > MaxExamples {
		shown += ", ..."
	}
	var broke []string
	counts := iv.ByName()
	for _, n := range scenarios.InvariantNames() {
		if counts[n] > 0 {
			broke = append(broke, fmt.Sprintf("%s %d", n, counts[n]))
		}
	}
	what := "none broke an invariant"
	if len(broke) > 0 {
		what = "counted in the sale's invariants, in no shop's: " + strings.Join(broke, ", ")
	}
	return fmt.Sprintf("%d %s and %d %s of this run belong to no shop's shopper (checkout ids %s): reconciled on their own, %s", len(u.Charges), plural(len(u.Charges), "charge"), len(u.Orders), plural(len(u.Orders), "order"), shown, what)
}

// onlyTheirs is f with the charges and orders of shoppers other than
// shoppers left out.
func onlyTheirs(f *Facts, shoppers []Shopper) *Facts {
	ids := make(map[string]bool, len(shoppers))
	for _, s := range shoppers {
		ids[s.ID] = true
	}
	c := *f
	c.Charges, c.Orders = nil, nil
	for _, ch := range f.Charges {
		if ids[ch.CheckoutID] {
			c.Charges = append(c.Charges, ch)
		}
	}
	for _, o := range f.Orders {
		if ids[o.CheckoutID] {
			c.Orders = append(c.Orders, o)
		}
	}
	return &c
}

// mergeFacts is the books of a shop kept on two pods (a move took it from
// one to the other): the units of both added (the pod it moved to started
// with none), the orders of both, and every charge either pod's books read
// (unionReads: the same row read on both, from a provider they share, is
// counted once; a pod with a provider of its own adds its charges), known
// where either read them.
func mergeFacts(a, b *Facts) *Facts {
	c := *a
	add := func(x, y *int64) *int64 {
		if x == nil || y == nil {
			return nil
		}
		n := *x + *y
		return &n
	}
	c.Initial, c.AvailableBefore = add(a.Initial, b.Initial), add(a.AvailableBefore, b.AvailableBefore)
	c.Available, c.Reserved, c.Sold = add(a.Available, b.Available), add(a.Reserved, b.Reserved), add(a.Sold, b.Sold)
	c.Orders = append(append([]Order(nil), a.Orders...), b.Orders...)
	var reads [][]Charge
	for _, f := range []*Facts{a, b} {
		if f.ChargesKnown {
			reads = append(reads, f.Charges)
		}
	}
	c.Charges, c.ChargesKnown = unionReads(reads, chargeKey), len(reads) > 0
	c.ChargeAmounts = (!a.ChargesKnown || a.ChargeAmounts) && (!b.ChargesKnown || b.ChargeAmounts) && c.ChargesKnown
	c.OrdersKnown, c.OrderCharges = a.OrdersKnown && b.OrdersKnown, a.OrderCharges && b.OrderCharges
	c.OrderAmounts = a.OrderAmounts && b.OrderAmounts
	c.Final = a.Final && b.Final
	c.SaysSettled, c.StillOpen = a.SaysSettled && b.SaysSettled, a.StillOpen || b.StillOpen
	c.OtherRunOrders = a.OtherRunOrders + b.OtherRunOrders
	c.OtherRunIDs = append(append([]string(nil), a.OtherRunIDs...), b.OtherRunIDs...)
	c.StockUnread = a.StockUnread || b.StockUnread
	c.Notes = append(append([]string(nil), a.Notes...), b.Notes...)
	return &c
}
