package gameday

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
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
