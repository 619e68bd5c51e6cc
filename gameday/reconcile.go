package gameday

import (
	"strconv"
	"strings"
	"time"
)

// facts are what a system's books said after the drill: the inputs of the
// oracles. A nil pointer or a false known flag is a fact the system could
// not give; the oracles that need it are not checked.
type facts struct {
	initial, availableBefore, available, reserved, sold *int64
	orders                                              []order
	ordersKnown, orderCharges                           bool // orders read; they name their charge
	charges                                             []charge
	chargesKnown                                        bool
	notes                                               []string // what the run should know of how they were read
}

// order is one order of this run.
type order struct {
	checkoutID string
	charge     string // the charge it was paid with; "" when unknown
	units      int64
}

// charge is one charge of this run at the provider.
type charge struct {
	checkoutID string
	id         string
	status     string // approved, declined, voided, or "" for another word
	at         time.Time
}

// shopperView is what reconciliation needs of one shopper.
type shopperView struct {
	checkoutID string
	outcome    string
	leftAt     time.Time // when the shopper gave up waiting (its deadline)
	// cut: the runner stopped the load while this shopper was in flight;
	// it did not leave of its own accord, so a charge it did not see
	// confirmed is the interruption's, not the system's.
	cut bool
	// told is what the answer to the shopper's last attempt meant
	// ("unavailable", "retry_later", ...); "" when it left before one came.
	told string
	// toldPending is when the last answer that said the purchase was going
	// on or paid and not yet confirmed (retry_later: in progress, pending)
	// came; zero when none did. A shopper told so after it was charged
	// left knowing it might have bought.
	toldPending time.Time
}

// oracle is one invariant: the facts it needs and how it counts.
type oracle struct {
	name  string
	needs string // the facts, as the report says them
	ok    func(f *facts) bool
	count func(f *facts, s []shopperView) int64
}

// toldFailed are the answers that tell a shopper the purchase failed
// (retry_later, "in progress" or "pending", does not).
var toldFailed = map[string]bool{"unavailable": true, "error": true, "declined": true, "sold_out": true, "too_late": true}

var oracles = []oracle{
	{"oversold", "books.stock (initial or available before the load) and the units sold (books.stock.sold or books.orders)",
		func(f *facts) bool { return f.start() != nil && f.soldUnits() != nil },
		func(f *facts, _ []shopperView) int64 { return max(0, *f.soldUnits()-*f.start()) }},
	{"lost_units", "books.stock (available, and initial or available before the load) and the units sold",
		func(f *facts) bool { return f.start() != nil && f.available != nil && f.soldUnits() != nil },
		func(f *facts, _ []shopperView) int64 {
			// A unit that is neither available, held nor sold is lost. (A
			// system that oversells drives available below zero; that is
			// counted as oversold, not lost.)
			var held int64
			if f.reserved != nil {
				held = *f.reserved
			}
			return max(0, *f.start()-max(0, *f.available)-*f.soldUnits()-held)
		}},
	{"double_charges", "books.charges",
		func(f *facts) bool { return f.chargesKnown },
		func(f *facts, _ []shopperView) int64 {
			var n int64
			for _, cs := range f.approvedByCheckout() {
				n += int64(max(0, len(cs)-1))
			}
			return n
		}},
	{"charges_without_order", "books.charges and books.orders",
		func(f *facts) bool { return f.chargesKnown && f.ordersKnown },
		func(f *facts, _ []shopperView) int64 {
			orders := f.ordersByCheckout()
			var n int64
			for _, c := range f.charges {
				if c.status != "approved" {
					continue
				}
				o, ok := orders[c.checkoutID]
				// Paid for nothing, or paid again beside the charge the
				// order was made with.
				if !ok || !paidWith(o, c) {
					n++
				}
			}
			return n
		}},
	{"orders_without_charge", "books.orders and books.charges",
		func(f *facts) bool { return f.chargesKnown && f.ordersKnown },
		func(f *facts, _ []shopperView) int64 {
			approved := f.approvedByCheckout()
			var n int64
			for _, o := range f.orders {
				ok := false
				for _, c := range approved[o.checkoutID] {
					ok = ok || paidWith(o, c)
				}
				if !ok {
					n++
				}
			}
			return n
		}},
	{"charged_after_leaving", "books.charges",
		func(f *facts) bool { return f.chargesKnown },
		func(f *facts, s []shopperView) int64 {
			approved := f.approvedByCheckout()
			var orders map[string]order
			if f.ordersKnown {
				orders = f.ordersByCheckout()
			}
			var n int64
			for _, v := range s {
				if v.outcome == "confirmed" || v.cut {
					continue
				}
				for _, c := range approved[v.checkoutID] {
					// Charged, and the shopper left without a confirmation.
					late := !c.at.IsZero() && c.at.After(v.leftAt)
					left := v.outcome == "gave_up" || v.outcome == "too_late"
					// Except a shopper told, after this charge, that its
					// purchase was pending, who holds the order made with
					// it: it was charged while there, told the truth (paid,
					// not yet confirmed) and has what it paid for; the
					// system could do no better when its store crashed
					// between writing the order and answering. Only when
					// the books say so: the charge's time, its id and the
					// order's charge known (a fact missing is never a
					// pass).
					if o, ok := orders[v.checkoutID]; ok && !late && toldAfter(v, c) && o.charge != "" && o.charge == c.id {
						continue
					}
					if late || left {
						n++
					}
				}
			}
			return n
		}},
	{"orders_told_failed", "books.orders",
		func(f *facts) bool { return f.ordersKnown },
		func(f *facts, s []shopperView) int64 {
			orders := f.ordersByCheckout()
			var n int64
			for _, v := range s {
				// An order exists for a shopper the system last told the
				// purchase failed: a real shopper would buy again.
				if _, ok := orders[v.checkoutID]; ok && v.outcome != "confirmed" && toldFailed[v.told] {
					n++
				}
			}
			return n
		}},
	{"confirmed_without_order", "books.orders",
		func(f *facts) bool { return f.ordersKnown },
		func(f *facts, s []shopperView) int64 {
			orders := f.ordersByCheckout()
			var n int64
			for _, v := range s {
				if _, ok := orders[v.checkoutID]; !ok && v.outcome == "confirmed" {
					n++
				}
			}
			return n
		}},
}

// start is the units the sale started with.
func (f *facts) start() *int64 {
	if f.initial != nil {
		return f.initial
	}
	return f.availableBefore
}

// soldUnits is the units sold: the system's own count, else this run's
// orders.
func (f *facts) soldUnits() *int64 {
	if f.sold != nil {
		return f.sold
	}
	if !f.ordersKnown {
		return nil
	}
	var n int64
	for _, o := range f.orders {
		n += o.units
	}
	return &n
}

func (f *facts) approvedByCheckout() map[string][]charge {
	m := map[string][]charge{}
	for _, c := range f.charges {
		if c.status == "approved" {
			m[c.checkoutID] = append(m[c.checkoutID], c)
		}
	}
	return m
}

// toldAfter reports whether the shopper of v was told its purchase was
// pending at or after charge c was made, both times known.
func toldAfter(v shopperView, c charge) bool {
	return !v.toldPending.IsZero() && !c.at.IsZero() && !c.at.After(v.toldPending)
}

// paidWith reports whether order o was made with charge c, as far as the
// books say: either side not naming the charge is taken as yes.
func paidWith(o order, c charge) bool {
	return o.charge == "" || c.id == "" || o.charge == c.id
}

func (f *facts) ordersByCheckout() map[string]order {
	m := make(map[string]order, len(f.orders))
	for _, o := range f.orders {
		m[o.checkoutID] = o
	}
	return m
}

// reconcile counts every way the books disagree, and names the invariants
// whose facts the system could not give.
func reconcile(f *facts, shoppers []shopperView, dropped int) (Invariants, map[string]string) {
	iv := Invariants{Dropped: int64(dropped)}
	notChecked := map[string]string{}
	counts := map[string]*int64{
		"oversold": &iv.Oversold, "lost_units": &iv.LostUnits, "double_charges": &iv.DoubleCharges,
		"charges_without_order": &iv.ChargesWithoutOrder, "orders_without_charge": &iv.OrdersWithoutCharge,
		"charged_after_leaving": &iv.ChargedAfterLeaving, "orders_told_failed": &iv.OrdersToldFailed,
		"confirmed_without_order": &iv.ConfirmedWithoutOrder,
	}
	for _, o := range oracles {
		if !o.ok(f) {
			notChecked[o.name] = o.needs
			continue
		}
		*counts[o.name] = o.count(f, shoppers)
	}
	return iv, notChecked
}

// ofRun keeps the rows whose checkout id belongs to this run: it starts
// with the run's prefix and a '-'. A system that outlives one drill holds
// the books of earlier runs too, which are not this run's to reconcile.
func ofRun(id, prefix string) bool { return strings.HasPrefix(id, prefix+"-") }

// parseTime reads created_at: RFC 3339, an SQL timestamp ("2006-01-02
// 15:04:05", fractions and a zone optional; none is UTC), or Unix seconds
// or milliseconds.
func parseTime(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, false
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999Z07", "2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && f > 0 {
		if f > 1e11 { // milliseconds
			return time.UnixMilli(int64(f)), true
		}
		return time.Unix(0, int64(f*1e9)), true
	}
	return time.Time{}, false
}

func summarise(f *facts) (LedgerSummary, ChargeSummary) {
	var ls LedgerSummary
	get := func(p *int64) int64 {
		if p == nil {
			return 0
		}
		return *p
	}
	ls.Initial, ls.Available, ls.Reserved = get(f.start()), get(f.available), get(f.reserved)
	ls.Sold, ls.Orders = get(f.soldUnits()), len(f.orders)
	var cs ChargeSummary
	for _, c := range f.charges {
		switch c.status {
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
