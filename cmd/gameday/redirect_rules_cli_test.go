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
	"sync/atomic"
	"testing"
)

// drillRedirect runs "gameday run --system FILE scenario.yaml" on a
// one-second baseline of a shop at url whose purchase sends an X-Api-Key
// and reads its answers by the given rules, and returns the exit code,
// what it printed and run.json.
func drillRedirect(t *testing.T, url, answers string) (int, string, []byte) {
	t.Helper()
	dir := t.TempDir()
	sys := filepath.Join(dir, "gameday.yaml")
	writeFile(t, sys, fmt.Sprintf(`name: shop
base_url: %s
sku: s
purchase:
  steps:
    - url: /buy
      headers: {X-Api-Key: key-for-the-checkout-only}
      body: '{"id":"{{.CheckoutID}}"}'
      answers: %s
`, url, answers))
	sc := filepath.Join(dir, "drill.yaml")
	writeFile(t, sc, "name: d\nmatrix: {dependency: none, failure: baseline}\nstock: 5\nload:\n  stages: [{duration: 1s, target: 5}]\n")
	runs := filepath.Join(dir, "runs")
	var stdout, stderr bytes.Buffer
	code := run([]string{"run", "--system", sys, "--runs-dir", runs, "--journal", filepath.Join(dir, "journal.json"), "--predict-runs", "-1", sc}, &stdout, &stderr)
	found, _ := filepath.Glob(filepath.Join(runs, "*", "run.json"))
	if len(found) != 1 {
		t.Fatalf("exit %d, run.json: %v\n%s%s", code, found, stdout.String(), stderr.String())
	}
	b, err := os.ReadFile(found[0])
	if err != nil {
		t.Fatal(err)
	}
	return code, stdout.String() + stderr.String(), b
}

// A checkout that answers every purchase with a 308 of its own body to
// another host, drilled through the command twice: the other host gets
// no request (no X-Api-Key) either time. Without a rule for 308, every
// shopper ends in error and run.json shows the 308 among the unmatched
// with its body as the sample; with a rule that reads 308 as sold_out,
// every shopper is sold_out and nothing is unmatched. The shoppers were
// confirmed by the other host's answer when the load client followed it.
func TestPurchaseRedirectThroughTheCommand(t *testing.T) {
	var reached atomic.Int64
	var key atomic.Value
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		key.Store(r.Header.Get("X-Api-Key"))
		w.WriteHeader(http.StatusOK)
	}))
	defer other.Close()
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/buy" {
			w.Header().Set("Location", other.URL+"/buy")
			w.WriteHeader(http.StatusPermanentRedirect)
			fmt.Fprint(w, `{"moved":"to the overflow shop"}`)
		}
	}))
	defer shop.Close()
	type record struct {
		Outcomes  map[string]int `json:"outcomes"`
		Unmatched []struct {
			Code   int    `json:"code"`
			Sample string `json:"sample"`
		} `json:"unmatched"`
	}
	for _, tc := range []struct {
		name, answers string
		outcome       string
		unmatched     bool
	}{
		// No rule names 308: an error, with its sample.
		{"unmatched", "[{status: 200, outcome: confirmed}]", "error", true},
		// A rule names 308: what it says.
		{"ruled", "[{status: 200, outcome: confirmed}, {status: 308, outcome: sold_out}]", "sold_out", false},
	} {
		code, printed, b := drillRedirect(t, shop.URL, tc.answers)
		var rec record
		if err := json.Unmarshal(b, &rec); err != nil {
			t.Fatal(err)
		}
		total := 0
		for _, n := range rec.Outcomes {
			total += n
		}
		if total == 0 || rec.Outcomes[tc.outcome] != total {
			t.Errorf("%s: exit %d, outcomes %v, want every shopper %s\n%s", tc.name, code, rec.Outcomes, tc.outcome, printed)
		}
		switch {
		case tc.unmatched && (len(rec.Unmatched) != 1 || rec.Unmatched[0].Code != 308 || !strings.Contains(rec.Unmatched[0].Sample, "overflow shop")):
			t.Errorf("%s: unmatched %+v, want the 308 with its sample", tc.name, rec.Unmatched)
		case !tc.unmatched && len(rec.Unmatched) != 0:
			t.Errorf("%s: unmatched %+v, want none", tc.name, rec.Unmatched)
		}
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("%d requests reached the host the redirect pointed at (X-Api-Key %q)", n, key.Load())
	}
}
