package checkout_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/checkout"
	"github.com/gameday-dev/gameday/checkout/catalog"
	"github.com/gameday-dev/gameday/checkout/payment"
	"github.com/gameday-dev/gameday/gameday/toxi"
	"github.com/gameday-dev/gameday/internal/testenv"
)

// env is the reference environment of a test: two real redis-servers, the
// payment stand-in, an embedded Toxiproxy in front of all three, and the
// checkout wired to the proxies.
type env struct {
	t        testing.TB
	toxi     *toxi.Client
	checkout *checkout.Server
	url      string
	payment  *payment.Server
	payURL   string // direct, bypassing Toxiproxy
	hc       *http.Client
	// catalog is the catalogue stand-in (with envOptions.catalog), behind
	// the proxy "catalog"; sessAddr the sessions Redis, direct.
	catalog  *catalog.Server
	sessAddr string
}

type envOptions struct {
	cfg     checkout.Config // addresses are filled in
	payment payment.Config
	stock   int64
	// direct wires the checkout straight to its dependencies, bypassing
	// Toxiproxy (for benchmarks that measure the proxy's cost).
	direct bool
	// catalog, when set, starts the catalogue stand-in behind the product
	// page's cache.
	catalog *catalog.Config
}

const sku = "sku-1"

func newEnv(t testing.TB, o envOptions) *env {
	t.Helper()
	inv := testenv.Redis(t)
	sess := testenv.Redis(t)
	tc := testenv.Toxiproxy(t)

	pay, err := payment.NewServer(o.payment, nil)
	if err != nil {
		t.Fatal(err)
	}
	payHTTP := httptest.NewServer(pay)
	t.Cleanup(payHTTP.Close)

	cfg := o.cfg
	cfg.InventoryRedis = testenv.Proxy(t, tc, "inventory", inv.Addr())
	cfg.SessionRedis = testenv.Proxy(t, tc, "sessions", sess.Addr())
	cfg.PaymentURL = "http://" + testenv.Proxy(t, tc, "payment", payHTTP.Listener.Addr().String())
	if o.direct {
		cfg.InventoryRedis, cfg.SessionRedis, cfg.PaymentURL = inv.Addr(), sess.Addr(), payHTTP.URL
	}
	var cat *catalog.Server
	if o.catalog != nil {
		if cat, err = catalog.New(*o.catalog); err != nil {
			t.Fatal(err)
		}
		catHTTP := httptest.NewServer(cat)
		t.Cleanup(catHTTP.Close)
		cfg.CatalogURL = "http://" + testenv.Proxy(t, tc, "catalog", catHTTP.Listener.Addr().String())
	}
	srv, err := checkout.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)

	e := &env{t: t, toxi: tc, checkout: srv, url: hs.URL, payment: pay, payURL: payHTTP.URL, catalog: cat, sessAddr: sess.Addr(),
		hc: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 256}}}
	if o.stock > 0 {
		e.setStock(o.stock)
	}
	return e
}

func (e *env) setStock(units int64) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.checkout.Inventory().SetStock(ctx, sku, units); err != nil {
		e.t.Fatal(err)
	}
}

type answer struct {
	code       int
	retryAfter string
	took       time.Duration
	body       checkout.Response
}

func (e *env) post(req checkout.Request) answer {
	e.t.Helper()
	if req.SKU == "" {
		req.SKU = sku
	}
	b, _ := json.Marshal(req)
	start := time.Now()
	resp, err := e.hc.Post(e.url+"/checkout", "application/json", bytes.NewReader(b))
	if err != nil {
		e.t.Fatalf("post checkout: %v", err)
	}
	defer resp.Body.Close()
	a := answer{code: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), took: time.Since(start)}
	if err := json.NewDecoder(resp.Body).Decode(&a.body); err != nil {
		e.t.Fatalf("decode checkout answer (%d): %v", resp.StatusCode, err)
	}
	return a
}

// crowd sends n checkouts, at most par at once, and returns their answers.
func (e *env) crowd(n, par int, mk func(i int) checkout.Request) []answer {
	e.t.Helper()
	out := make([]answer, n)
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out[i] = e.post(mk(i))
		}()
	}
	wg.Wait()
	return out
}

func shopper(i int) checkout.Request {
	return checkout.Request{CheckoutID: fmt.Sprintf("co-%d", i), Shopper: fmt.Sprintf("s-%d", i), Session: fmt.Sprintf("sess-%d", i)}
}

func count(as []answer, o checkout.Outcome) int {
	n := 0
	for _, a := range as {
		if a.body.Status == o {
			n++
		}
	}
	return n
}

// outcomes counts answers by outcome and, for the refused, by dependency
// and reason: what a failure message needs to say why a crowd did what it
// did.
func outcomes(as []answer) map[string]int {
	m := map[string]int{}
	for _, a := range as {
		k := string(a.body.Status)
		if a.body.Dependency != "" || a.body.Reason != "" {
			k += "/" + a.body.Dependency + "/" + a.body.Reason
		}
		m[k]++
	}
	return m
}

func (e *env) ledger() checkout.Ledger {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	l, err := e.checkout.Inventory().Ledger(ctx, sku)
	if err != nil {
		e.t.Fatal(err)
	}
	return l
}

// books is what reconciliation compares: the checkout's ledger against the
// provider's charges.
type books struct {
	ledger           checkout.Ledger
	approved         int // charges that moved money
	doubleCharged    int // keys with more than one charge
	chargeNoOrder    int // approved charges with no order
	orderNoCharge    int // orders whose charge is not approved
	unknownChargeIDs int
}

func (e *env) books() books {
	e.t.Helper()
	b := books{ledger: e.ledger()}
	approved := map[string]payment.Charge{} // by charge key
	perCheckout := map[string]int{}
	for _, c := range e.payment.Charges() {
		if c.Status == payment.StatusApproved {
			b.approved++
			approved[c.Key] = c
			perCheckout[checkout.CheckoutIDOf(c.Key)]++
		}
	}
	for _, n := range perCheckout {
		if n > 1 {
			b.doubleCharged++
		}
	}
	byKey := map[string]checkout.Order{}
	for _, o := range b.ledger.Orders {
		byKey[o.ChargeKey] = o
		c, ok := approved[o.ChargeKey]
		switch {
		case !ok:
			b.orderNoCharge++
		case c.ID != o.ChargeID:
			b.unknownChargeIDs++
		}
	}
	for key := range approved {
		if _, ok := byKey[key]; !ok {
			b.chargeNoOrder++
		}
	}
	return b
}

// eventually polls cond every 50ms for up to limit and fails the test with
// the last reason if it never holds.
func eventually(t testing.TB, limit time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %s", limit, why)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (e *env) addToxic(proxy string, tx toxi.Toxic) {
	e.t.Helper()
	testenv.AddToxic(e.t, e.toxi, proxy, tx)
}
func (e *env) removeToxic(proxy, name string) {
	e.t.Helper()
	testenv.RemoveToxic(e.t, e.toxi, proxy, name)
}
func (e *env) setEnabled(proxy string, on bool) {
	e.t.Helper()
	testenv.SetEnabled(e.t, e.toxi, proxy, on)
}

func (e *env) proxyListen(name string) string {
	e.t.Helper()
	p, err := e.toxi.Proxy(context.Background(), name)
	if err != nil {
		e.t.Fatal(err)
	}
	return p.Listen
}

func chargesString(cs []payment.Charge) string {
	var b []byte
	for _, c := range cs {
		b = fmt.Appendf(b, "[%s %s %s] ", c.ID, c.Key, c.Status)
	}
	return string(b)
}

// proxyUpstream is the real address behind a proxy.
func (e *env) proxyUpstream(name string) string {
	e.t.Helper()
	p, err := e.toxi.Proxy(context.Background(), name)
	if err != nil {
		e.t.Fatal(err)
	}
	return p.Upstream
}
