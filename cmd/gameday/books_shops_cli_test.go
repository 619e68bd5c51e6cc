package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// A charge of the run that no shopper made fails a sale across two shops,
// as it fails a sale of one: the provider the shops share holds, beside a
// charge for every purchase, one more under a checkout id of the run that
// no shopper has. The drill exits 1, run.json counts it once, and the
// summary names its checkout id.
func TestStrayChargeFailsASaleAcrossShops(t *testing.T) {
	var mu sync.Mutex
	carts := map[string][]string{} // by shop
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case r.URL.Path == "/buy":
			var req struct{ Cart string }
			_ = json.NewDecoder(r.Body).Decode(&req)
			carts[r.Header.Get("Shop")] = append(carts[r.Header.Get("Shop")], req.Cart)
		case strings.HasPrefix(r.URL.Path, "/orders/"):
			var items []string
			for _, c := range carts[strings.TrimPrefix(r.URL.Path, "/orders/")] {
				items = append(items, fmt.Sprintf(`{"cart": %q}`, c))
			}
			fmt.Fprintf(w, "[%s]", strings.Join(items, ","))
		case r.URL.Path == "/charges":
			var items []string
			for _, cs := range carts {
				for _, c := range cs {
					items = append(items, fmt.Sprintf(`{"cart": %q, "status": "approved"}`, c))
					// One charge more, of this run, that no shopper made.
					if len(items) == 1 {
						stray := c[:strings.LastIndex(c, "-")] + "-999999"
						items = append(items, fmt.Sprintf(`{"cart": %q, "status": "approved"}`, stray))
					}
				}
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
purchase: {steps: [{url: /buy, headers: {Shop: "{{.Shop}}"}, body: '{"cart": {{json .CheckoutID}}}', answers: [{status: 200, outcome: confirmed}]}]}
stores:
  api: {http: "%[1]s"}
books:
  orders: {store: api, http: {path: "/orders/${SHOP}"}, fields: {checkout_id: cart}}
  charges: {store: api, http: {path: /charges}, fields: {checkout_id: cart, status: status}}
  settle_after: 1ms
pods:
  pod-1: {SHOP: a}
  pod-2: {SHOP: b}
`, shop.URL))
	sc := filepath.Join(dir, "drill.yaml")
	writeFile(t, sc, "name: d\nmatrix: {dependency: none, failure: baseline}\nstock: 5\nshops:\n  - {name: a, pod: pod-1}\n  - {name: b, pod: pod-2}\nload:\n  stages: [{duration: 1s, target: 8}]\n")
	runs := filepath.Join(dir, "runs")
	var stdout, stderr bytes.Buffer
	code := run([]string{"run", "--system", sys, "--runs-dir", runs, "--journal", filepath.Join(dir, "journal.json"), "--predict-runs", "-1", sc}, &stdout, &stderr)
	mu.Lock()
	a, b := len(carts["a"]), len(carts["b"])
	mu.Unlock()
	if a == 0 || b == 0 {
		t.Fatalf("the sale did not reach both shops (a %d, b %d)\n%s%s", a, b, stdout.String(), stderr.String())
	}
	if code != exitFailed || !strings.Contains(stdout.String(), "charges without order is at most 0") {
		t.Errorf("exit %d, want %d (a charge without order)\n%s%s", code, exitFailed, stdout.String(), stderr.String())
	}
	files, _ := filepath.Glob(filepath.Join(runs, "*", "run.json"))
	if len(files) != 1 {
		t.Fatalf("run.json: %v", files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Invariants struct {
			ChargesWithoutOrder int `json:"charges_without_order"`
		} `json:"invariants"`
		Notes []string `json:"notes"`
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Invariants.ChargesWithoutOrder != 1 {
		t.Errorf("charges_without_order %d, want 1", rec.Invariants.ChargesWithoutOrder)
	}
	if !strings.Contains(strings.Join(rec.Notes, "\n"), "1 charge and 0 orders of this run belong to no shop's shopper (checkout ids ") {
		t.Errorf("notes: %q", rec.Notes)
	}
}
