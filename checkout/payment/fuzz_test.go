package payment

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// FuzzChargeRequest posts arbitrary bodies to POST /charges on a fresh
// server: body a, then b, then a again. The server must never panic, must
// answer only 201, 200, 400 or 409 with a JSON body, and must keep its
// idempotency promises.
func FuzzChargeRequest(f *testing.F) {
	seeds := [][2]string{
		{`{"key":"k","amount_cents":1299,"shopper":"s-1","sku":"sku-1"}`, `{"key":"k","amount_cents":1299,"shopper":"s-1","sku":"sku-1"}`},
		{`{"key":"k","amount_cents":1299,"shopper":"s-1"}`, `{"key":"k","amount_cents":1,"shopper":"s-1"}`},
		{`{"key":"k","amount_cents":1299,"shopper":"s-1"}`, `{"key":"k2","amount_cents":1299,"shopper":"s-1"}`},
		{`{"key":"","amount_cents":0}`, `null`},
		{`{"key":"k","amount_cents":"12","shopper":1}`, `[{"key":"k"}]`},
		{`{"key":"k","amount_cents":1e3,"shopper":"s"}`, `{"key":"k","amount_cents":-1,"shopper":"s"}`},
		{`{"KEY":"k","Amount_Cents":5,"shopper":"s","x":1}`, `{"key":"k","amount_cents":5,"shopper":"s"}{}`},
		{`{"key":"\u0000","amount_cents":9223372036854775807,"shopper":"\ud800"}`, ``},
	}
	for _, s := range seeds {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		s, err := NewServer(Config{DeclineRate: 0.3, Seed: 1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		post := func(body []byte) (int, map[string]any) {
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/charges", bytes.NewReader(body)))
			switch rec.Code {
			case http.StatusCreated, http.StatusOK, http.StatusBadRequest, http.StatusConflict:
			default:
				t.Fatalf("body %q: answer %d %s", body, rec.Code, rec.Body)
			}
			var m map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
				t.Fatalf("body %q: answer %d %q is not a JSON object: %v", body, rec.Code, rec.Body, err)
			}
			return rec.Code, m
		}

		codeA, chA := post(a)
		if codeA != http.StatusCreated && codeA != http.StatusBadRequest {
			t.Fatalf("first body on a fresh server answered %d", codeA)
		}
		if msg, _ := chA["error"].(string); codeA == http.StatusBadRequest && msg == "" {
			t.Fatalf("400 without an error message")
		}
		codeB, _ := post(b)
		codeA2, chA2 := post(a)
		if codeA == http.StatusBadRequest && codeA2 != http.StatusBadRequest {
			t.Fatalf("bad body answered 400 then %d", codeA2)
		}
		if codeA == http.StatusCreated {
			if codeA2 != http.StatusOK || chA2["id"] != chA["id"] {
				t.Fatalf("replay answered %d %v, want 200 with charge %v", codeA2, chA2, chA["id"])
			}
		}
		want := 0
		for _, c := range []int{codeA, codeB} {
			if c == http.StatusCreated {
				want++
			}
		}
		if got := len(s.Charges()); got != want {
			t.Fatalf("%d charges recorded after %d answers 201", got, want)
		}
	})
}
