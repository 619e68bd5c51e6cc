package checkout_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/checkout"
	"github.com/gameday-dev/gameday/checkout/payment"
	"github.com/gameday-dev/gameday/internal/testenv"
)

// A payment provider whose address answers every call with a 307 to
// another provider (a real stand-in): the checkout follows it not, so the
// other provider gets no request and charges nothing, and the shopper is
// refused the way a failing provider refuses them (503, dependency
// payment), never confirmed. net/http followed the 307 with the charge and
// its key, and the shopper was confirmed on a charge the provider the
// books read never saw.
func TestCheckoutFollowsNoPaymentRedirect(t *testing.T) {
	var reached atomic.Int64
	other, err := payment.NewServer(payment.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	otherHTTP := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		other.ServeHTTP(w, r)
	}))
	t.Cleanup(otherHTTP.Close)
	var asked atomic.Int64
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		http.Redirect(w, r, otherHTTP.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(provider.Close)
	e := providerCheckout(t, checkout.Config{PaymentURL: provider.URL})
	a := e.post(checkout.Request{CheckoutID: "co-1", Shopper: "s-1"})
	if a.code != http.StatusServiceUnavailable || a.body.Status == checkout.OutcomeConfirmed || a.body.Dependency != "payment" {
		t.Errorf("answer %d %+v, want 503 refused for payment", a.code, a.body)
	}
	if asked.Load() == 0 {
		t.Error("the provider was never asked")
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("the other provider got %d requests", n)
	}
	if n := len(other.Charges()); n != 0 {
		t.Errorf("the other provider recorded %d charges", n)
	}
}

// providerCheckout is a checkout (cfg, its Redis filled in) with three
// units of sku in stock, charging at cfg.PaymentURL: a provider of the
// test's own.
func providerCheckout(t *testing.T, cfg checkout.Config) *env {
	t.Helper()
	inv, sess := testenv.Redis(t), testenv.Redis(t)
	cfg.InventoryRedis, cfg.SessionRedis = inv.Addr(), sess.Addr()
	srv, err := checkout.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Inventory().SetStock(ctx, sku, 3); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return &env{t: t, checkout: srv, url: hs.URL, hc: &http.Client{Timeout: 30 * time.Second}}
}
