package gameday_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gameday-dev/gameday/gameday"
	"github.com/gameday-dev/gameday/gameday/faults"
	"github.com/gameday-dev/gameday/gameday/system"
	"github.com/gameday-dev/gameday/scenarios"
)

// A store the books cannot reach makes the drill an error before anything
// is sent: no load, no setup, the store named.
func TestUnreachableStoreStopsTheDrill(t *testing.T) {
	var hits atomic.Int64
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" { // not the GET that finds the checkout and the store there
			hits.Add(1)
		}
	}))
	defer shop.Close()
	sys, err := system.Parse("shop.yaml", []byte(fmt.Sprintf(`
name: shop
base_url: %s
sku: s
purchase: {steps: [{url: /buy, answers: [{status: 200, outcome: confirmed}]}]}
stores:
  api: {http: "%s"}
  db: {postgres: "postgres://nobody@127.0.0.1:1/shop?sslmode=disable&connect_timeout=1"}
setup:
  - {store: api, http: {method: POST, path: /reset}}
books:
  orders: {store: db, sql: "SELECT cart AS checkout_id FROM orders"}
`, shop.URL, shop.URL)), nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := runDescribed(t, sys)
	if rec.Verdict != gameday.VerdictError || !strings.Contains(rec.Reason, "store db (postgres)") || rec.Load.Started != 0 {
		t.Fatalf("verdict %s: %s (started %d)", rec.Verdict, rec.Reason, rec.Load.Started)
	}
	// The checkout and the http store are each reached with a GET of
	// their base URL; nothing else may have come: no setup, no purchase.
	if n := hits.Load(); n > 0 {
		t.Errorf("%d requests reached the shop", n)
	}
}

// A checkout that does not answer at its base_url makes the drill an
// error before anything is set up or sent, not a failed promise after a
// whole load of errors.
func TestCheckoutThatDoesNotAnswerStopsTheDrill(t *testing.T) {
	var resets atomic.Int64
	store := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			resets.Add(1)
		}
	}))
	defer store.Close()
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close() // its port now refuses
	sys, err := system.Parse("shop.yaml", []byte(fmt.Sprintf(`
name: shop
base_url: %s
sku: s
purchase: {steps: [{url: /buy, answers: [{status: 200, outcome: confirmed}]}]}
stores:
  api: {http: "%s"}
setup:
  - {store: api, http: {method: POST, path: /reset}}
`, gone.URL, store.URL)), nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := runDescribed(t, sys)
	if rec.Verdict != gameday.VerdictError || !strings.Contains(rec.Reason, "the checkout does not answer at "+gone.URL+" (shop.yaml:3: base_url)") || rec.Load.Started != 0 {
		t.Fatalf("verdict %s: %s (started %d)", rec.Verdict, rec.Reason, rec.Load.Started)
	}
	if n := resets.Load(); n != 0 {
		t.Errorf("setup ran %d times", n)
	}
}

// Books that cannot be read are found before the load, not after it: the
// orders list is not where items says.
func TestUnreadableBooksStopTheDrillBeforeTheLoad(t *testing.T) {
	var buys atomic.Int64
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/buy":
			buys.Add(1)
		case "/orders":
			fmt.Fprint(w, `{"rows": []}`)
		}
	}))
	defer shop.Close()
	sys, err := system.Parse("shop.yaml", []byte(fmt.Sprintf(`
name: shop
base_url: %[1]s
sku: s
purchase: {steps: [{url: /buy, answers: [{status: 200, outcome: confirmed}]}]}
stores:
  api: {http: "%[1]s"}
books:
  orders: {store: api, http: {path: /orders}, items: data}
  settle_after: 1ms
`, shop.URL)), nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := runDescribed(t, sys)
	if rec.Verdict != gameday.VerdictError || !strings.Contains(rec.Reason, `the books of shop, read before the load: read books.orders: want a JSON list at "data"`) || rec.Load.Started != 0 {
		t.Fatalf("verdict %s: %s (started %d)", rec.Verdict, rec.Reason, rec.Load.Started)
	}
	if n := buys.Load(); n != 0 {
		t.Errorf("%d purchases were sent", n)
	}
}

// runDescribed drills sys with a short baseline scenario.
func runDescribed(t *testing.T, sys *system.System) *gameday.Record {
	t.Helper()
	sc, err := scenarios.Parse("drill.yaml", []byte("name: d\nmatrix: {dependency: none, failure: baseline}\nstock: 5\nload:\n  stages: [{duration: 2s, target: 5}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	rec, _, err := gameday.Run(context.Background(), sc, gameday.Options{System: sys, RunsDir: t.TempDir(),
		Journal: faults.OpenJournal(filepath.Join(t.TempDir(), "j.json"))})
	if err != nil {
		t.Fatal(err)
	}
	return rec
}
