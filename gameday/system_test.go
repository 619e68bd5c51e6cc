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
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
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
	sc, err := scenarios.Parse("drill.yaml", []byte("name: d\nmatrix: {dependency: none, failure: baseline}\nstock: 5\nload:\n  stages: [{duration: 2s, target: 5}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	rec, _, err := gameday.Run(context.Background(), sc, gameday.Options{System: sys, RunsDir: t.TempDir(),
		Journal: faults.OpenJournal(filepath.Join(t.TempDir(), "j.json"))})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Verdict != gameday.VerdictError || !strings.Contains(rec.Reason, "store db (postgres)") || rec.Load.Started != 0 {
		t.Fatalf("verdict %s: %s (started %d)", rec.Verdict, rec.Reason, rec.Load.Started)
	}
	// Open reaches the http store with a GET of its base URL; nothing else
	// may have come: no setup, no purchase.
	if n := hits.Load(); n > 1 {
		t.Errorf("%d requests reached the shop", n)
	}
}
