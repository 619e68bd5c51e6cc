package gameday_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gameday-dev/gameday/gameday"
)

// The pods drills of the catalogue, end to end: three pods of the
// reference checkout, each on its own redis-servers behind its own
// proxies, the router in front, one payment stand-in; time-scaled for CI.
// A failure or a flash sale in one pod stays there, and every shop's books
// balance on its own pod.
func TestPodDrillsPass(t *testing.T) {
	for _, name := range []string{"pod-inventory-down", "pod-hot-shop", "pod-shared-payment"} {
		t.Run(name, func(t *testing.T) {
			rec := run(t, context.Background(), lookup(t, name), options(t))
			if rec.Verdict != gameday.VerdictPass {
				t.Fatalf("verdict %s: %s\nexpectations %+v\ninvariants %+v", rec.Verdict, rec.Reason, rec.Expectations, rec.Invariants)
			}
			sc := lookup(t, name)
			if len(rec.Shops) != len(sc.Shops) {
				t.Fatalf("run.json has %d shops, the scenario %d", len(rec.Shops), len(sc.Shops))
			}
			for i, sh := range rec.Shops {
				if sh.Name != sc.Shops[i].Name || sh.Pod != sc.Shops[i].Pod || sh.Ledger.Initial != sc.ShopStock(sc.Shops[i]) && sh.Ledger.Initial != scaledStock(sc.ShopStock(sc.Shops[i])) {
					t.Errorf("shop %d: %+v, want %s on %s with its own stock", i, sh, sc.Shops[i].Name, sc.Shops[i].Pod)
				}
				if sh.Outcomes["confirmed"] == 0 || int64(sh.Outcomes["confirmed"]) != sh.Ledger.Sold {
					t.Errorf("shop %s: %d confirmed, %d sold on its pod", sh.Name, sh.Outcomes["confirmed"], sh.Ledger.Sold)
				}
			}
		})
	}
}

// The scenario's stock, scaled as options' time scale scales it.
func scaledStock(n int64) int64 { return (n*4 + 9) / 10 }

// Broken on purpose, the pods drills fail, and say why.
func TestBrokenPodsFail(t *testing.T) {
	t.Run("a routing table that sends a shop of pod-2 to pod-1", func(t *testing.T) {
		defer gameday.SetMisroute(func(routes map[string]string) { routes["west"] = "pod-1" })()
		rec := run(t, context.Background(), lookup(t, "pod-inventory-down"), options(t))
		if rec.Verdict != gameday.VerdictFail || !strings.Contains(rec.Reason, "end error") {
			t.Fatalf("verdict %s (%s)", rec.Verdict, rec.Reason)
		}
	})
	t.Run("no per-pod limit on the shared payment provider", func(t *testing.T) {
		sc := lookup(t, "pod-shared-payment")
		sc.Checkout.Payment.MaxConcurrent = -1
		rec := run(t, context.Background(), sc, options(t))
		if rec.Verdict != gameday.VerdictFail || !strings.Contains(rec.Reason, "keep at least 95% of their confirmations") {
			t.Fatalf("verdict %s (%s)", rec.Verdict, rec.Reason)
		}
	})
}
