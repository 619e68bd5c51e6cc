package gameday_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gameday-dev/gameday/gameday"
	"github.com/gameday-dev/gameday/gameday/system"
)

// A store that answers NaN for a stock fact stops the drill before the
// load, naming the fact and the store: read as a count it was
// -9,223,372,036,854,775,808 units, and lost_units 9.2e18.
func TestNaNStockStopsTheDrillBeforeTheLoad(t *testing.T) {
	var buys atomic.Int64
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/buy":
			buys.Add(1)
		case "/stock":
			fmt.Fprint(w, `{"available": NaN}`)
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
  stock: {available: {store: api, http: {path: /stock}, json: available}}
  settle_after: 1ms
`, shop.URL)), nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := runDescribed(t, sys)
	want := "the books of shop, read before the load: read books.stock.available: store api (http): want a number, got NaN"
	if rec.Verdict != gameday.VerdictError || !strings.Contains(rec.Reason, want) || rec.Load.Started != 0 {
		t.Fatalf("verdict %s: %s (started %d)\nwant an error with %q", rec.Verdict, rec.Reason, rec.Load.Started, want)
	}
	if n := buys.Load(); n != 0 {
		t.Errorf("%d purchases were sent", n)
	}
}
