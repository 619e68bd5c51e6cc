package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// booksSecret is what the books' URL carries in these tests.
const booksSecret = "sk_live_51HqBooksSecret"

// drillBooks runs "gameday run --system FILE" on a one-second baseline of
// a shop at url whose books are given (the lines under books:), with
// $BOOKS_KEY set to booksSecret, and returns the exit code, what it
// printed (stdout and stderr) and every file the run wrote.
func drillBooks(t *testing.T, url, books string) (code int, printed string, files map[string]string) {
	t.Helper()
	t.Setenv("BOOKS_KEY", booksSecret)
	return drillSystem(t, shopSystem(url, books+"\n  settle_after: 1ms\n"), "stock: 5\nload:\n  stages: [{duration: 1s, target: 5}]\n")
}

// shopSystem is the system file of a shop at url that buys with one POST
// /buy answered 200, whose store api is the shop itself, and whose books
// (and anything after them) are tail: the lines under books:.
func shopSystem(url, tail string) string {
	return fmt.Sprintf(`name: shop
base_url: %[1]s
sku: s
purchase: {steps: [{url: /buy, answers: [{status: 200, outcome: confirmed}]}]}
stores:
  api: {http: "%[1]s"}
books:
%[2]s`, url, tail)
}

// drillSystem runs "gameday run --system FILE" of the system file given
// on a baseline drill whose settings after its name and matrix row are
// scenario, and returns the exit code, what it printed (stdout and
// stderr) and every file the run wrote.
func drillSystem(t *testing.T, system, scenario string) (code int, printed string, files map[string]string) {
	t.Helper()
	dir := t.TempDir()
	sys := filepath.Join(dir, "gameday.yaml")
	writeFile(t, sys, system)
	sc := filepath.Join(dir, "drill.yaml")
	writeFile(t, sc, "name: d\nmatrix: {dependency: none, failure: baseline}\n"+scenario)
	runs := filepath.Join(dir, "runs")
	var stdout, stderr bytes.Buffer
	code = run([]string{"run", "--system", sys, "--runs-dir", runs, "--journal", filepath.Join(dir, "journal.json"), "--predict-runs", "-1", sc}, &stdout, &stderr)
	files = map[string]string{}
	_ = filepath.WalkDir(runs, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			files[p] = string(b)
		}
		return nil
	})
	return code, stdout.String() + stderr.String(), files
}

// A books URL that carries a secret, whose store fails: the drill stops
// (exit 2) and says why, and neither what it printed nor run.json nor the
// reports hold the secret, not even where the store's answer echoed it.
func TestBooksSecretsStayOutOfTheRun(t *testing.T) {
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/stock" {
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, `{"error": "bad key %s"}`, r.URL.Query().Get("api_key"))
		}
	}))
	defer shop.Close()
	code, printed, files := drillBooks(t, shop.URL, `  stock: {available: {store: api, http: {path: "/stock?api_key=${BOOKS_KEY}"}, json: available}}`)
	if code != exitUsage || !strings.Contains(printed, "GET "+shop.URL+"/stock?api_key=xxxxx answered 500") {
		t.Errorf("exit %d, want %d; printed:\n%s", code, exitUsage, printed)
	}
	if strings.Contains(printed, booksSecret) {
		t.Errorf("the secret was printed:\n%s", printed)
	}
	if len(files) == 0 {
		t.Fatal("the run wrote no file")
	}
	for p, b := range files {
		if strings.Contains(b, booksSecret) {
			t.Errorf("%s holds the secret", p)
		}
	}
}

// A store that answers a redirect: the drill stops (exit 2) saying so,
// and nothing reaches the host it pointed at.
func TestBooksRedirectStopsTheDrill(t *testing.T) {
	var elsewhere atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		fmt.Fprint(w, `{"available": 5}`)
	}))
	defer other.Close()
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/stock" {
			http.Redirect(w, r, other.URL+"/stock?token="+booksSecret, http.StatusTemporaryRedirect)
		}
	}))
	defer shop.Close()
	code, printed, _ := drillBooks(t, shop.URL, `  stock: {available: {store: api, http: {path: /stock}, json: available}}`)
	want := "GET " + shop.URL + "/stock answered 307, a redirect to " + other.URL + "/stock?token=xxxxx: gameday follows no redirect from a store (store api, "
	if code != exitUsage || !strings.Contains(printed, want) || strings.Contains(printed, booksSecret) {
		t.Errorf("exit %d, want %d and %q; printed:\n%s", code, exitUsage, want, printed)
	}
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("%d requests reached the host the redirect pointed at", n)
	}
}

// A stock fact answered NaN stops the drill before the load (exit 2),
// naming the fact and the store; no shopper is sent.
func TestBooksNaNStopsTheDrill(t *testing.T) {
	var buys atomic.Int64
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/buy":
			buys.Add(1)
		case "/stock":
			fmt.Fprint(w, `{"available": "NaN"}`)
		}
	}))
	defer shop.Close()
	code, printed, _ := drillBooks(t, shop.URL, `  stock: {available: {store: api, http: {path: /stock}, json: available}}`)
	want := "read books.stock.available: store api (http): want a number, got NaN"
	if code != exitUsage || !strings.Contains(printed, want) {
		t.Errorf("exit %d, want %d and %q; printed:\n%s", code, exitUsage, want, printed)
	}
	if n := buys.Load(); n != 0 {
		t.Errorf("%d purchases were sent", n)
	}
}

// Counts-only books (a total and a count sold) validate, and validate
// says what they judge and what they do not, and why.
func TestValidateCountsOnlyBooks(t *testing.T) {
	file := filepath.Join(t.TempDir(), "gameday.yaml")
	writeFile(t, file, `name: seckill
base_url: http://127.0.0.1:8080
sku: s
purchase: {steps: [{url: /buy, answers: [{status: 200, outcome: confirmed}]}]}
stores: {kv: {redis: "127.0.0.1:6379"}}
books:
  stock:
    initial: {store: kv, redis: [HGET, "sale:{{.SKU}}", total]}
    sold: {store: kv, redis: [HGET, "sale:{{.SKU}}", sold]}
  settle_after: 2s
`)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"validate", "--system", file}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	for _, want := range []string{
		"ok  seckill (" + file + ")",
		"    judges: oversold\n",
		"    not judged: lost_units (needs books.stock (available, and initial or available before the load) and the units sold)",
		"    not judged: units_created (needs books.stock (available",
		"    not judged: stranded_units (needs books.stock.reserved",
	} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("validate printed no %q:\n%s", want, stdout.String())
		}
	}
}
