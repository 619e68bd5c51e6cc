package checkout_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gameday-dev/gameday/checkout"
	"github.com/gameday-dev/gameday/checkout/payment"
	"github.com/gameday-dev/gameday/internal/testenv"
)

// adminCall sends one admin request with the Authorization header auth
// ("" sends none) and returns the status, the WWW-Authenticate header and
// the body.
func (e *env) adminCall(method, path, auth, body string) (int, string, string) {
	e.t.Helper()
	req, err := http.NewRequest(method, e.url+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := e.hc.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate"), string(b)
}

// With a token, every admin request without it is refused and changes
// nothing — stock cannot be reset, the books and breakers cannot be read,
// and an admin path that does not exist answers like one that does —
// while shoppers need no token.
func TestAdminAPIWantsItsToken(t *testing.T) {
	const token = "t0ken-for-this-test"
	e := newEnv(t, envOptions{cfg: checkout.Config{AdminToken: token}, stock: 5})
	if a := e.post(checkout.Request{CheckoutID: "co-1", Shopper: "s-1"}); a.code != http.StatusOK {
		t.Fatalf("a shopper without the admin token: %d %+v, want 200", a.code, a.body)
	}
	for _, auth := range []string{"", "Bearer wrong", "Bearer " + token + "x", token, "Basic " + token} {
		for _, c := range []struct{ method, path, body string }{
			{"GET", "/admin/ledger?sku=" + sku, ""},
			{"GET", "/admin/breakers", ""},
			{"GET", "/admin/admission", ""},
			{"POST", "/admin/admission/reset-max", ""},
			{"PUT", "/admin/stock", `{"sku":"sku-1","units":1000}`},
			{"GET", "/admin/no-such-thing", ""},
		} {
			code, challenge, body := e.adminCall(c.method, c.path, auth, c.body)
			if code != http.StatusUnauthorized || !strings.HasPrefix(challenge, "Bearer") {
				t.Errorf("%s %s with %q: %d (WWW-Authenticate %q), want 401 with a Bearer challenge", c.method, c.path, auth, code, challenge)
			}
			if strings.Contains(body, "co-1") || strings.Contains(body, "available") || strings.Contains(body, token) {
				t.Errorf("%s %s with %q: the refusal reveals something: %s", c.method, c.path, auth, body)
			}
		}
	}
	if l := e.ledger(); l.Initial != 5 || l.Sold != 1 {
		t.Errorf("after refused admin requests the books are %+v, want initial 5 and 1 sold", l)
	}
	// The scheme is case-insensitive (RFC 9110).
	for _, auth := range []string{"Bearer " + token, "bearer " + token} {
		if code, _, body := e.adminCall("GET", "/admin/ledger?sku="+sku, auth, ""); code != http.StatusOK || !strings.Contains(body, "co-1") {
			t.Errorf("with %q: %d %s, want 200 and the order", auth, code, body)
		}
	}
	for _, open := range []string{"/healthz", "/metrics"} {
		if code, _, _ := e.adminCall("GET", open, "", ""); code != http.StatusOK {
			t.Errorf("GET %s without a token: %d, want 200 (not an admin path)", open, code)
		}
	}
}

// Without a token the admin API answers loopback peers only: a checkout on
// a shared network configured without one cannot be reset by a neighbour.
func TestAdminAPIWithoutATokenIsLoopbackOnly(t *testing.T) {
	e := newEnv(t, envOptions{stock: 5})
	for _, c := range []struct {
		peer string
		want int
	}{
		{"127.0.0.1:40000", http.StatusOK},
		{"127.9.9.9:40000", http.StatusOK},
		{"[::1]:40000", http.StatusOK},
		{"[::ffff:127.0.0.1]:40000", http.StatusOK},
		{"172.18.0.5:40000", http.StatusForbidden},
		{"10.0.0.7:40000", http.StatusForbidden},
		{"[2001:db8::1]:40000", http.StatusForbidden},
		{"not-an-address", http.StatusForbidden},
	} {
		req := httptest.NewRequest(http.MethodGet, "/admin/ledger?sku="+sku, nil)
		req.RemoteAddr = c.peer
		rec := httptest.NewRecorder()
		e.checkout.ServeHTTP(rec, req)
		if rec.Code != c.want {
			t.Errorf("GET /admin/ledger from %s: %d %s, want %d", c.peer, rec.Code, rec.Body, c.want)
		}
		if c.want == http.StatusForbidden && strings.Contains(rec.Body.String(), "available") {
			t.Errorf("from %s the refusal reveals the books: %s", c.peer, rec.Body)
		}
	}
	// The checkout itself is open to every peer.
	req := httptest.NewRequest(http.MethodPost, "/checkout", strings.NewReader(`{"checkout_id":"co-1","shopper":"s-1","sku":"sku-1"}`))
	req.RemoteAddr = "172.18.0.5:40000"
	rec := httptest.NewRecorder()
	e.checkout.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Errorf("POST /checkout from another host: %d %s, want 200", rec.Code, rec.Body)
	}
}

// A checkout given the Redis password speaks to Redis servers that want
// one (as Compose's do); without it the same servers refuse it.
func TestCheckoutSpeaksToPasswordedRedis(t *testing.T) {
	const password = "redis pass: with spaces & symbols"
	inv, sess := testenv.Redis(t), testenv.Redis(t)
	for _, s := range []string{inv.Addr(), sess.Addr()} {
		c := redis.NewClient(&redis.Options{Addr: s})
		if err := c.ConfigSet(context.Background(), "requirepass", password).Err(); err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	pay, err := payment.NewServer(payment.Config{MinLatency: time.Millisecond, MaxLatency: 2 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	payHTTP := httptest.NewServer(pay)
	t.Cleanup(payHTTP.Close)
	start := func(pw string) (*checkout.Server, error) {
		srv, err := checkout.New(checkout.Config{InventoryRedis: inv.Addr(), SessionRedis: sess.Addr(), PaymentURL: payHTTP.URL, RedisPassword: pw})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = srv.Close() })
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return srv, srv.Inventory().SetStock(ctx, sku, 3)
	}
	// Redis refuses an unauthenticated client with NOAUTH, or, for a
	// command as long as the stock script, with a protocol error that says
	// so.
	if _, err := start(""); err == nil || !strings.Contains(err.Error(), "NOAUTH") && !strings.Contains(err.Error(), "unauthenticated") {
		t.Fatalf("without the password: %v, want a refusal for want of it", err)
	}
	srv, err := start(password)
	if err != nil {
		t.Fatalf("with the password: %v", err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	resp, err := http.Post(hs.URL+"/checkout", "application/json", strings.NewReader(fmt.Sprintf(`{"checkout_id":"co-1","shopper":"s-1","sku":%q}`, sku)))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "confirmed") {
		t.Errorf("a purchase with both Redis servers behind a password: %d %s", resp.StatusCode, b)
	}
	ready, err := http.Get(hs.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	ready.Body.Close()
	if ready.StatusCode != http.StatusOK {
		t.Errorf("/readyz: %d, want 200 (the session store is reached too)", ready.StatusCode)
	}
}
