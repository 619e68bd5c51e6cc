package system_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/load"
)

// A checkout that answers a purchase 307 with a body of its own, pointing
// at another host: with no rule for 307 the answer is an error, recorded
// among the unmatched with its body as the sample (the 307's, not the
// other host's); with a rule that names 307 it means what the rule says,
// its Retry-After read as for any answer of that meaning. The other host
// gets nothing either way. net/http followed the 307 and the other
// host's 201 was judged confirmed.
func TestPurchaseRedirectSampleAndRule(t *testing.T) {
	var reached atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		w.WriteHeader(201)
		w.Write([]byte(`{"status":"confirmed","from":"the other host"}`))
	}))
	defer other.Close()
	checkout := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", other.URL+"/buy")
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "2")
		w.WriteHeader(http.StatusTemporaryRedirect)
		w.Write([]byte(`{"queue":"overflow pod"}`))
	}))
	defer checkout.Close()
	for _, tc := range []struct {
		name, answers string
		means         load.Meaning
		unmatched     bool
	}{
		// No rule names 307: an error, with its sample.
		{"unmatched", `[{status: 201, outcome: confirmed}]`, load.MeansError, true},
		// A rule names 307: it means what the rule says.
		{"ruled", `[{status: 201, outcome: confirmed}, {status: 307, outcome: retry_later}]`, load.MeansRetryLater, false},
	} {
		src := `
name: shop
base_url: ` + checkout.URL + `
sku: tee
purchase:
  steps:
    - url: /buy
      headers: {X-Api-Key: key-for-the-checkout-only}
      body: '{"id":"{{.CheckoutID}}"}'
      answers: ` + tc.answers + `
`
		f := parse(t, src, nil).Flow(nil, "t")
		call := &load.Call{CheckoutID: "co-1", Shopper: "s-1", Attempt: 1, Deadline: time.Now().Add(time.Minute), Kept: make([]string, f.Keeps())}
		a, err := f.Do(context.Background(), call)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if a.Code != 307 || a.Means != tc.means || a.Unmatched != tc.unmatched {
			t.Errorf("%s: %+v, want 307 meaning %v", tc.name, a, tc.means)
		}
		u := f.Unmatched()
		switch {
		case tc.unmatched && (len(u) != 1 || u[0].Code != 307 || !strings.Contains(u[0].Sample, "overflow pod") || u[0].ContentType != "application/json"):
			t.Errorf("%s: unmatched %+v, want the 307 with its sample", tc.name, u)
		case !tc.unmatched && len(u) != 0:
			t.Errorf("%s: unmatched %+v, want none", tc.name, u)
		}
		if !tc.unmatched && a.RetryAfter != 2*time.Second {
			t.Errorf("%s: Retry-After %s, want 2s", tc.name, a.RetryAfter)
		}
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("the other host was reached %d times", n)
	}
}
