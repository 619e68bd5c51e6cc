package gameday

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gameday-dev/gameday/gameday/books"
	"github.com/gameday-dev/gameday/gameday/env"
	"github.com/gameday-dev/gameday/gameday/judge"
	"github.com/gameday-dev/gameday/gameday/runrecord"
	"github.com/gameday-dev/gameday/gameday/system"
	"github.com/gameday-dev/gameday/scenarios"
)

// ledger is where one shop's books are read, or, in a sale without shops,
// the whole sale's: the system as those books see it (in an environment of
// pods, the shop's pod's own checkout) and a reader of its stores.
type ledger struct {
	shop string // "" without shops
	pod  string // "" without pods
	// away: the shop does not start on this pod, but a move takes it
	// there; the SKU starts here with no stock.
	away  bool
	stock int64
	sys   *system.System
	books *books.Reader
	// before is the stock available before the load; nil when unknown.
	before *int64
}

// name says whose books these are, for errors.
func (lg *ledger) name() string {
	if lg.shop == "" {
		return lg.sys.Name
	}
	if lg.pod == "" {
		return "shop " + lg.shop + " of " + lg.sys.Name
	}
	if lg.away {
		return "shop " + lg.shop + " (moved) on " + lg.pod
	}
	return "shop " + lg.shop + " on " + lg.pod
}

// routes is the router's table of a scenario's pods: shop -> pod.
func (d *drill) routes() map[string]string {
	if d.sc.Environment.Pods == 0 {
		return nil
	}
	out := map[string]string{}
	for _, sh := range d.sc.Shops {
		out[sh.Name] = sh.Pod
	}
	misroute(out)
	return out
}

// misroute changes the routing table the runner writes; tests make it
// send a shop to the wrong pod.
var misroute = func(map[string]string) {}

// shopLedgers are the drill's ledgers: the system's, or one per shop. vars
// are the reference checkout's variables (nil for a described system): in
// an environment of pods each shop's books and setup are its pod's
// checkout's, while purchases go to the router.
func (d *drill) shopLedgers(vars map[string]string) ([]*ledger, error) {
	if len(d.sc.Shops) == 0 {
		return []*ledger{{sys: d.sys, stock: d.sc.Stock}}, nil
	}
	pods := env.PodsOf(d.env)
	var out []*ledger
	for i, sh := range d.sc.Shops {
		lg := &ledger{shop: sh.Name, pod: sh.Pod, stock: d.sc.ShopStock(sh), sys: d.sys}
		if c, ok := d.sys.Pod(sh.Pod); ok && vars == nil {
			lg.sys = c // a described system of pods: the pod's own copy
		} else if url, ok := pods[sh.Pod]; ok && vars != nil {
			v := maps.Clone(vars)
			v["BASE_URL"], v["CHECKOUT_URL"] = d.env.CheckoutURL(), url
			s, err := system.Reference(v)
			if err != nil {
				return nil, err
			}
			lg.sys = s
		} else if sh.Pod != "" {
			field := fmt.Sprintf("shops[%d].pod", i)
			return nil, &scenarios.Error{File: d.sc.File, Line: d.sc.Line(field), Field: field,
				Msg: fmt.Sprintf("shop %s lives on %s, which the %s environment does not have (environment.pods starts pods of the reference checkout; a system file names its own)", sh.Name, sh.Pod, d.env.Info().Kind)}
		}
		out = append(out, lg)
		// The pods a move takes the shop to keep its books there too.
		seen := map[string]bool{sh.Pod: true}
		for _, m := range d.sc.MovesByTime() {
			if m.Shop != sh.Name || seen[m.To] {
				continue
			}
			seen[m.To] = true
			away := *lg
			away.pod, away.away, away.stock = m.To, true, 0
			v := maps.Clone(vars)
			v["BASE_URL"], v["CHECKOUT_URL"] = d.env.CheckoutURL(), pods[m.To]
			s, err := system.Reference(v)
			if err != nil {
				return nil, err
			}
			away.sys = s
			out = append(out, &away)
		}
	}
	return out, nil
}

// open reaches the ledger's stores, runs its setup (for a shop, with the
// shop's SKU and stock) and reads its books once before the load: the
// stock available then, and every other fact, so that a query that cannot
// be read (an SQL error, a wrong path, a list not where items says) stops
// the drill before the sale rather than after it.
func (lg *ledger) open(ctx context.Context, prefix string) error {
	vals := system.Values{SKU: system.ShopSKU(lg.shop, lg.sys.SKU), Shop: lg.shop, Stock: lg.stock, Run: prefix}
	r, err := books.Open(ctx, lg.sys, vals, 10*time.Second)
	if err != nil {
		return fmt.Errorf("reach the books of %s: %w", lg.name(), err)
	}
	lg.books = r
	if err := r.Setup(ctx); err != nil {
		return fmt.Errorf("set up %s: %w", lg.name(), err)
	}
	f, err := readFacts(ctx, r, lg.sys, prefix)
	if err != nil {
		return fmt.Errorf("the books of %s, read before the load: %w", lg.name(), err)
	}
	lg.before = f.Available
	return nil
}

func (d *drill) closeBooks() {
	for _, lg := range d.ledgers {
		if lg.books != nil {
			_ = lg.books.Close()
		}
	}
}

// settle waits until every ledger's books are final (bounded, all at
// once), then reads them. When they do not settle in time they are read
// as they are, judged as final (settle_within is the longest the shop is
// to take: what is still open then is the shop's, as a hold never given
// back is), and the run says so. A run asked to
// stop (interrupted) does not wait: it reads the books at once and records
// what it has, so that a service manager's stop timeout never kills it
// before run.json is written. A ledger that cannot be read, or a part of
// one, is named in the error; the facts are returned with what could be
// read, so that what they prove is judged.
func (d *drill) settle(interrupted bool) ([]*judge.Facts, error) {
	if interrupted {
		d.unsettled = true
		d.rec.Notes = append(d.rec.Notes, "interrupted: the books were read at once, without waiting for them to settle")
	}
	facts := make([]*judge.Facts, len(d.ledgers))
	notes := make([][]string, len(d.ledgers))
	errs := make([]error, len(d.ledgers))
	var wg sync.WaitGroup
	for i, lg := range d.ledgers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			facts[i], notes[i], errs[i] = lg.settle(interrupted, d.prefix)
		}()
	}
	wg.Wait()
	var failed []error
	for i, lg := range d.ledgers {
		var never *errNeverSettled
		if errors.As(errs[i], &never) {
			d.unsettled = true
		}
		for _, n := range notes[i] {
			if lg.shop != "" {
				n = lg.name() + ": " + n
			}
			d.rec.Notes = append(d.rec.Notes, n)
		}
		if errs[i] != nil {
			if lg.shop != "" {
				errs[i] = fmt.Errorf("%s: %w", lg.name(), errs[i])
			}
			failed = append(failed, errs[i])
		}
	}
	return facts, joinErrors(failed...)
}

// settle waits for lg's books to settle and reads them. The facts are
// those that could be read, with the error of those that could not.
func (lg *ledger) settle(interrupted bool, prefix string) (f *judge.Facts, notes []string, err error) {
	b := lg.sys.Books
	if !interrupted {
		// The wait has its own bound (settle_within or settle_after, and
		// one query's time); the reads after it are bounded by their
		// timeouts.
		ctx, cancel := context.WithTimeout(context.Background(), max(b.SettleWithin.D(), b.SettleAfter.D())+queryTimeout(b.Settled))
		note, serr := settleBooks(ctx, lg.books, lg.sys, 0)
		cancel()
		if note != "" {
			notes = append(notes, note)
		}
		if serr != nil {
			err = serr
		}
	}
	f, rerr := readFacts(context.Background(), lg.books, lg.sys, prefix)
	err = joinErrors(err, rerr)
	notes = append(notes, f.Notes...)
	// Books read after the system's own settle step are final: what is
	// held then is stranded (an invariant). Read the moment the load
	// ended, after an interrupt, or when books.settled never answered, a
	// hold may still be on its way.
	var never *errNeverSettled
	f.Final = !interrupted && readFinal(b) && !errors.As(err, &never)
	if f.Reserved != nil && *f.Reserved > 0 {
		notes = append(notes, strandedNote(lg.name(), *f.Reserved, f.Final))
	}
	f.AvailableBefore = lg.before
	return f, notes, err
}

// strandedNote says that units were still held when the books were read:
// not lost (held is counted), but neither sold nor for sale, which a
// shopper told sold out would mind. Read from final books they are
// stranded_units; the note says how to tell a leak from a wait too short.
func strandedNote(name string, held int64, final bool) string {
	n := fmt.Sprintf("%d units of %s were still held (books.stock.reserved) when the books were read: neither sold nor for sale", held, name)
	if final {
		return n + "; those not also counted as sold (units_created) count as stranded_units: a hold never released (a unit not given back when its charge failed, a lease never swept), or, if the shop releases them later than books.settle_within (or settle_after) waits, a wait too short for its leases"
	}
	return n + "; if holds are released later, books.settled can wait for them (settle_after is a fixed wait), and if never, that stock is stranded"
}

// reconcile checks every ledger's books against its shoppers and records
// the invariants, the books and, in a sale across shops, each shop's
// figures; it returns the invariants that could not be checked, each with
// the facts it lacked. A shop's books are its pod's, but its charges are
// at a provider all shops share: only those of its own shoppers are its.
func (d *drill) reconcile(facts []*judge.Facts, shoppers []judge.Shopper, report interface{ Outcomes() map[string]int }) (notChecked map[string]string, examples map[string]judge.Cases) {
	notChecked, examples = map[string]string{}, map[string]judge.Cases{}
	// An invariant is not checked only where no shop could check it; one
	// that some shops could not check is noted with their names.
	missing := map[string][]string{}
	shops := 0
	var total runrecord.Invariants
	for i, lg := range d.ledgers {
		if lg.away {
			continue // merged into the shop's first ledger below
		}
		f, mine, dropped := facts[i], shoppers, 0
		for j := i + 1; j < len(d.ledgers); j++ {
			if d.ledgers[j].shop == lg.shop && d.ledgers[j].away {
				if f == nil || facts[j] == nil {
					f = nil
					break
				}
				f = mergeFacts(f, facts[j])
			}
		}
		if f == nil {
			// Its books could not be read (the error says why, and makes
			// the run an error); the other shops' are still judged.
			continue
		}
		if lg.shop != "" {
			mine = nil
			for _, s := range shoppers {
				if s.Shop == lg.shop {
					mine = append(mine, s)
				}
			}
			f = onlyTheirs(f, mine)
		}
		for _, s := range mine {
			if s.Outcome == judge.Dropped {
				dropped++
			}
		}
		d.rec.Notes = append(d.rec.Notes, judge.EmptyBooksNotes(f, mine, func(table string) string {
			return fmt.Sprintf("books.%s of %s (%s)", table, lg.name(), lg.sys.File)
		})...)
		r := judge.ReconcileAll(f, mine, dropped)
		iv, nc := r.Invariants, r.NotChecked
		maps.Copy(notChecked, nc)
		for n, c := range r.Examples {
			examples[n] = examples[n].Add(c)
		}
		shops++
		for n := range nc {
			missing[n] = append(missing[n], lg.shop)
		}
		ledger, charges := judge.Summarise(f)
		if lg.shop == "" {
			d.rec.Invariants, d.rec.Ledger, d.rec.Charges = iv, ledger, charges
			return notChecked, examples
		}
		total = addInvariants(total, iv)
		d.rec.Ledger = addLedger(d.rec.Ledger, ledger)
		d.rec.Charges.Approved += charges.Approved
		d.rec.Charges.Declined += charges.Declined
		d.rec.Charges.Voided += charges.Voided
		outcomes := map[string]int{}
		for _, s := range mine {
			if s.Outcome != "" {
				outcomes[string(s.Outcome)]++
			}
		}
		d.rec.Shops = append(d.rec.Shops, runrecord.Shop{Name: lg.shop, Pod: lg.pod, Outcomes: outcomes, Invariants: iv, Ledger: ledger, Charges: charges})
	}
	// What belongs to no shop's shopper is no shop's, but it is the
	// sale's: a charge of this run that no shopper made still took money.
	if u := unattributed(facts, shoppers); u != nil {
		r := judge.ReconcileAll(u, nil, 0)
		total = addInvariants(total, r.Invariants)
		for n, c := range r.Examples {
			examples[n] = examples[n].Add(c)
		}
		ledger, charges := judge.Summarise(u)
		d.rec.Ledger.Orders += ledger.Orders
		d.rec.Charges.Approved += charges.Approved
		d.rec.Charges.Declined += charges.Declined
		d.rec.Charges.Voided += charges.Voided
		d.rec.Notes = append(d.rec.Notes, unattributedNote(u, r.Invariants))
	}
	d.rec.Invariants = total
	for n, who := range missing {
		if len(who) < shops {
			delete(notChecked, n)
			d.rec.Notes = append(d.rec.Notes, fmt.Sprintf("%s not checked for shops %s, for want of the facts: checked for the others", n, strings.Join(who, ", ")))
		}
	}
	return notChecked, examples
}

// unattributed is what the books of a sale across shops hold of this run
// that belongs to no shop's shopper: the charges and orders whose checkout
// id begins with the run's prefix (readFacts kept only those) and is none
// of the shoppers'. onlyTheirs leaves them out of every shop; here they
// are reconciled on their own, so that a charge no shopper made is counted
// once, as in a sale without shops (charges_without_order, and
// double_charges or wrong_amounts where they apply). The charges of a
// provider the shops share are read once per shop: a row read by several
// ledgers counts as often as the ledger that read it most holds it. nil
// when there is none.
func unattributed(facts []*judge.Facts, shoppers []judge.Shopper) *judge.Facts {
	ids := make(map[string]bool, len(shoppers))
	for _, s := range shoppers {
		ids[s.ID] = true
	}
	u := &judge.Facts{OrdersKnown: true, OrderCharges: true, OrderAmounts: true, ChargeAmounts: true}
	charges, orders := map[string]int{}, map[string]int{}
	var chargeKeys, orderKeys []string
	chargeOf, orderOf := map[string]judge.Charge{}, map[string]judge.Order{}
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
		mine := map[string]int{}
		for _, c := range f.Charges {
			if ids[c.CheckoutID] {
				continue
			}
			k := fmt.Sprintf("%q %q %q %d %s", c.CheckoutID, c.ID, c.Status, c.At.UnixNano(), ratText(c.Amount))
			mine[k]++
			chargeOf[k] = c
		}
		for k, n := range mine {
			if _, seen := charges[k]; !seen {
				chargeKeys = append(chargeKeys, k)
			}
			charges[k] = max(charges[k], n)
		}
		mine = map[string]int{}
		for _, o := range f.Orders {
			if ids[o.CheckoutID] {
				continue
			}
			k := fmt.Sprintf("%q %q %d %s", o.CheckoutID, o.Charge, o.Units, ratText(o.Amount))
			mine[k]++
			orderOf[k] = o
		}
		for k, n := range mine {
			if _, seen := orders[k]; !seen {
				orderKeys = append(orderKeys, k)
			}
			orders[k] = max(orders[k], n)
		}
	}
	if len(chargeKeys)+len(orderKeys) == 0 {
		return nil
	}
	slices.Sort(chargeKeys)
	slices.Sort(orderKeys)
	for _, k := range chargeKeys {
		for range charges[k] {
			u.Charges = append(u.Charges, chargeOf[k])
		}
	}
	for _, k := range orderKeys {
		for range orders[k] {
			u.Orders = append(u.Orders, orderOf[k])
		}
	}
	return u
}

func ratText(r *big.Rat) string {
	if r == nil {
		return "-"
	}
	return r.RatString()
}

// unattributedNote says which rows of this run belong to no shop's
// shopper, and what they broke.
func unattributedNote(u *judge.Facts, iv runrecord.Invariants) string {
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
	ids = judge.SortIDs(ids)
	shown := strings.Join(ids[:min(len(ids), judge.MaxExamples)], ", ")
	if len(ids) > judge.MaxExamples {
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
	return fmt.Sprintf("%s and %s of this run belong to no shop's shopper (checkout ids %s): reconciled on their own, %s", howMany(len(u.Charges), "charge"), howMany(len(u.Orders), "order"), shown, what)
}

// howMany is "1 charge" or "N charges".
func howMany(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// onlyTheirs is f with the charges and orders of shoppers other than
// shoppers left out.
func onlyTheirs(f *judge.Facts, shoppers []judge.Shopper) *judge.Facts {
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

func addInvariants(a, b runrecord.Invariants) runrecord.Invariants {
	a.Oversold += b.Oversold
	a.LostUnits += b.LostUnits
	a.DoubleCharges += b.DoubleCharges
	a.ChargesWithoutOrder += b.ChargesWithoutOrder
	a.OrdersWithoutCharge += b.OrdersWithoutCharge
	a.ChargedAfterLeaving += b.ChargedAfterLeaving
	a.OrdersToldFailed += b.OrdersToldFailed
	a.ConfirmedWithoutOrder += b.ConfirmedWithoutOrder
	a.UnitsCreated += b.UnitsCreated
	a.WrongAmounts += b.WrongAmounts
	a.StrandedUnits += b.StrandedUnits
	a.Dropped += b.Dropped
	return a
}

func addLedger(a, b runrecord.LedgerSummary) runrecord.LedgerSummary {
	a.Initial += b.Initial
	a.Available += b.Available
	a.Reserved += b.Reserved
	a.Sold += b.Sold
	a.Orders += b.Orders
	return a
}

// mergeFacts is the books of a shop kept on two pods (a move took it from
// one to the other): the units of both added (the pod it moved to started
// with none), the orders of both, and the charges once (both read them
// from the one provider).
func mergeFacts(a, b *judge.Facts) *judge.Facts {
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
	c.Orders = append(append([]judge.Order(nil), a.Orders...), b.Orders...)
	c.OrdersKnown, c.OrderCharges = a.OrdersKnown && b.OrdersKnown, a.OrderCharges && b.OrderCharges
	c.OrderAmounts = a.OrderAmounts && b.OrderAmounts
	c.Final = a.Final && b.Final
	c.StockUnread = a.StockUnread || b.StockUnread
	c.Notes = append(append([]string(nil), a.Notes...), b.Notes...)
	return &c
}

// checkShops checks a scenario's shops against a described system: a
// system of pods needs every shop on one of its pods, a system without
// pods no shop on one, and moves need the reference checkout's pods.
func checkShops(sc *scenarios.Scenario, sys *system.System) []error {
	var errs []error
	pods := sys.PodNames()
	bad := func(field, format string, args ...any) {
		errs = append(errs, &scenarios.Error{File: sc.File, Line: sc.Line(field), Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	if len(pods) > 0 && len(sc.Shops) == 0 {
		bad("shops", "%s has pods (%s): name the shops, each on its pod, so that each pod's books are read", sys.Name, strings.Join(pods, ", "))
	}
	for i, sh := range sc.Shops {
		switch {
		case len(pods) > 0 && !slices.Contains(pods, sh.Pod):
			bad(fmt.Sprintf("shops[%d].pod", i), "%q is not one of the pods of %s (%s)", sh.Pod, sys.Name, strings.Join(pods, ", "))
		case len(pods) == 0 && sh.Pod != "":
			bad(fmt.Sprintf("shops[%d].pod", i), "%s has no pods (%s: pods)", sys.Name, sys.File)
		}
	}
	if len(sc.Moves) > 0 {
		bad("moves", "moving shops needs the pods gameday starts (environment.pods): the Pod Mover speaks the reference checkout's admin protocol")
	}
	return errs
}
