package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// A checkout that answers every purchase with a redirect to another host,
// drilled through the command: the other host receives nothing, and the
// run reads the 307 as the checkout's answer — no rule names it, so every
// shopper ends in error and run.json shows the 307 among the answers no
// rule understood, with its sample. Before, the shoppers were confirmed by
// the other host.
func TestPurchaseRedirectIsJudgedAsTheAnswer(t *testing.T) {
	var elsewhere atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
	}))
	defer other.Close()
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/buy":
			http.Redirect(w, r, other.URL+"/buy", http.StatusTemporaryRedirect)
		case "/stock":
			fmt.Fprint(w, `{"available": 5}`)
		}
	}))
	defer shop.Close()
	code, printed, files := drillBooks(t, shop.URL, `  stock: {available: {store: api, http: {path: /stock}, json: available}}`)
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("%d requests reached the host the redirect pointed at", n)
	}
	var rec struct {
		Outcomes  map[string]int `json:"outcomes"`
		Unmatched []struct {
			Code   int    `json:"code"`
			Sample string `json:"sample"`
		} `json:"unmatched"`
	}
	for p, b := range files {
		if filepath.Base(p) == "run.json" {
			if err := json.Unmarshal([]byte(b), &rec); err != nil {
				t.Fatal(err)
			}
		}
	}
	if rec.Outcomes["confirmed"] != 0 || rec.Outcomes["error"] == 0 || len(rec.Unmatched) != 1 || rec.Unmatched[0].Code != 307 {
		t.Errorf("exit %d, outcomes %v, unmatched %+v: want every shopper in error on an unmatched 307\n%s", code, rec.Outcomes, rec.Unmatched, printed)
	}
	if !strings.Contains(printed, "307") {
		t.Errorf("the output does not name the 307:\n%s", printed)
	}
}
