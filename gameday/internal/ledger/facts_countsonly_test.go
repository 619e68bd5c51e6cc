package ledger

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/gameday-dev/gameday/gameday/judge"
)

// Books that keep counts only (the units the sale started with, the units
// sold) judge what those allow: oversold, here two units sold beyond ten;
// lost_units and units_created, which need the units still available, are
// not checked, never passed, and Coverage (what gameday validate prints)
// says the same before any drill.
func TestCountsOnlyBooksJudgeOversold(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"total": 10, "sold": 12}`)
	}))
	defer srv.Close()
	sys, r := openBooks(t, httpBooks(srv.URL, `
  stock:
    initial: {store: api, http: {path: /sale}, json: total}
    sold: {store: api, http: {path: /sale}, json: sold}
`))
	f, err := readFacts(context.Background(), r, sys, "r1")
	if err != nil {
		t.Fatal(err)
	}
	rec := judge.ReconcileAll(f, nil, 0)
	if rec.Invariants.Oversold != 2 {
		t.Errorf("oversold %d, want 2", rec.Invariants.Oversold)
	}
	for _, name := range []string{"lost_units", "units_created", "stranded_units"} {
		if _, ok := rec.NotChecked[name]; !ok {
			t.Errorf("%s checked from counts only: %+v", name, rec)
		}
	}
	if _, ok := rec.NotChecked["oversold"]; ok {
		t.Errorf("oversold not checked: %+v", rec.NotChecked)
	}
	checked, notChecked := Coverage(sys)
	if !slices.Equal(checked, []string{"oversold"}) || notChecked["lost_units"] == "" || notChecked["units_created"] == "" {
		t.Errorf("coverage: judges %v; not %v", checked, notChecked)
	}
}

// A count of held units below zero (a hold released twice) is refused as
// a count, and never read as a negative: the unit the second release put
// back on sale stays units_created, where -1 held would have cancelled it.
// The other stock facts are still judged.
func TestNegativeHeldUnitsAreRefused(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"initial": 3, "available": 2, "sold": 2, "reserved": -1}`)
	}))
	defer srv.Close()
	sys, r := openBooks(t, httpBooks(srv.URL, `
  stock:
    initial: {store: api, http: {path: /sale}, json: initial}
    available: {store: api, http: {path: /sale}, json: available}
    sold: {store: api, http: {path: /sale}, json: sold}
    reserved: {store: api, http: {path: /sale}, json: reserved}
`))
	f, err := readFacts(context.Background(), r, sys, "r1")
	if err == nil || !strings.Contains(err.Error(), "read books.stock.reserved: -1 units held: a count of held units cannot be below zero") {
		t.Errorf("a negative count of held units: %v", err)
	}
	if f.Reserved != nil || f.StockUnread {
		t.Errorf("reserved %v, stock unread %v: want reserved unread, the rest read", f.Reserved, f.StockUnread)
	}
	if rec := judge.ReconcileAll(f, nil, 0); rec.Invariants.UnitsCreated != 1 || rec.Invariants.LostUnits != 0 {
		t.Errorf("units created %d, lost %d; want 1 and 0", rec.Invariants.UnitsCreated, rec.Invariants.LostUnits)
	}
}
