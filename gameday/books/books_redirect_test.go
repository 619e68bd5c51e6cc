package books_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/books"
	"github.com/gameday-dev/gameday/gameday/system"
)

// secret is what a store's URL, header or DSN carries in these tests:
// no error may show it.
const secret = "sk_live_51HqSecret"

// A store that answers a redirect is not followed: the request's body and
// its headers (the store's token) never reach the other host, whose answer
// is never read as the store's. Every read and setup action fails with an
// error that says the store answered a redirect, names the store and
// where the file gives it, and shows the Location redacted.
func TestStoreRedirectIsNotFollowed(t *testing.T) {
	var elsewhere atomic.Int64
	var leaked atomic.Value
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		b, _ := io.ReadAll(r.Body)
		leaked.Store(r.Header.Get("X-Api-Key") + " " + string(b))
		// What a store would answer: a ledger that balances.
		fmt.Fprint(w, `{"available": 5, "open": 0, "orders": []}`)
	}))
	defer other.Close()
	store := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			w.WriteHeader(http.StatusOK) // the check that the store answers
			return
		}
		// 307 and 308 keep the method and the body.
		code := http.StatusTemporaryRedirect
		if r.Method == http.MethodPost {
			code = http.StatusPermanentRedirect
		}
		w.Header().Set("Location", other.URL+r.URL.Path+"?token=other-"+secret)
		w.WriteHeader(code)
	}))
	defer store.Close()
	sys, err := system.Parse("shop.yaml", []byte(`name: shop
base_url: http://127.0.0.1:1
sku: s
purchase: {steps: [{url: /, answers: [{outcome: confirmed}]}]}
stores:
  api:
    http: "`+store.URL+`"
    headers: {X-Api-Key: "${KEY}"}
setup:
  - {store: api, http: {method: POST, path: /reset, body: '{"run": "{{.Run}}"}'}}
books:
  stock: {available: {store: api, http: {path: "/stock?api_key=${KEY}"}, json: available}}
  orders: {store: api, http: {path: /orders}, items: orders}
  settled: {store: api, http: {path: /settled}, json: open}
`), map[string]string{"KEY": secret})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r, err := books.Open(ctx, sys, system.Values{SKU: "s", Run: "r1"}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	where := "(store api, shop.yaml:6: stores.api)"
	check := func(what string, err error, path string) {
		t.Helper()
		switch {
		case err == nil:
			t.Errorf("%s: no error, though the store answered a redirect", what)
		case !strings.Contains(err.Error(), " a redirect to "+other.URL+path+"?token=xxxxx: gameday follows no redirect from a store "+where):
			t.Errorf("%s: %v\nwant the redirect, its Location redacted, and the store named", what, err)
		case strings.Contains(err.Error(), secret):
			t.Errorf("%s: the error shows the secret: %v", what, err)
		}
	}
	err = r.Setup(ctx)
	check("setup", err, "/reset")
	if err != nil && !strings.Contains(err.Error(), "shop.yaml:10: setup[0]: POST "+store.URL+"/reset answered 308,") {
		t.Errorf("setup: %v", err)
	}
	_, err = r.Count(ctx, sys.Books.Stock.Available)
	check("stock", err, "/stock")
	if err != nil && !strings.Contains(err.Error(), "GET "+store.URL+"/stock?api_key=xxxxx answered 307,") {
		t.Errorf("stock: %v", err)
	}
	_, err = r.Rows(ctx, sys.Books.Orders, []string{"checkout_id"})
	check("orders", err, "/orders")
	_, _, err = r.Settled(ctx, sys.Books.Settled)
	check("settled", err, "/settled")
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("%d requests reached the host the redirects pointed at (it saw %q)", n, leaked.Load())
	}
}

// A books error never shows a secret: not the query string of the URL it
// asked, not what the store echoed of it, not a header's value, not a
// password in a store's URL or DSN. What locates the problem stays.
func TestBooksErrorsHideSecrets(t *testing.T) {
	store := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			return
		}
		// An error answer that echoes what it was sent.
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, `{"error": "no stock for key %s (auth %s)"}`, r.URL.Query().Get("api_key"), r.Header.Get("Authorization"))
	}))
	defer store.Close()
	sys, err := system.Parse("shop.yaml", []byte(`name: shop
base_url: http://127.0.0.1:1
sku: s
purchase: {steps: [{url: /, answers: [{outcome: confirmed}]}]}
stores:
  api:
    http: "`+store.URL+`"
    headers: {Authorization: "Bearer ${KEY}-auth"}
books:
  stock: {available: {store: api, http: {path: "/stock?sku={{.SKU}}&api_key=${KEY}"}, json: available}}
  orders: {store: api, http: {path: "/orders?api_key=${KEY}"}}
  settled: {store: api, http: {path: "/settled?api_key=${KEY}"}}
`), map[string]string{"KEY": secret})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r, err := books.Open(ctx, sys, system.Values{SKU: "tee", Run: "r1"}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_, err = r.Count(ctx, sys.Books.Stock.Available)
	if err == nil || !strings.Contains(err.Error(), "GET "+store.URL+"/stock?sku=xxxxx&api_key=xxxxx answered 500: ") || strings.Contains(err.Error(), secret) {
		t.Errorf("stock: %v", err)
	}
	_, err = r.Rows(ctx, sys.Books.Orders, []string{"checkout_id"})
	if err == nil || !strings.Contains(err.Error(), "/orders?api_key=xxxxx answered 500") || strings.Contains(err.Error(), secret) {
		t.Errorf("orders: %v", err)
	}
	_, _, err = r.Settled(ctx, sys.Books.Settled)
	if err == nil || !strings.Contains(err.Error(), "/settled?api_key=xxxxx answered 500") || strings.Contains(err.Error(), secret) {
		t.Errorf("settled: %v", err)
	}

	// Stores that cannot be reached, or whose DSN does not parse, each
	// with a secret in it: the error names the store, not the secret.
	for _, c := range []struct{ kind, addr, want string }{
		{"http", "http://127.0.0.1:1/?api_key=" + secret, "store x (http): connect: "},
		{"http", "http://shop:" + secret + "@127.0.0.1:1/", "store x (http): connect: "},
		{"postgres", "postgres://shop:" + secret + "@127.0.0.1:1/shop?sslmode=disable&connect_timeout=1", "store x (postgres): connect: "},
		{"postgres", "postgres://shop@127.0.0.1:1/shop?sslmode=disable&connect_timeout=1&password=" + secret, "store x (postgres): connect: "},
		{"postgres", "postgres://shop@127.0.0.1:port/shop?password=" + secret, "store x (postgres): "},
		{"postgres", "host=127.0.0.1 port=1 user=shop password=" + secret + " connect_timeout=1", "store x (postgres): connect: "},
		{"mysql", "shop:" + secret + "@tcp(127.0.0.1:1)/shop?timeout=1s", "store x (mysql): connect: "},
		{"redis", "redis://shop:" + secret + "@127.0.0.1:1/0", "store x (redis): connect: "},
		{"redis", "redis://shop:" + secret + "@127.0.0.1:1/db-" + secret, "store x (redis): "},
	} {
		sys, err := system.Parse("x.yaml", []byte(fmt.Sprintf(`name: x
base_url: http://127.0.0.1:1
sku: s
purchase: {steps: [{url: /, answers: [{outcome: confirmed}]}]}
stores: {x: {%s: %q}}
`, c.kind, c.addr)), nil)
		if err != nil {
			t.Fatalf("%s: %v", c.addr, err)
		}
		_, err = books.Open(ctx, sys, system.Values{}, 3*time.Second)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), secret) {
			t.Errorf("%s: %v\nwant %q, and no secret", c.addr, err, c.want)
		}
	}
}
