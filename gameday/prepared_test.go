package gameday_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gameday-dev/gameday/gameday"
)

// One environment prepared, driven twice: the checkout is started once
// (both drives reach it at the same address), each drive is a drill of
// its own (its directory, checkout ids, books and verdict), and the second
// one's books hold none of the first one's orders. A scenario that asks
// for another environment is refused before anything is sent.
func TestPreparedDrivesMany(t *testing.T) {
	sc := lookup(t, "payment-latency")
	o := options(t)
	p, err := gameday.Prepare(context.Background(), sc, o)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := p.Close(); err != nil {
			t.Error(err)
		}
	}()
	var recs []*gameday.Record
	var dirs []string
	for i, seed := range []int64{2, 7} {
		s := sc.Clone()
		s.Seed = seed
		rec, dir, err := p.Drive(context.Background(), s)
		if err != nil {
			t.Fatalf("drive %d: %v", i+1, err)
		}
		sameOnRejudge(t, dir)
		if rec.Verdict != gameday.VerdictPass {
			t.Fatalf("drive %d: %s (%s); notes %q", i+1, rec.Verdict, rec.Reason, rec.Notes)
		}
		recs, dirs = append(recs, rec), append(dirs, dir)
	}
	a, b := recs[0], recs[1]
	if dirs[0] == dirs[1] || a.CheckoutPrefix == b.CheckoutPrefix {
		t.Errorf("the drives share a directory (%s, %s) or ids (%s, %s)", dirs[0], dirs[1], a.CheckoutPrefix, b.CheckoutPrefix)
	}
	if a.Environment.Checkout == "" || a.Environment.Checkout != b.Environment.Checkout {
		t.Errorf("checkout at %q, then %q: the environment was brought up again", a.Environment.Checkout, b.Environment.Checkout)
	}
	for i, r := range recs {
		if got := r.Ledger.Orders; got != r.Outcomes["confirmed"] {
			t.Errorf("drive %d: %d orders in its books for %d confirmed shoppers", i+1, got, r.Outcomes["confirmed"])
		}
	}

	other := sc.Clone()
	other.Stock++
	if _, _, err := p.Drive(context.Background(), other); err == nil || !strings.Contains(err.Error(), "stock: differs from payment-latency's") {
		t.Errorf("a scenario with other stock: %v", err)
	}
}
