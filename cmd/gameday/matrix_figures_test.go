package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// A drill that fails on wrong amounts is recorded in the matrix with that
// count beside its verdict, every other invariant it judged with its own,
// and those its books could not judge (no stock given) named not checked;
// matrix check and show say the same. The row's hand-written text stays.
func TestMatrixKeepsWrongAmounts(t *testing.T) {
	var mu sync.Mutex
	var carts []string
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		switch r.URL.Path {
		case "/buy":
			var req struct{ Cart string }
			_ = json.NewDecoder(r.Body).Decode(&req)
			carts = append(carts, req.Cart)
		case "/orders", "/charges":
			// Every order costs 1000; its charge took 999.
			amount, status := 1000, ""
			if r.URL.Path == "/charges" {
				amount, status = 999, `, "status": "approved"`
			}
			var items []string
			for _, c := range carts {
				items = append(items, fmt.Sprintf(`{"cart": %q, "amount": %d%s}`, c, amount, status))
			}
			fmt.Fprintf(w, "[%s]", strings.Join(items, ","))
		}
	}))
	defer shop.Close()
	dir := t.TempDir()
	sys := filepath.Join(dir, "gameday.yaml")
	writeFile(t, sys, fmt.Sprintf(`name: shop
base_url: %[1]s
sku: s
purchase: {steps: [{url: /buy, body: '{"cart": {{json .CheckoutID}}}', answers: [{status: 200, outcome: confirmed}]}]}
stores:
  api: {http: "%[1]s"}
books:
  orders: {store: api, http: {path: /orders}, fields: {checkout_id: cart, amount: amount}}
  charges: {store: api, http: {path: /charges}, fields: {checkout_id: cart, status: status, amount: amount}}
  settle_after: 1ms
`, shop.URL))
	writeFile(t, filepath.Join(dir, "drill.yaml"), "name: d\nmatrix: {dependency: none, failure: baseline}\nstock: 5\nload:\n  stages: [{duration: 1s, target: 5}]\n")
	const handwritten = `version: 1
rows:
  - dependency: none
    failure: baseline
    expectation: Shoppers pay what they are told.   # ours
    cadence: weekly
    scenario: drill.yaml
`
	mfile := filepath.Join(dir, "m.yaml")
	writeFile(t, mfile, handwritten)
	var stdout, stderr bytes.Buffer
	code := run([]string{"run", "--system", sys, "--runs-dir", filepath.Join(dir, "runs"), "--journal", filepath.Join(dir, "journal.json"),
		"--predict-runs", "-1", "--matrix", mfile, filepath.Join(dir, "drill.yaml")}, &stdout, &stderr)
	if code != exitFailed {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitFailed, stdout.String(), stderr.String())
	}
	got, err := os.ReadFile(mfile)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	n := len(carts)
	mu.Unlock()
	wrong := fmt.Sprintf("        wrong_amounts: %d\n", n)
	notChecked := "        not_checked: [oversold, lost_units, units_created, stranded_units, sold_without_order, orders_beyond_sold, accepted_not_finished]\n"
	if n == 0 || !strings.HasPrefix(string(got), handwritten) || !strings.Contains(string(got), "      verdict: fail\n") ||
		!strings.Contains(string(got), wrong) || !strings.Contains(string(got), notChecked) || strings.Contains(string(got), "oversold: 0") {
		t.Fatalf("the matrix after the drill:\n%s\nwant %q and %q", got, wrong, notChecked)
	}
	books := fmt.Sprintf("wrong_amounts %d; not checked: oversold, lost_units, units_created, stranded_units, sold_without_order, orders_beyond_sold, accepted_not_finished", n)
	stdout.Reset()
	if err := matrixCmd([]string{"check", mfile}, &stdout, &stderr); err == nil || !strings.Contains(stdout.String(), "failed; books: "+books+"\n") {
		t.Errorf("matrix check: %v\n%s", err, stdout.String())
	}
	stdout.Reset()
	if err := matrixCmd([]string{"show", mfile}, &stdout, &stderr); err != nil || !regexp.MustCompile(`fail +.* `+regexp.QuoteMeta(books)+` +failed`).MatchString(stdout.String()) {
		t.Errorf("matrix show: %v\n%s", err, stdout.String())
	}
}
