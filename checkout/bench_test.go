package checkout_test

import (
	"fmt"
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
