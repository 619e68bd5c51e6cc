package judge

import (
	"cmp"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Facts are what a system's books said after the drill: the inputs of the
// oracles. A nil pointer or a false known flag is a fact the system could
// not give; the oracles that need it are not checked.
type Facts struct {
	Initial         *int64  `json:"initial"`
	AvailableBefore *int64  `json:"available_before"`
	Available       *int64  `json:"available"`
	Reserved        *int64  `json:"reserved"`
	Sold            *int64  `json:"sold"`
	Orders          []Order `json:"orders"`
	// OrdersKnown: the orders were read; OrderCharges: they name their
	// charge.
	OrdersKnown  bool     `json:"orders_known"`
	OrderCharges bool     `json:"order_charges"`
	Charges      []Charge `json:"charges"`
	ChargesKnown bool     `json:"charges_known"`
	// OrderAmounts and ChargeAmounts: the books give what each order
	// costs and what each charge took, in the same unit.
	OrderAmounts  bool `json:"order_amounts"`
	ChargeAmounts bool `json:"charge_amounts"`
	// StockUnread: a stock fact the system describes could not be read.
	// Then no stock fact is used — not the start, not the units sold
	// (never this run's orders in place of a count that failed), not the
	// held units — so that a fact missing is never read as zero.
	StockUnread bool `json:"stock_unread"`
	// Price is what one unit costs, in the unit of the charges' amounts
	// (books.price); nil when not given. With it, an order costs its
	// units times the price, and an approved charge is held to that as
	// well as to the amount the order records, where it records one.
	Price *big.Rat `json:"price"`
	// Final: the books were read once the system said they were final
	// (books.settled), or once they should have been (its settle_after
	// waited, or its settle_within ran out): a unit still held then is
	// stranded, not on its way to being sold or given back.
	Final bool `json:"final"`
	// SaysSettled: the system says when its books are final
	// (books.settled). StillOpen: it still said something was open when
	// settle_within ran out, and the books were read so, as final.
	SaysSettled bool     `json:"says_settled,omitempty"`
	StillOpen   bool     `json:"still_open,omitempty"`
	Notes       []string `json:"notes"` // what the run should know of how they were read
	// OtherRunOrders are the order rows of other runs (their checkout ids
	// not this run's) that the books gained while this run was on: a
	// queue of an earlier drill not drained, another drill of the same
	// shop. They may have spent this run's stock, so its stock figures
	// cannot be trusted (OtherRuns). OtherRunIDs are the first of their
	// checkout ids, sorted.
	OtherRunOrders int      `json:"other_run_orders,omitempty"`
	OtherRunIDs    []string `json:"other_run_ids,omitempty"`
	// OrdersOfOtherRuns counts the order rows the books hold that are not
	// this run's, by checkout id: what the runner compares before and
	// after the load to find OtherRunOrders. Not kept.
	OrdersOfOtherRuns map[string]int `json:"-"`
}

// Order is one order of this run.
type Order struct {
	CheckoutID string   `json:"checkout_id"`
	Charge     string   `json:"charge"` // the charge it was paid with; "" when unknown
	Units      int64    `json:"units"`
	Amount     *big.Rat `json:"amount"` // what the order costs; nil when unknown
}

// Charge is one charge of this run at the provider.
type Charge struct {
	CheckoutID string    `json:"checkout_id"`
	ID         string    `json:"id"`
	Status     string    `json:"status"` // approved, declined or voided (a charge in another status stops the run before it is judged)
	At         time.Time `json:"at"`
	Amount     *big.Rat  `json:"amount"` // what it took; nil when unknown
}

// oracle is one invariant: the facts it needs and how it counts.
type oracle struct {
	name  string
	needs string // the facts, as the report says them
	ok    func(f *Facts) bool
	// count counts the cases; one of a checkout is also told to seen,
	// with its checkout id.
	count func(f *Facts, s []Shopper, seen func(id string)) int64
}

// toldFailed are the answers that tell a shopper the purchase failed
// (retry_later, "in progress" or "pending", does not).
var toldFailed = map[string]bool{"unavailable": true, "error": true, "declined": true, "sold_out": true, "too_late": true}

var oracles = []oracle{
	{"oversold", "books.stock (initial or available before the load) and the units sold (books.stock.sold or books.orders)",
		func(f *Facts) bool { return f.Start() != nil && f.SoldUnits() != nil },
		func(f *Facts, _ []Shopper, _ func(string)) int64 { return max(0, *f.SoldUnits()-*f.Start()) }},
	{"lost_units", "books.stock (available, and initial or available before the load) and the units sold",
		func(f *Facts) bool { return f.Start() != nil && f.Available != nil && f.SoldUnits() != nil },
		func(f *Facts, _ []Shopper, _ func(string)) int64 {
			// A unit that is neither available, held nor sold is lost. (A
			// system that oversells drives available below zero; that is
			// counted as oversold, not lost.)
			return max(0, *f.Start()-max(0, *f.Available)-*f.SoldUnits()-f.held())
		}},
	{"units_created", "books.stock (available, and initial or available before the load) and the units sold",
		func(f *Facts) bool { return f.Start() != nil && f.Available != nil && f.SoldUnits() != nil },
		func(f *Facts, _ []Shopper, _ func(string)) int64 {
			// More units available and held than the stock left after
			// what was sold: stock made from nothing, such as a shop's
			// stock copied to a second pod while the first still sold it,
			// or a lost update that wrote back a count read before a sale.
			// Units sold beyond the stock are oversold, and counted there
			// only: an oversell from the stock there was (available below
			// zero) leaves this at zero, and so does a lost update whose
			// phantom units were all sold.
			return max(0, *f.Available+f.held()-max(0, *f.Start()-*f.SoldUnits()))
		}},
	{"stranded_units", "books.stock.reserved, read after books.settled or settle_after",
		func(f *Facts) bool { return f.Reserved != nil && f.Final && !f.StockUnread },
		func(f *Facts, _ []Shopper, _ func(string)) int64 {
			// A unit held when the books are final is neither sold nor
			// for sale: a hold the shop never released (a declined
			// charge's unit not given back, a lease never swept). It is
			// not lost (lost_units counts it as held), but no shopper
			// can buy it. A hold left on a unit that was sold is not
			// one: the unit is counted twice, sold and held, and that
			// is units_created, counted there only.
			held := max(0, *f.Reserved)
			if f.Start() != nil && f.Available != nil && f.SoldUnits() != nil {
				held = min(held, max(0, *f.Start()-*f.SoldUnits()-max(0, *f.Available)))
			}
			return held
		}},
	{"sold_without_order", "books.stock.sold and books.orders",
		func(f *Facts) bool { return f.Sold != nil && !f.StockUnread && f.OrdersKnown },
		func(f *Facts, _ []Shopper, _ func(string)) int64 {
			// The shop counts more units sold than this run has orders
			// for: a reservation that took a unit and counted it sold,
			// its order never written (the shopper told 502). Its
			// available and sold still add up to the stock, so every
			// other stock invariant reads 0; only the orders show it.
			// No checkout can be named: the count is not kept per order.
			return max(0, *f.Sold-f.orderUnits())
		}},
	{"orders_beyond_sold", "books.stock.sold and books.orders",
		func(f *Facts) bool { return f.Sold != nil && !f.StockUnread && f.OrdersKnown },
		func(f *Facts, _ []Shopper, seen func(string)) int64 {
			// More order units than the shop counts sold: an order
			// written twice (a queue that delivered it again), or an
			// order for a unit the stock never gave. The checkouts named
			// are those with a row written twice over, where any is.
			n := max(0, f.orderUnits()-*f.Sold)
			if n > 0 {
				for _, id := range f.repeatedOrders() {
					seen(id)
				}
			}
			return n
		}},
	{"double_charges", "books.charges",
		func(f *Facts) bool { return f.ChargesKnown },
		func(f *Facts, _ []Shopper, seen func(string)) int64 {
			var n int64
			for id, cs := range f.approvedByCheckout() {
				if len(cs) > 1 {
					n += int64(len(cs) - 1)
					seen(id)
				}
			}
			return n
		}},
	{"charges_without_order", "books.charges and books.orders",
		func(f *Facts) bool { return f.ChargesKnown && f.OrdersKnown },
		func(f *Facts, _ []Shopper, seen func(string)) int64 {
			orders := f.ordersByCheckout()
			approved := f.approvedByCheckout()
			var n int64
			for _, c := range f.Charges {
				if c.Status != "approved" {
					continue
				}
				o, ok := orders[c.CheckoutID]
				if ok && paidWith(o, c) {
					continue
				}
				// Paid for nothing, or the order was made with another
				// charge that is not approved. A charge beside the approved
				// one the order was made with is a double charge, counted
				// there only: one bug, one count.
				if ok && slices.ContainsFunc(approved[c.CheckoutID], func(a Charge) bool { return paidWith(o, a) }) {
					continue
				}
				n++
				seen(c.CheckoutID)
			}
			return n
		}},
	{"orders_without_charge", "books.orders and books.charges",
		func(f *Facts) bool { return f.ChargesKnown && f.OrdersKnown },
		func(f *Facts, _ []Shopper, seen func(string)) int64 {
			approved := f.approvedByCheckout()
			var n int64
			for _, o := range f.Orders {
				ok := false
				for _, c := range approved[o.CheckoutID] {
					ok = ok || paidWith(o, c)
				}
				if !ok {
					n++
					seen(o.CheckoutID)
				}
			}
			return n
		}},
	{"charged_after_leaving", "books.charges",
		func(f *Facts) bool { return f.ChargesKnown },
		func(f *Facts, s []Shopper, seen func(string)) int64 {
			approved := f.approvedByCheckout()
			var orders map[string]Order
			if f.OrdersKnown {
				orders = f.ordersByCheckout()
			}
			var n int64
			for _, v := range s {
				if v.Outcome == Confirmed || v.Cut {
					continue
				}
				for _, c := range approved[v.ID] {
					// Charged, and the shopper left without a confirmation.
					late := !c.At.IsZero() && c.At.After(v.LeftAt)
					left := v.Outcome == GaveUp || v.Outcome == TooLate
					// Except a shopper whose last answer said its purchase
					// was pending or in progress, charged before it left,
					// who holds the order made with that charge: it left
					// knowing it might have bought, and has what it paid
					// for (a store that crashed between writing the order
					// and answering; a purchase processed in the background
					// whose last poll came before the charge or just after).
					// Whether its last poll fell before or after the charge
					// does not matter: the shopper knew the same either
					// way. Only when the books say so: the charge's time,
					// its id and the order's charge known (a fact missing
					// is never a pass). A charge after it left still counts.
					if o, ok := orders[v.ID]; ok && !c.At.IsZero() && !late && !v.ToldPending.IsZero() && o.Charge != "" && o.Charge == c.ID {
						continue
					}
					// Except a shopper a stall may have kept from taking
					// its answer (ReadLate: judging marks it), charged
					// before its deadline: the system charged it in time,
					// and its confirmation may have been on its way.
					// Judging says what this left uncounted. A charge
					// after the deadline still counts.
					if v.ReadLate && !c.At.IsZero() && !late {
						continue
					}
					if late || left {
						n++
						seen(v.ID)
					}
				}
			}
			return n
		}},
	{"wrong_amounts", "books.orders and books.charges, each with an amount in the same unit (or books.price in place of the orders' amounts)",
		func(f *Facts) bool { return f.pricedOrders() && f.ChargesKnown && f.ChargeAmounts },
		func(f *Facts, _ []Shopper, seen func(string)) int64 {
			var n int64
			for _, p := range f.paidOrders() {
				// An approved charge that took other than what the order
				// it paid costs: a price, a quantity or a unit gone wrong
				// between the shop and its provider. An amount missing
				// on either side is never a pass.
				if p.wrong(f.OrderAmounts) {
					n++
					seen(p.charge.CheckoutID)
				}
			}
			return n
		}},
	{"accepted_not_finished", "books.orders and books.settled",
		func(f *Facts) bool { return f.OrdersKnown && f.SaysSettled && f.Final },
		func(f *Facts, s []Shopper, seen func(string)) int64 {
			// A purchase the system accepted (its last answer to the
			// shopper: pending, queued) that left nothing in the books —
			// no order, no charge of any status — when the system still
			// said work was open at settle_within: accepted and never
			// finished (a queue down, a worker that dropped it). Books
			// that settled, late or not, finished every purchase their
			// way (one found sold out leaves no order), and count none;
			// so does a shopper whose last answer was final.
			if !f.StillOpen {
				return 0
			}
			orders := f.ordersByCheckout()
			charged := map[string]bool{}
			for _, c := range f.Charges {
				charged[c.CheckoutID] = true
			}
			var n int64
			for _, v := range s {
				if _, ok := orders[v.ID]; ok || charged[v.ID] || v.Outcome == Confirmed || v.ToldPending.IsZero() {
					continue
				}
				n++
				seen(v.ID)
			}
			return n
		}},
	{"orders_told_failed", "books.orders",
		func(f *Facts) bool { return f.OrdersKnown },
		func(f *Facts, s []Shopper, seen func(string)) int64 {
			orders := f.ordersByCheckout()
			var n int64
			for _, v := range s {
				// An order exists for a shopper the system last told the
				// purchase failed: a real shopper would buy again.
				// A refusal after a pending answer did not say the
				// accepted purchase failed (a poll that found the store
				// down): the shopper knew it might have bought.
				refusedWhilePending := v.Told == string(Unavailable) && !v.ToldPending.IsZero()
				if _, ok := orders[v.ID]; ok && v.Outcome != Confirmed && toldFailed[v.Told] && !refusedWhilePending {
					n++
					seen(v.ID)
				}
			}
			return n
		}},
	{"confirmed_without_order", "books.orders",
		func(f *Facts) bool { return f.OrdersKnown },
		func(f *Facts, s []Shopper, seen func(string)) int64 {
			orders := f.ordersByCheckout()
			var n int64
			for _, v := range s {
				if _, ok := orders[v.ID]; !ok && v.Outcome == Confirmed {
					n++
					seen(v.ID)
				}
			}
			return n
		}},
}

// Start is the units the sale started with.
func (f *Facts) Start() *int64 {
	if f.StockUnread {
		return nil
	}
	if f.Initial != nil {
		return f.Initial
	}
	return f.AvailableBefore
}

// held is the units held (books.stock.reserved), 0 when not given. A count
// below zero (a hold released twice) holds nothing: it must never cancel
// the unit the second release put back on sale (units_created), nor make
// units lost. readFacts refuses such a count as unreadable.
func (f *Facts) held() int64 {
	if f.Reserved == nil {
		return 0
	}
	return max(0, *f.Reserved)
}

// orderUnits is the units of this run's orders.
func (f *Facts) orderUnits() int64 {
	var n int64
	for _, o := range f.Orders {
		n += o.Units
	}
	return n
}

// repeatedOrders are the checkouts with an order row written more than
// once over (the same charge, units and amount), in the plan's order.
func (f *Facts) repeatedOrders() []string {
	seen := map[string]bool{}
	var ids []string
	for _, o := range f.Orders {
		k := orderKey(o)
		if seen[k] && !slices.Contains(ids, o.CheckoutID) {
			ids = append(ids, o.CheckoutID)
		}
		seen[k] = true
	}
	return SortIDs(ids)
}

// SoldUnits is the units sold: the system's own count, else this run's
// orders. Where both are read, sold_without_order and orders_beyond_sold
// hold one to the other; SoldBasis says which the stock invariants rest
// on.
func (f *Facts) SoldUnits() *int64 {
	if f.StockUnread {
		return nil
	}
	if f.Sold != nil {
		return f.Sold
	}
	if !f.OrdersKnown {
		return nil
	}
	n := f.orderUnits()
	return &n
}

// SoldBasis says what the stock invariants take as the units sold, for
// the run's notes, where only one of the shop's count and its orders is
// read (where both are, each is held to the other); "" where both are, or
// neither.
func (f *Facts) SoldBasis() string {
	switch {
	case f.StockUnread || f.Start() == nil:
		return ""
	case f.Sold != nil && !f.OrdersKnown:
		return "the stock invariants rest on the shop's own count of units sold (books.stock.sold): no order is read to hold it to (books.orders), so a unit counted sold without its order is not seen"
	case f.Sold == nil && f.OrdersKnown:
		return "the stock invariants take this run's orders (books.orders) as the units sold: the shop's own count (books.stock.sold) is not read, so a unit its stock gave and no order holds counts as lost"
	}
	return ""
}

func (f *Facts) approvedByCheckout() map[string][]Charge {
	m := map[string][]Charge{}
	for _, c := range f.Charges {
		if c.Status == "approved" {
			m[c.CheckoutID] = append(m[c.CheckoutID], c)
		}
	}
	return m
}

// paidWith reports whether order o was made with charge c, as far as the
// books say: either side not naming the charge is taken as yes.
func paidWith(o Order, c Charge) bool {
	return o.Charge == "" || c.ID == "" || o.Charge == c.ID
}

// paid is an approved charge and the order it paid: the sum of the
// checkout's order rows made with it (an order kept as line items), or of
// all its rows where they name no charge.
type paid struct {
	order  Order
	rows   int      // the order rows summed
	units  int64    // their units
	cost   *big.Rat // the price times the units; nil without a price
	charge Charge
}

// wrong reports whether p's charge took other than its order costs: the
// price times its units where the books give a price, and the order's own
// amount where they give amounts (both, where both are given). An amount
// missing where one is due is never a pass.
func (p paid) wrong(orderAmounts bool) bool {
	c := p.charge.Amount
	switch {
	case c == nil:
		return true
	case p.cost != nil && p.cost.Cmp(c) != 0:
		return true
	case orderAmounts && (p.order.Amount == nil || p.order.Amount.Cmp(c) != 0):
		return true
	}
	return false
}

// against is what a wrong charge is told against: the price's cost where
// the charge differs from it (byPrice), else the order's own amount.
func (p paid) against() (ref *big.Rat, byPrice bool) {
	if p.cost != nil && (p.charge.Amount == nil || p.cost.Cmp(p.charge.Amount) != 0) {
		return p.cost, true
	}
	return p.order.Amount, false
}

// paidOrders pairs each approved charge with the order it paid, as far as
// the books say; a charge that paid no order is left out (it is a charge
// without order). A checkout's rows that name this charge are its order;
// where none names a charge, or the charge has no id, all of them are.
func (f *Facts) paidOrders() []paid {
	rows := map[string][]Order{}
	for _, o := range f.Orders {
		rows[o.CheckoutID] = append(rows[o.CheckoutID], o)
	}
	var out []paid
	for _, c := range f.Charges {
		os := rows[c.CheckoutID]
		if c.Status != "approved" || len(os) == 0 {
			continue
		}
		var mine []Order
		if c.ID != "" {
			for _, o := range os {
				if o.Charge == c.ID {
					mine = append(mine, o)
				}
			}
		}
		if len(mine) == 0 && (c.ID == "" || !slices.ContainsFunc(os, func(o Order) bool { return o.Charge != "" })) {
			mine = os
		}
		if len(mine) == 0 {
			continue // its order names other charges
		}
		p := paid{order: mine[0], rows: len(mine), charge: c}
		sum := new(big.Rat)
		for _, o := range mine {
			p.units += o.Units
			if o.Amount == nil {
				sum = nil
				continue
			}
			if sum != nil {
				sum.Add(sum, o.Amount)
			}
		}
		p.order.Amount = sum
		if f.Price != nil {
			// What the order costs at the sale's price: an order that
			// copies what was charged cannot vouch for it.
			p.cost = new(big.Rat).Mul(f.Price, big.NewRat(p.units, 1))
		}
		out = append(out, p)
	}
	return out
}

// AmountsNote says what the wrong amounts were, for the run's notes: the
// first charge (in the plan's order) that took other than its order
// costs, with both amounts. Where every approved charge took the same
// multiple of its order's amount, 100 or 1,000 times or a 100th or a
// 1,000th, that is more likely two units (cents and whole units) than a
// bug, and the note says so. "" when no amount is wrong.
func AmountsNote(f *Facts) string {
	if !f.pricedOrders() || !f.ChargeAmounts {
		return ""
	}
	ps := f.paidOrders()
	var wrong []paid
	var ratio *big.Rat
	same, byPrice := true, true
	for _, p := range ps {
		if !p.wrong(f.OrderAmounts) {
			same = false
			continue
		}
		wrong = append(wrong, p)
		o, price := p.against()
		c := p.charge.Amount
		byPrice = byPrice && price
		if o == nil || c == nil || o.Sign() == 0 {
			same = false
			continue
		}
		r := new(big.Rat).Quo(c, o)
		same = same && (ratio == nil || ratio.Cmp(r) == 0)
		ratio = r
	}
	if len(wrong) == 0 {
		return ""
	}
	if same && len(wrong) == len(ps) {
		for _, k := range []int64{100, 1000} {
			switch {
			case byPrice && ratio.Cmp(big.NewRat(k, 1)) == 0:
				return fmt.Sprintf("every approved charge took %d times its order's units at books.price: if books.charges gives amounts in a smaller unit than the price (cents against whole units), give the price in the charges' unit (%s)", k, decimal(new(big.Rat).Mul(f.Price, big.NewRat(k, 1))))
			case byPrice && ratio.Cmp(big.NewRat(1, k)) == 0:
				return fmt.Sprintf("every approved charge took a %dth of its order's units at books.price: if the price is in a smaller unit than books.charges' amounts, give it in the charges' unit", k)
			case ratio.Cmp(big.NewRat(k, 1)) == 0:
				return fmt.Sprintf("every approved charge took %d times what its order costs: if books.charges gives amounts in a smaller unit than books.orders (cents against whole units), give both in the same unit (in books.orders' SQL: amount * %d AS amount)", k, k)
			case ratio.Cmp(big.NewRat(1, k)) == 0:
				return fmt.Sprintf("every approved charge took a %dth of what its order costs: if books.orders gives amounts in a smaller unit than books.charges (cents against whole units), give both in the same unit", k)
			}
		}
	}
	ids := make([]string, len(wrong))
	for i, p := range wrong {
		ids[i] = p.charge.CheckoutID
	}
	firstID := SortIDs(ids)[0]
	first := wrong[slices.IndexFunc(wrong, func(p paid) bool { return p.charge.CheckoutID == firstID })]
	charge := "the charge"
	if first.charge.ID != "" {
		charge += " " + first.charge.ID
	}
	order := "an order of " + decimal(first.order.Amount)
	_, firstByPrice := first.against()
	switch {
	case firstByPrice:
		order = fmt.Sprintf("an order of %d at %s (books.price)", first.units, decimal(f.Price))
	case first.rows > 1:
		order = fmt.Sprintf("an order of %s in %d rows", decimal(first.order.Amount), first.rows)
	}
	return fmt.Sprintf("wrong amounts: %s of %s took %s for %s (the first of %d)", charge, first.charge.CheckoutID, decimal(first.charge.Amount), order, len(wrong))
}

// decimal writes an amount as the books gave it: 1998, 19.99.
func decimal(r *big.Rat) string {
	if r == nil {
		return "nothing given"
	}
	for d := 0; d < 12; d++ {
		s := r.FloatString(d)
		if x, ok := new(big.Rat).SetString(s); ok && x.Cmp(r) == 0 {
			return s
		}
	}
	return r.FloatString(12)
}

func (f *Facts) ordersByCheckout() map[string]Order {
	m := make(map[string]Order, len(f.Orders))
	for _, o := range f.Orders {
		m[o.CheckoutID] = o
	}
	return m
}

// Judgeable names the invariants facts like f can judge, in the order a
// report lists them, and those they cannot, each with the facts it needs.
// Only which facts are known matters, not their values.
func Judgeable(f *Facts) (checked []string, notChecked map[string]string) {
	notChecked = map[string]string{}
	for _, o := range oracles {
		if o.ok(f) {
			checked = append(checked, o.name)
		} else {
			notChecked[o.name] = o.needs
		}
	}
	return checked, notChecked
}

// Reconcile counts every way the books disagree, and names the invariants
// whose facts the system could not give.
func Reconcile(f *Facts, shoppers []Shopper, dropped int) (Invariants, map[string]string) {
	r := ReconcileAll(f, shoppers, dropped)
	return r.Invariants, r.NotChecked
}

// MaxExamples is how many checkout ids a broken invariant names.
const MaxExamples = 5

// Reconciliation is what the books say against the shoppers.
type Reconciliation struct {
	Invariants Invariants
	// NotChecked are the invariants whose facts the system could not
	// give, each with the facts it needs.
	NotChecked map[string]string
	// Examples are, for each invariant broken by particular checkouts,
	// how many and the ids of the first MaxExamples of them, sorted:
	// where to start looking in the system's own logs and books.
	Examples map[string]Cases
}

// Cases are the checkouts that broke one invariant: how many, and the
// first MaxExamples of their ids in the plan's order. A count of cases
// and of checkouts can differ: seven double charges may be of four
// checkouts.
type Cases struct {
	Checkouts int
	IDs       []string
	// Leads are, where no checkout can be named (a stock invariant),
	// the shoppers to start with (Leads), and how many (Leading).
	Leading int
	Leads   []string
}

// Add is c with d, the cases of other checkouts (another shop's).
func (c Cases) Add(d Cases) Cases {
	all := SortIDs(slices.Concat(c.IDs, d.IDs))
	leads := slices.Concat(c.Leads, d.Leads)
	slices.SortStableFunc(leads, func(a, b string) int { return compareIDs(leadID(a), leadID(b)) })
	return Cases{Checkouts: c.Checkouts + d.Checkouts, IDs: all[:min(len(all), MaxExamples)],
		Leading: c.Leading + d.Leading, Leads: leads[:min(len(leads), MaxExamples)]}
}

// ReconcileAll is Reconcile with the checkout ids of each broken
// invariant's first cases.
func ReconcileAll(f *Facts, shoppers []Shopper, dropped int) Reconciliation {
	iv := Invariants{Dropped: int64(dropped)}
	notChecked := map[string]string{}
	examples := map[string]Cases{}
	counts := map[string]*int64{
		"oversold": &iv.Oversold, "lost_units": &iv.LostUnits, "double_charges": &iv.DoubleCharges,
		"charges_without_order": &iv.ChargesWithoutOrder, "orders_without_charge": &iv.OrdersWithoutCharge,
		"charged_after_leaving": &iv.ChargedAfterLeaving, "orders_told_failed": &iv.OrdersToldFailed,
		"confirmed_without_order": &iv.ConfirmedWithoutOrder, "units_created": &iv.UnitsCreated,
		"wrong_amounts": &iv.WrongAmounts, "stranded_units": &iv.StrandedUnits, "sold_without_order": &iv.SoldWithoutOrder,
		"orders_beyond_sold": &iv.OrdersBeyondSold, "accepted_not_finished": &iv.AcceptedNotFinished,
	}
	// The shoppers who went to the checkout: one dropped by the load
	// generator, or never started, asked nothing of it.
	var went []Shopper
	for _, s := range shoppers {
		if s.Outcome != "" && s.Outcome != Dropped {
			went = append(went, s)
		}
	}
	for _, o := range oracles {
		if !o.ok(f) {
			notChecked[o.name] = o.needs
			continue
		}
		ids := map[string]bool{}
		n := o.count(f, went, func(id string) { ids[id] = true })
		*counts[o.name] = n
		if len(ids) > 0 {
			// The first ids in the plan's order, not the first seen: the
			// same books name the same checkouts whatever order maps are
			// walked in.
			all := SortIDs(slices.Collect(maps.Keys(ids)))
			examples[o.name] = Cases{Checkouts: len(all), IDs: all[:min(len(all), MaxExamples)]}
		} else if n > 0 && slices.Contains(stockInvariants, o.name) {
			leads, leading := Leads(went)
			examples[o.name] = Cases{Leading: leading, Leads: leads}
		}
	}
	return Reconciliation{Invariants: iv, NotChecked: notChecked, Examples: examples}
}

// SortIDs sorts checkout ids as the plan numbers them: by the run's prefix,
// then by the number after the last '-' (s1-9 before s1-10), and returns
// ids.
func SortIDs(ids []string) []string {
	slices.SortFunc(ids, compareIDs)
	return ids
}

// compareIDs orders two checkout ids as SortIDs does.
func compareIDs(a, b string) int {
	split := func(id string) (string, int, bool) {
		i := strings.LastIndexByte(id, '-')
		n, err := strconv.Atoi(id[i+1:])
		return id[:i+1], n, i >= 0 && err == nil
	}
	pa, na, oka := split(a)
	pb, nb, okb := split(b)
	switch {
	case pa != pb:
		return strings.Compare(pa, pb)
	case oka && okb:
		return cmp.Compare(na, nb)
	case oka != okb: // numbered ones first
		if oka {
			return -1
		}
		return 1
	}
	return strings.Compare(a, b)
}

// Summarise is the books in short, for the run record.
func Summarise(f *Facts) (LedgerSummary, ChargeSummary) {
	var ls LedgerSummary
	get := func(p *int64) int64 {
		if p == nil {
			return 0
		}
		return *p
	}
	ls.Initial, ls.Available, ls.Reserved = get(f.Start()), get(f.Available), get(f.Reserved)
	ls.Sold, ls.Orders = get(f.SoldUnits()), len(f.Orders)
	var cs ChargeSummary
	for _, c := range f.Charges {
		switch c.Status {
		case "approved":
			cs.Approved++
		case "declined":
			cs.Declined++
		case "voided":
			cs.Voided++
		}
	}
	return ls, cs
}

// EmptyBooksNotes says which of f's tables gave no row of this run though
// shoppers were told their purchase was confirmed: a query that finds
// nothing of the run (a key, table or filter that is not the shop's) reads
// as a shop that lost every sale, and the invariants that read that table
// count every one. where names the description ("books.orders in FILE").
func EmptyBooksNotes(f *Facts, s []Shopper, where func(table string) string) []string {
	confirmed := 0
	for _, v := range s {
		if v.Outcome == Confirmed {
			confirmed++
		}
	}
	if confirmed == 0 {
		return nil
	}
	var notes []string
	for _, t := range []struct {
		name  string
		known bool
		rows  int
	}{{"orders", f.OrdersKnown, len(f.Orders)}, {"charges", f.ChargesKnown, len(f.Charges)}} {
		if t.known && t.rows == 0 {
			notes = append(notes, fmt.Sprintf("%s gave no row of this run, though %s told confirmed: if the shop recorded them, the query does not find them (a key, table or filter that is not the shop's, or the run's checkout ids not where it looks), and every invariant that reads %s counts every sale", where(t.name), shopperCount(confirmed), t.name))
		}
	}
	return notes
}

// shopperCount is "1 shopper was" or "N shoppers were".
func shopperCount(n int) string {
	if n == 1 {
		return "1 shopper was"
	}
	return fmt.Sprintf("%d shoppers were", n)
}

// pricedOrders reports whether the books say what each order costs: its
// own amount, or the sale's price times its units.
func (f *Facts) pricedOrders() bool { return f.OrdersKnown && (f.OrderAmounts || f.Price != nil) }

// Leads are where to start looking when the stock is wrong and no
// checkout can be named (a unit lost leaves no order to point at): the
// shoppers whose purchase was retried (more than one attempt), errored
// (an attempt with no answer, or an error) or was left without a final
// answer, while the stock fell — before the first answer that the sale
// was sold out, or all the sale long when none came. A retried or
// redelivered purchase is where a unit is taken twice or never given
// back. Each is named with its answers in order ("s1-4: unavailable,
// confirmed"); the first MaxExamples in the plan's order, and how many.
func Leads(shoppers []Shopper) (leads []string, n int) {
	soldOut := time.Duration(-1)
	for _, s := range shoppers {
		for _, a := range s.Attempts {
			if a.Status == string(SoldOut) && (soldOut < 0 || a.At < soldOut) {
				soldOut = a.At
			}
		}
	}
	var ids []string
	answers := map[string]string{}
	for _, s := range shoppers {
		if len(s.Attempts) == 0 || soldOut >= 0 && s.Attempts[0].At >= soldOut {
			continue
		}
		troubled := len(s.Attempts) > 1 || s.Outcome == Error || s.Outcome == GaveUp || s.Outcome == Unavailable
		var said []string
		for _, a := range s.Attempts {
			troubled = troubled || a.Status == string(Error)
			said = append(said, cmp.Or(a.Status, "no answer"))
		}
		if !troubled {
			continue
		}
		if s.Outcome == GaveUp && s.Attempts[len(s.Attempts)-1].Status == "" {
			said[len(said)-1] = "no answer (gave up)"
		}
		ids = append(ids, s.ID)
		answers[s.ID] = s.ID + ": " + strings.Join(said, ", ")
	}
	ids = SortIDs(ids)
	for _, id := range ids[:min(len(ids), MaxExamples)] {
		leads = append(leads, answers[id])
	}
	return leads, len(ids)
}

// leadID is the checkout id a lead names.
func leadID(lead string) string {
	id, _, _ := strings.Cut(lead, ": ")
	return id
}
