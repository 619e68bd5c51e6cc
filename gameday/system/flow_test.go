package system_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/load"
	"github.com/gameday-dev/gameday/gameday/system"
)

func parse(t *testing.T, src string, vars map[string]string) *system.System {
	t.Helper()
	s, err := system.Parse("test.yaml", []byte(src), vars)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func reference(t *testing.T, url string) *system.System {
	t.Helper()
	s, err := system.Reference(map[string]string{"CHECKOUT_URL": url, "TOXIPROXY": "127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The reference checkout's description reads every answer the checkout
// gives (docs/checkout.md) as it means it, with the wait it asks for and
// why it refused.
func TestReferenceReadsTheCheckoutsAnswers(t *testing.T) {
	cases := []struct {
		code             int
		body, retryAfter string
		means            load.Meaning
		reason           string
		wait             time.Duration
		degraded         bool
	}{
		{200, `{"status":"confirmed","order":{"checkout_id":"co-1"}}`, "", load.MeansConfirmed, "", 0, false},
		{200, `{"status":"confirmed","guest":true,"degraded":true,"degraded_reasons":["session_store_unavailable"]}`, "", load.MeansConfirmed, "", 0, true},
		{402, `{"status":"declined"}`, "", load.MeansDeclined, "", 0, false},
		{409, `{"status":"sold_out","reason":"voided"}`, "", load.MeansSoldOut, "voided", 0, false},
		{409, `{"status":"in_progress","retry_after_ms":1000}`, "1", load.MeansRetryLater, "", time.Second, false},
		{202, `{"status":"pending","reason":"order_unconfirmed","retry_after_ms":250}`, "1", load.MeansRetryLater, "order_unconfirmed", 250 * time.Millisecond, false},
		{410, `{"status":"too_late","reason":"deadline"}`, "", load.MeansTooLate, "deadline", 0, false},
		{503, `{"status":"unavailable","dependency":"payment","reason":"breaker_open","retry_after_ms":20}`, "1", load.MeansUnavailable, "breaker_open", 20 * time.Millisecond, false},
		{503, `not json`, "2", load.MeansUnavailable, "", 2 * time.Second, false},
		{400, `{"status":"invalid","reason":"token_invalid"}`, "", load.MeansError, "token_invalid", 0, false},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.code, " ", c.body), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if c.retryAfter != "" {
					w.Header().Set("Retry-After", c.retryAfter)
				}
				w.WriteHeader(c.code)
				io.WriteString(w, c.body)
			}))
			defer srv.Close()
			f := reference(t, srv.URL).Flow(nil, "t")
			call := &load.Call{CheckoutID: "co-1", Shopper: "s-1", Attempt: 1, Deadline: time.Now().Add(time.Minute), Kept: make([]string, f.Keeps())}
			a, err := f.Do(context.Background(), call)
			if err != nil {
				t.Fatal(err)
			}
			if a.Means != c.means || a.Reason != c.reason || a.RetryAfter != c.wait || a.Degraded != c.degraded || a.Code != c.code || a.Unmatched {
				t.Errorf("answer %+v, want %v reason %q wait %v degraded %v", a, c.means, c.reason, c.wait, c.degraded)
			}
		})
	}
}

// The request the reference description sends is the one the checkout
// decodes strictly: its fields, the deadline in RFC 3339, and the
// waiting-room token in a header once one was given, never in the body.
func TestReferenceRequest(t *testing.T) {
	var mu sync.Mutex
	var bodies []map[string]any
	var tokens []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		dec := json.NewDecoder(r.Body)
		var body map[string]any
		if err := dec.Decode(&body); err != nil || r.URL.Path != "/checkout" || r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s %s: %v", r.Method, r.URL.Path, err)
		}
		mu.Lock()
		bodies = append(bodies, body)
		tokens = append(tokens, strings.Join(r.Header.Values("Waiting-Room-Token"), ","))
		n := len(bodies)
		mu.Unlock()
		if n == 1 {
			w.Header().Set("Waiting-Room-Token", "k1.abc.mac")
		}
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(503)
		io.WriteString(w, `{"status":"unavailable","reason":"waiting_room"}`)
	}))
	defer srv.Close()
	f := reference(t, srv.URL).Flow(nil, "t")
	dl := time.Date(2026, 12, 1, 9, 30, 0, 123e6, time.UTC)
	call := &load.Call{CheckoutID: "co-7", Shopper: "s-7", Session: "sess-7", Attempt: 1, Deadline: dl, Kept: make([]string, f.Keeps())}
	for range 3 {
		if _, err := f.Do(context.Background(), call); err != nil {
			t.Fatal(err)
		}
		call.Attempt++
	}
	want := map[string]any{"checkout_id": "co-7", "shopper": "s-7", "sku": "sku-1", "session": "sess-7", "deadline": "2026-12-01T09:30:00.123Z"}
	if fmt.Sprint(bodies[0]) != fmt.Sprint(want) || fmt.Sprint(bodies[2]) != fmt.Sprint(want) {
		t.Errorf("bodies %v, want each %v", bodies, want)
	}
	if strings.Join(tokens, "|") != "|k1.abc.mac|k1.abc.mac" {
		t.Errorf("tokens sent %q, want none, then the one given, kept", tokens)
	}
}

// A purchase of two calls with a value carried over, answers with other
// codes and a JSON error object, and an answer no rule understood: kept
// as a sample, counted, and an error.
func TestTwoStepFlowAndUnmatchedAnswers(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/holds":
			w.WriteHeader(201)
			io.WriteString(w, `{"hold":{"id":"h/42 x"}}`)
		case r.URL.Path == "/holds/h%2F42+x/pay" || r.URL.RawPath == "/holds/h%2F42+x/pay":
			w.WriteHeader(201)
			io.WriteString(w, `{"ticket":"T1"}`)
		default:
			w.WriteHeader(418)
			io.WriteString(w, "I'm a teapot: "+r.URL.String())
		}
	}))
	defer srv.Close()
	s := parse(t, `
name: two-step
base_url: `+srv.URL+`
sku: gala
purchase:
  steps:
    - name: hold
      url: /holds
      keep: {hold: {json: hold.id}}
      answers: [{status: 201, outcome: next}, {status: 409, json: {error.code: sold_out}, outcome: sold_out}]
    - name: pay
      url: '/holds/{{urlquery .Kept.hold}}/pay'
      answers: [{status: 201, outcome: confirmed}, {status: 422, outcome: declined}]
`, nil)
	f := s.Flow(nil, "t")
	call := &load.Call{CheckoutID: "co-1", Shopper: "s-1", Attempt: 1, Deadline: time.Now().Add(time.Minute), Kept: make([]string, f.Keeps())}
	a, err := f.Do(context.Background(), call)
	if err != nil || a.Means != load.MeansNext || call.Kept[0] != "h/42 x" {
		t.Fatalf("hold: %+v %v, kept %q", a, err, call.Kept)
	}
	call.Step = 1
	if a, err := f.Do(context.Background(), call); err != nil || a.Means != load.MeansConfirmed {
		t.Fatalf("pay: %+v %v", a, err)
	}
	call.Kept[0] = "gone"
	for range 3 {
		if a, err := f.Do(context.Background(), call); err != nil || a.Means != load.MeansError || !a.Unmatched {
			t.Fatalf("teapot: %+v %v", a, err)
		}
	}
	u := f.Unmatched()
	if len(u) != 1 || u[0].Step != "pay" || u[0].Request != "POST /holds/gone/pay" || u[0].Code != 418 || u[0].Count != 3 || !strings.Contains(u[0].Sample, "teapot") {
		t.Errorf("unmatched %+v", u)
	}
}

// A step that sends a value an earlier step keeps while it is still empty
// (the keep's path is not where the service puts it) is counted, and the
// run notes it with the keep's path; a value kept by the same step, empty
// on its first attempt by design (a token handed out by the first answer),
// is not.
func TestEmptyKeptValuesAreNoted(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/orders" {
			w.Header().Set("X-Token", "tk")
			w.WriteHeader(202)
			io.WriteString(w, `{"order_id":"o-1"}`)
			return
		}
		w.WriteHeader(503)
	}))
	defer srv.Close()
	s := parse(t, `
name: async
base_url: `+srv.URL+`
sku: gala
purchase:
  steps:
    - name: create
      url: /orders
      headers: {X-Token: "{{.Kept.token}}"}
      keep: {order: {json: orderId}, token: {header: X-Token}}
      answers: [{status: 202, outcome: next}]
    - name: poll
      method: GET
      url: '/orders/{{urlquery .Kept.order}}'
      headers: {X-Token: "{{.Kept.token}}"}
      answers: [{status: 200, outcome: confirmed}, {status: 503, outcome: unavailable}]
`, nil)
	f := s.Flow(nil, "t")
	for i := range 3 {
		call := &load.Call{CheckoutID: fmt.Sprint("co-", i), Shopper: "s", Attempt: 1, Deadline: time.Now().Add(time.Minute), Kept: make([]string, f.Keeps())}
		for step := range 2 {
			call.Step = step
			if _, err := f.Do(context.Background(), call); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := []string{"step poll sent 3 requests with {{.Kept.order}} empty: no answer of an earlier step had it where step create's keep.order (json: orderId) says"}
	if got := f.EmptyKept(); fmt.Sprint(got) != fmt.Sprint(want) || got[0].Requests != 3 {
		t.Errorf("notes:\n%q\nwant\n%q", got, want)
	}
}

// No answer is an error, and the request's context bounds the wait.
func TestFlowTransportErrors(t *testing.T) {
	t.Run("refused", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		srv.Close()
		f := reference(t, srv.URL).Flow(nil, "t")
		if _, err := f.Do(context.Background(), &load.Call{CheckoutID: "co-1", Kept: make([]string, f.Keeps())}); err == nil {
			t.Fatal("no error from a closed server")
		}
	})
	t.Run("deadline", func(t *testing.T) {
		release := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}))
		defer srv.Close()
		defer close(release)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		began := time.Now()
		f := reference(t, srv.URL).Flow(nil, "t")
		_, err := f.Do(ctx, &load.Call{CheckoutID: "co-1", Kept: make([]string, f.Keeps())})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Do: %v, want a deadline error", err)
		}
		if took := time.Since(began); took > time.Second {
			t.Errorf("gave up after %v", took)
		}
	})
}

// A sale through a Flow: the first request of every checkout id is told to
// come back in 20 ms, the second is confirmed; every shopper confirms on
// its second attempt with the same id.
func TestRunOverHTTP(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			CheckoutID string `json:"checkout_id"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		mu.Lock()
		n := seen[req.CheckoutID]
		seen[req.CheckoutID]++
		mu.Unlock()
		if n == 0 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(503)
			io.WriteString(w, `{"status":"unavailable","retry_after_ms":20}`)
			return
		}
		io.WriteString(w, `{"status":"confirmed"}`)
	}))
	defer srv.Close()
	plan := load.Plan{Stages: []load.Stage{{Duration: 10 * time.Millisecond, Target: 1000}, {Duration: 100 * time.Millisecond, Target: 1000}},
		Patience: 2 * time.Second, MaxRetries: 2, MaxShoppers: 200, Seed: 1, IDPrefix: "run1"}
	rep, err := load.Run(context.Background(), plan, reference(t, srv.URL).Flow(nil, "run1"), load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range rep.Shoppers {
		if s.Outcome != load.OutcomeConfirmed || len(s.Attempts) != 2 || s.Attempts[0].Code != 503 || s.Attempts[0].RetryAfter != 20*time.Millisecond || seen[s.ID] != 2 {
			t.Fatalf("shopper %d: %q after %+v", i, s.Outcome, s.Attempts)
		}
	}
	if !strings.HasPrefix(rep.Shoppers[0].ID, "run1-") || rep.Started != 105 {
		t.Errorf("ids %q..., started %d", rep.Shoppers[0].ID, rep.Started)
	}
}

// An API that asks shoppers to come back without saying when is given a
// wait by retry_after's fixed after, used only when no source before it in
// the list gives one.
func TestRetryAfterFixedWait(t *testing.T) {
	header, code := "", http.StatusServiceUnavailable
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if header != "" {
			w.Header().Set("Retry-After", header)
		}
		w.WriteHeader(code)
	}))
	defer srv.Close()
	f := parse(t, `
name: shop
base_url: `+srv.URL+`
sku: s
purchase:
  steps:
    - url: /buy
      answers: [{status: 5xx, outcome: unavailable}, {status: 200, outcome: confirmed}]
      retry_after: [{header: Retry-After}, {after: 1500ms}]
`, nil).Flow(nil, "t")
	for _, c := range []struct {
		header string
		code   int
		means  load.Meaning
		want   time.Duration
	}{
		{"", 503, load.MeansUnavailable, 1500 * time.Millisecond},
		{"2", 503, load.MeansUnavailable, 2 * time.Second},
		// No wait is read from an answer the shopper does not come back
		// from: it would stand in attempts.csv as if asked for.
		{"", 200, load.MeansConfirmed, 0},
	} {
		header, code = c.header, c.code
		call := &load.Call{CheckoutID: "t-1", Shopper: "s-1", Attempt: 1, Deadline: time.Now().Add(time.Minute), Kept: make([]string, f.Keeps())}
		a, err := f.Do(context.Background(), call)
		if err != nil || a.Means != c.means || a.RetryAfter != c.want {
			t.Errorf("Retry-After %q: %+v %v, want a wait of %v", c.header, a, err, c.want)
		}
	}
}

// The asynchronous purchase of docs/systems.md, as written there, drills
// a shop that accepts an order and answers "pending" to three polls
// before it is paid: with no retries, every shopper places its order,
// polls past its retries and ends confirmed.
func TestAsynchronousPurchaseInTheDocs(t *testing.T) {
	doc, err := os.ReadFile("../../docs/systems.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n### An asynchronous purchase: accept, then poll\n")
	_, block, ok2 := strings.Cut(section, "```yaml\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("docs/systems.md has no yaml block under \"An asynchronous purchase\"")
	}
	var mu sync.Mutex
	polls := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/orders" {
			var req struct{ Cart string }
			_ = json.NewDecoder(r.Body).Decode(&req)
			w.WriteHeader(202)
			fmt.Fprintf(w, `{"order_id": %q, "status": "pending"}`, "o-"+req.Cart)
			return
		}
		id, ok := strings.CutPrefix(r.URL.Path, "/orders/")
		if r.Method != http.MethodGet || !ok || id == "" {
			w.WriteHeader(404)
			return
		}
		mu.Lock()
		polls[id]++
		n := polls[id]
		mu.Unlock()
		status := "pending"
		if n > 3 {
			status = "paid"
		}
		fmt.Fprintf(w, `{"status": %q}`, status)
	}))
	defer srv.Close()
	s := parse(t, "name: async\nbase_url: "+srv.URL+"\nsku: gala\n"+block, nil)
	plan := load.Plan{Stages: []load.Stage{{Duration: 10 * time.Millisecond, Target: 200}},
		Patience: 5 * time.Second, MaxShoppers: 10, Seed: 1, IDPrefix: "run1"}
	rep, err := load.Run(context.Background(), plan, s.Flow(nil, "run1"), load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Shoppers) == 0 {
		t.Fatal("no shoppers")
	}
	for i, sh := range rep.Shoppers {
		if sh.Outcome != load.OutcomeConfirmed || len(sh.Attempts) != 5 || polls["o-"+sh.ID] != 4 {
			t.Errorf("shopper %d: %q after %d attempts (%d polls): %+v", i, sh.Outcome, len(sh.Attempts), polls["o-"+sh.ID], sh.Attempts)
		}
	}
}

// The reference system's journeys ask for the product page and the cart
// as the checkout serves them, read their answers into ok or next, carry
// the think before the next page, and mark a page served without its
// stock as degraded.
func TestReferenceJourneys(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.RequestURI())
		mu.Unlock()
		switch {
		case r.URL.Path == "/products/sku-1":
			fmt.Fprint(w, `{"sku":"sku-1","available":null,"degraded":true}`)
		case r.URL.Path == "/cart" && r.Method == http.MethodPost:
			b, _ := io.ReadAll(r.Body)
			if !strings.Contains(string(b), `"session":"s-shopper-3"`) {
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer srv.Close()
	f := reference(t, srv.URL).Flow(nil, "s")
	call := &load.Call{Journey: "browse", CheckoutID: "s-3", Shopper: "s-shopper-3", Deadline: time.Now().Add(time.Minute)}
	a, err := f.Do(context.Background(), call)
	if err != nil || a.Means != load.MeansNext || a.Think != time.Second || !a.Degraded {
		t.Fatalf("browse's first page: %+v, %v; want next, a think of 1s, degraded", a, err)
	}
	call.Step = 1
	if a, err = f.Do(context.Background(), call); err != nil || a.Means != load.MeansOK || a.Think != 0 {
		t.Fatalf("browse's last page: %+v, %v; want ok", a, err)
	}
	call = &load.Call{Journey: "cart", Step: 1, Shopper: "s-shopper-3", Deadline: time.Now().Add(time.Minute)}
	if a, err = f.Do(context.Background(), call); err != nil || a.Means != load.MeansUnavailable || a.RetryAfter != time.Second {
		t.Fatalf("a cart the sessions cannot hold: %+v, %v; want unavailable, come back in 1s", a, err)
	}
	if _, err = f.Do(context.Background(), &load.Call{Journey: "wishlist"}); err == nil || !strings.Contains(err.Error(), `no journey "wishlist"`) {
		t.Fatalf("an unknown journey: %v", err)
	}
	want := []string{"GET /products/sku-1", "GET /products/sku-1", "POST /cart"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("requests %q, want %q", got, want)
	}
}
