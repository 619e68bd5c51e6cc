package checkout_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/checkout"
	"github.com/gameday-dev/gameday/checkout/payment"
)

// A provider that answers a charge 429 with Retry-After: 1 is left alone
// for that second: the checkout's next attempt of the same charge comes no
// sooner, and the shopper is confirmed. When the shopper's deadline
// cannot hold the wait, the charge ends at once (one attempt) and the
// shopper is refused, not confirmed. Before, the checkout sent the charge
// again at once, into the provider's rate limit.
func TestCheckoutHonoursRetryAfter(t *testing.T) {
	for _, c := range []struct {
		name     string
		deadline time.Duration // the shopper's patience
		attempts int           // charges the provider sees
		code     int
	}{
		{"the wait fits", 10 * time.Second, 2, http.StatusOK},
		{"the wait does not fit", 900 * time.Millisecond, 1, http.StatusServiceUnavailable},
	} {
		t.Run(c.name, func(t *testing.T) {
			real, err := payment.NewServer(payment.Config{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var at []time.Time
			provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/charges" && r.Method == http.MethodPost {
					mu.Lock()
					at = append(at, time.Now())
					first := len(at) == 1
					mu.Unlock()
					if first {
						w.Header().Set("Retry-After", "1")
						http.Error(w, `{"error":"rate limited"}`, http.StatusTooManyRequests)
						return
					}
				}
				real.ServeHTTP(w, r)
			}))
			t.Cleanup(provider.Close)
			e := providerCheckout(t, checkout.Config{PaymentURL: provider.URL, PaymentAttempts: 3})
			a := e.post(checkout.Request{CheckoutID: "co-1", Shopper: "s-1", Deadline: time.Now().Add(c.deadline)})
			mu.Lock()
			defer mu.Unlock()
			if a.code != c.code || len(at) != c.attempts {
				t.Fatalf("answer %d %+v after %d charges, want %d after %d", a.code, a.body, len(at), c.code, c.attempts)
			}
			if len(at) == 2 && at[1].Sub(at[0]) < time.Second {
				t.Errorf("the second charge came %s after a 429 that asked for 1s", at[1].Sub(at[0]))
			}
		})
	}
}
