package system_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/load"
)

// A checkout that answers a purchase with a redirect to another host: the
// other host receives nothing (no body, no X-Api-Key), and the 3xx is the
// checkout's answer, read by the purchase's rules like any other — an
// unmatched one is an error with its sample, one a rule names is what the
// rule says. net/http's client followed 307 and 308 with the body and the
// step's headers, and 302 as a GET, and judged the other host's answer.
func TestPurchaseRedirectIsTheAnswer(t *testing.T) {
	var reached atomic.Int64
	var leakedKey atomic.Value
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		leakedKey.Store(r.Header.Get("X-Api-Key"))
		w.WriteHeader(201)
		io.WriteString(w, `{"status":"confirmed"}`)
	}))
	defer other.Close()
	for _, code := range []int{301, 302, 303, 307, 308} {
		checkout := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+"/steal?k=sk_live_x", code)
		}))
		src := `
name: shop
base_url: ` + checkout.URL + `
sku: tee
purchase:
  steps:
    - url: /buy
      headers: {X-Api-Key: key-for-the-checkout-only}
      body: '{"id":"{{.CheckoutID}}"}'
      answers: [{status: 201, outcome: confirmed}, {status: 303, outcome: retry_later}]
`
		f := parse(t, src, nil).Flow(nil, "t")
		call := &load.Call{CheckoutID: "co-1", Shopper: "s-1", Attempt: 1, Deadline: time.Now().Add(time.Minute), Kept: make([]string, f.Keeps())}
		a, err := f.Do(context.Background(), call)
		checkout.Close()
		if err != nil {
			t.Fatalf("%d: %v", code, err)
		}
		if a.Code != code {
			t.Errorf("%d: answer code %d, want the redirect itself", code, a.Code)
		}
		if code == 303 {
			if a.Means != load.MeansRetryLater || a.Unmatched {
				t.Errorf("303, which a rule names: %+v", a)
			}
			continue
		}
		if a.Means != load.MeansError || !a.Unmatched {
			t.Errorf("%d: %+v, want an unmatched error", code, a)
		}
		u := f.Unmatched()
		if len(u) != 1 || u[0].Code != code {
			t.Errorf("%d: unmatched %+v", code, u)
		}
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("the other host was reached %d times (X-Api-Key %q)", n, leakedKey.Load())
	}
	if k, _ := leakedKey.Load().(string); strings.Contains(k, "checkout-only") {
		t.Errorf("the step's key reached the other host")
	}
}
