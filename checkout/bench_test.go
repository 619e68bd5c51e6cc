package checkout_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gameday-dev/gameday/checkout"
)

// BenchmarkCheckout measures confirmed checkouts per second with healthy
// dependencies and an instant payment provider, with the checkout wired
// straight to Redis and payment, and through Toxiproxy with no toxic. Run:
//
//	go test -run '^$' -bench BenchmarkCheckout -benchtime 5s ./checkout/
func BenchmarkCheckout(b *testing.B) {
	for _, direct := range []bool{true, false} {
		name := "via-toxiproxy"
		if direct {
			name = "direct"
		}
		b.Run(name, func(b *testing.B) {
			e := newEnv(b, envOptions{stock: 1 << 40, direct: direct})
			var n atomic.Int64
			b.SetParallelism(8) // 16 shoppers at once on 2 cores
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := n.Add(1)
					a := e.post(checkout.Request{CheckoutID: fmt.Sprintf("bench-%d", i), Shopper: "s", Session: "sess"})
					if a.body.Status != checkout.OutcomeConfirmed {
						b.Errorf("checkout %d: %+v", i, a.body)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "checkouts/s")
		})
	}
}

// BenchmarkLedgerRead reads the books of a sale of 10,000 orders over the
// admin API, whole and as a summary (?summary=true), side by side: the
// read a runner polls every 200 ms while the books settle, and the one it
// makes once for the orders.
//
//	go test -run '^$' -bench LedgerRead ./checkout/
func BenchmarkLedgerRead(b *testing.B) {
	const orders = 10_000
	e := newEnv(b, envOptions{stock: orders, direct: true})
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1); i <= orders; i = next.Add(1) {
				if a := e.post(checkout.Request{CheckoutID: fmt.Sprintf("bench-%d", i), Shopper: "s", Session: "sess"}); a.body.Status != checkout.OutcomeConfirmed {
					b.Errorf("checkout %d: %+v", i, a.body)
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, c := range []struct{ name, query string }{{"whole", ""}, {"summary", "&summary=true"}} {
		b.Run(c.name, func(b *testing.B) {
			var size int
			for range b.N {
				code, _, body := e.adminCall("GET", "/admin/ledger?sku="+sku+c.query, "", "")
				if code != http.StatusOK || !strings.Contains(body, fmt.Sprintf(`"sold":%d`, orders)) {
					b.Fatalf("ledger: %d %.200s", code, body)
				}
				size = len(body)
			}
			b.ReportMetric(float64(size), "bytes/read")
		})
	}
}
