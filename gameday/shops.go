package gameday

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
	// othersBefore are the order rows of other runs the books held before
	// the load, by checkout id.
	othersBefore map[string]int
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
func (p *prepared) routes() map[string]string {
	if p.base.Environment.Pods == 0 {
		return nil
	}
	out := map[string]string{}
	for _, sh := range p.base.Shops {
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
	lg.before, lg.othersBefore = f.Available, f.OrdersOfOtherRuns
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
// read, so that what they prove is judged, and with the notes the reading
// made.
func (d *drill) settle(interrupted bool) ([]*judge.Facts, []string, error) {
	var said []string
	if interrupted {
		d.unsettled = true
		said = append(said, "interrupted: the books were read at once, without waiting for them to settle")
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
			said = append(said, n)
		}
		if errs[i] != nil {
			if lg.shop != "" {
				errs[i] = fmt.Errorf("%s: %w", lg.name(), errs[i])
			}
			failed = append(failed, errs[i])
		}
	}
	return facts, said, joinErrors(failed...)
}

// settle waits for lg's books to settle and reads them. The facts are
// those that could be read, with the error of those that could not.
func (lg *ledger) settle(interrupted bool, prefix string) (f *judge.Facts, notes []string, err error) {
	b := lg.sys.Books
	stillOpen := false
	if !interrupted {
		// The wait has its own bound (settle_within or settle_after, and
		// one query's time); the reads after it are bounded by their
		// timeouts.
		ctx, cancel := context.WithTimeout(context.Background(), max(b.SettleWithin.D(), b.SettleAfter.D())+queryTimeout(b.Settled))
		note, open, serr := settleBooks(ctx, lg.books, lg.sys, 0)
		stillOpen = open
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
	f.SaysSettled, f.StillOpen = b.Settled != nil, stillOpen
	if f.Reserved != nil && *f.Reserved > 0 {
		notes = append(notes, strandedNote(lg.name(), *f.Reserved, f.Final))
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
