// Package ledger is a drill's books stage: it finds where a system's books
// are read (the system's, or one ledger per shop, on its pod), opens them
// before the load (reached, set up, read once: the stock available then),
// waits after the load for them to settle and reads them into the facts
// the judge holds against what the shoppers were told.
//
// In: the scenario, the described system, the environment, the run's
// checkout-id prefix. Out: Read, the facts of every ledger and the notes
// the reading made, with the error of what could not be read.
package ledger

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gameday-dev/gameday/gameday/books"
	"github.com/gameday-dev/gameday/gameday/env"
	"github.com/gameday-dev/gameday/gameday/judge"
	"github.com/gameday-dev/gameday/gameday/system"
	"github.com/gameday-dev/gameday/scenarios"
)

// Ledger is where one shop's books are read, or, in a sale without shops,
// the whole sale's: the system as those books see it (in an environment of
// pods, the shop's pod's own checkout) and a reader of its stores.
type Ledger struct {
	Shop string // "" without shops
	Pod  string // "" without pods
	// Away: the shop does not start on this pod, but a move takes it
	// there; the SKU starts here with no stock.
	Away  bool
	stock int64
	// Sys is the system as these books see it.
	Sys   *system.System
	books *books.Reader
	// before is the stock available before the load; nil when unknown.
	before *int64
	// othersBefore are the order rows of other runs the books held before
	// the load, by checkout id.
	othersBefore map[string]int
}

// Name says whose books these are, for errors.
func (lg *Ledger) Name() string {
	if lg.Shop == "" {
		return lg.Sys.Name
	}
	if lg.Pod == "" {
		return "shop " + lg.Shop + " of " + lg.Sys.Name
	}
	if lg.Away {
		return "shop " + lg.Shop + " (moved) on " + lg.Pod
	}
	return "shop " + lg.Shop + " on " + lg.Pod
}

// Of are sc's ledgers in environment e of system sys: the system's, or one
// per shop. vars are the reference checkout's variables (nil for a
// described system): in an environment of pods each shop's books and setup
// are its pod's checkout's, while purchases go to the router.
func Of(sc *scenarios.Scenario, sys *system.System, e env.Environment, vars map[string]string) ([]*Ledger, error) {
	if len(sc.Shops) == 0 {
		return []*Ledger{{Sys: sys, stock: sc.Stock}}, nil
	}
	pods := env.PodsOf(e)
	var out []*Ledger
	for i, sh := range sc.Shops {
		lg := &Ledger{Shop: sh.Name, Pod: sh.Pod, stock: sc.ShopStock(sh), Sys: sys}
		if c, ok := sys.Pod(sh.Pod); ok && vars == nil {
			lg.Sys = c // a described system of pods: the pod's own copy
		} else if url, ok := pods[sh.Pod]; ok && vars != nil {
			v := maps.Clone(vars)
			v["BASE_URL"], v["CHECKOUT_URL"] = e.CheckoutURL(), url
			s, err := system.Reference(v)
			if err != nil {
				return nil, err
			}
			lg.Sys = s
		} else if sh.Pod != "" {
			field := fmt.Sprintf("shops[%d].pod", i)
			return nil, &scenarios.Error{File: sc.File, Line: sc.Line(field), Field: field,
				Msg: fmt.Sprintf("shop %s lives on %s, which the %s environment does not have (environment.pods starts pods of the reference checkout; a system file names its own)", sh.Name, sh.Pod, e.Info().Kind)}
		}
		out = append(out, lg)
		// The pods a move takes the shop to keep its books there too.
		seen := map[string]bool{sh.Pod: true}
		for _, m := range sc.MovesByTime() {
			if m.Shop != sh.Name || seen[m.To] {
				continue
			}
			seen[m.To] = true
			away := *lg
			away.Pod, away.Away, away.stock = m.To, true, 0
			v := maps.Clone(vars)
			v["BASE_URL"], v["CHECKOUT_URL"] = e.CheckoutURL(), pods[m.To]
			s, err := system.Reference(v)
			if err != nil {
				return nil, err
			}
			away.Sys = s
			out = append(out, &away)
		}
	}
	return out, nil
}

// Open reaches the ledger's stores, runs its setup (for a shop, with the
// shop's SKU and stock) and reads its books once before the load: the
// stock available then, and every other fact, so that a query that cannot
// be read (an SQL error, a wrong path, a list not where items says) stops
// the drill before the sale rather than after it.
func (lg *Ledger) Open(ctx context.Context, prefix string) error {
	vals := system.Values{SKU: system.ShopSKU(lg.Shop, lg.Sys.SKU), Shop: lg.Shop, Stock: lg.stock, Run: prefix}
	r, err := books.Open(ctx, lg.Sys, vals, 10*time.Second)
	if err != nil {
		return fmt.Errorf("reach the books of %s: %w", lg.Name(), err)
	}
	lg.books = r
	if err := r.Setup(ctx); err != nil {
		return fmt.Errorf("set up %s: %w", lg.Name(), err)
	}
	f, err := readFacts(ctx, r, lg.Sys, prefix)
	if err != nil {
		return fmt.Errorf("the books of %s, read before the load: %w", lg.Name(), err)
	}
	lg.before, lg.othersBefore = f.Available, f.OrdersOfOtherRuns
	return nil
}

// Close lets go of every ledger's stores.
func Close(ledgers []*Ledger) {
	for _, lg := range ledgers {
		if lg.books != nil {
			_ = lg.books.Close()
		}
	}
}

// Read is what the books stage gives the drive: every ledger's facts (in
// the order of the ledgers; nil where none could be read), the notes the
// reading made, and whether the books were read before they settled (the
// run was interrupted, or books.settled never answered), so that only what
// no settling can undo is judged.
type Read struct {
	Facts     []*judge.Facts
	Notes     []string
	Unsettled bool
}

// Settle waits until every ledger's books are final (bounded, all at
// once), then reads them. When they do not settle in time they are read
// as they are, judged as final (settle_within is the longest the shop is
// to take: what is still open then is the shop's, as a hold never given
// back is), and the run says so. A run asked to
// stop (interrupted) does not wait: it reads the books at once and records
// what it has, so that a service manager's stop timeout never kills it
// before run.json is written. A ledger that cannot be read, or a part of
// one, is named in the error; the facts are returned with what could be
// read, so that what they prove is judged, and with the notes the reading
// made.
func Settle(ledgers []*Ledger, interrupted bool, prefix string) (Read, error) {
	var rd Read
	if interrupted {
		rd.Unsettled = true
		rd.Notes = append(rd.Notes, "interrupted: the books were read at once, without waiting for them to settle")
	}
	rd.Facts = make([]*judge.Facts, len(ledgers))
	notes := make([][]string, len(ledgers))
	errs := make([]error, len(ledgers))
	var wg sync.WaitGroup
	for i, lg := range ledgers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rd.Facts[i], notes[i], errs[i] = lg.settle(interrupted, prefix)
		}()
	}
	wg.Wait()
	var failed []error
	for i, lg := range ledgers {
		var never *errNeverSettled
		if errors.As(errs[i], &never) {
			rd.Unsettled = true
		}
		for _, n := range notes[i] {
			if lg.Shop != "" {
				n = lg.Name() + ": " + n
			}
			rd.Notes = append(rd.Notes, n)
		}
		if errs[i] != nil {
			if lg.Shop != "" {
				errs[i] = fmt.Errorf("%s: %w", lg.Name(), errs[i])
			}
			failed = append(failed, errs[i])
		}
	}
	return rd, joinErrors(failed...)
}

// settle waits for lg's books to settle and reads them. The facts are
// those that could be read, with the error of those that could not.
func (lg *Ledger) settle(interrupted bool, prefix string) (f *judge.Facts, notes []string, err error) {
	b := lg.Sys.Books
	stillOpen := false
	if !interrupted {
		// The wait has its own bound (settle_within or settle_after, and
		// one query's time); the reads after it are bounded by their
		// timeouts.
		ctx, cancel := context.WithTimeout(context.Background(), max(b.SettleWithin.D(), b.SettleAfter.D())+queryTimeout(b.Settled))
		note, open, serr := settleBooks(ctx, lg.books, lg.Sys, 0)
		stillOpen = open
		cancel()
		if note != "" {
			notes = append(notes, note)
		}
		if serr != nil {
			err = serr
		}
	}
	f, rerr := readFacts(context.Background(), lg.books, lg.Sys, prefix)
	err = joinErrors(err, rerr)
	notes = append(notes, f.Notes...)
	// Books read after the system's own settle step are final: what is
	// held then is stranded (an invariant). Read the moment the load
	// ended, after an interrupt, or when books.settled never answered, a
	// hold may still be on its way.
	var never *errNeverSettled
	f.Final = !interrupted && readFinal(b) && !errors.As(err, &never)
	f.SaysSettled, f.StillOpen = b.Settled != nil, stillOpen
	if f.Reserved != nil && *f.Reserved > 0 {
		notes = append(notes, strandedNote(lg.Name(), *f.Reserved, f.Final))
	}
	f.AvailableBefore = lg.before
	f.OtherRunOrders, f.OtherRunIDs = newRows(lg.othersBefore, f.OrdersOfOtherRuns)
	return f, notes, err
}

// newRows counts the rows in after beyond those in before, by key, and
// names the first judge.MaxExamples of their keys in the plan's order
// (rows without a checkout id are counted, not named).
func newRows(before, after map[string]int) (n int, ids []string) {
	for id, k := range after {
		if more := k - before[id]; more > 0 {
			n += more
			if id != "" {
				ids = append(ids, id)
			}
		}
	}
	ids = judge.SortIDs(ids)
	return n, ids[:min(len(ids), judge.MaxExamples)]
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

// CheckShops checks a scenario's shops against a described system: a
// system of pods needs every shop on one of its pods, a system without
// pods no shop on one, and moves need the reference checkout's pods.
func CheckShops(sc *scenarios.Scenario, sys *system.System) []error {
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

// queryTimeout bounds one run of q (a second when there is none).
func queryTimeout(q *system.Query) time.Duration {
	if q == nil {
		return time.Second
	}
	return q.Timeout.D() + time.Second
}
