package load

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/checkout"
	"github.com/gameday-dev/gameday/checkout/admission"
)

// newServer starts an httptest server (on 127.0.0.1) and closes it when
// the test ends.
func newServer(tb testing.TB, h http.HandlerFunc) *httptest.Server {
	tb.Helper()
	srv := httptest.NewServer(h)
	tb.Cleanup(srv.Close)
	return srv
}

// decodeCheckout reads a request as the checkout does: JSON, strictly.
func decodeCheckout(r *http.Request) (checkout.Request, error) {
	var req checkout.Request
	if r.Method != http.MethodPost || r.URL.Path != "/checkout" || r.Header.Get("Content-Type") != "application/json" {
		return req, errors.New("not POST /checkout with JSON: " + r.Method + " " + r.URL.Path)
	}
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	return req, dec.Decode(&req)
}

// sameRequest compares requests, deadlines as instants.
func sameRequest(a, b checkout.Request) bool {
	da, db := a.Deadline, b.Deadline
	a.Deadline, b.Deadline = time.Time{}, time.Time{}
	return a == b && da.Equal(db)
}

func TestHTTPTarget(t *testing.T) {
	date := time.Now().Add(5 * time.Second).UTC().Format(http.TimeFormat)
	tests := []struct {
		name   string
		code   int
		header map[string]string
		body   string
		want   Answer
		// slack allows for the HTTP date's whole seconds and the time it
		// takes to get here.
		slack time.Duration
	}{
		// The checkout's answers, decoded.
		{
			name: "confirmed", code: 200,
			body: `{"status":"confirmed","checkout_id":"co-1","order":{"checkout_id":"co-1"},"guest":true}`,
			want: Answer{Code: 200, Body: checkout.Response{Status: checkout.OutcomeConfirmed, CheckoutID: "co-1", Order: &checkout.Order{CheckoutID: "co-1"}, Guest: true}},
		},
		{
			name: "degraded", code: 200,
			body: `{"status":"confirmed","guest":true,"degraded":true,"degraded_reasons":["session_store_unavailable"]}`,
			want: Answer{Code: 200, Body: checkout.Response{Status: checkout.OutcomeConfirmed, Guest: true, Degraded: true, DegradedReasons: []string{"session_store_unavailable"}}},
		},
		{name: "declined", code: 402, body: `{"status":"declined"}`, want: Answer{Code: 402, Body: checkout.Response{Status: checkout.OutcomeDeclined}}},
		{name: "sold out", code: 409, body: `{"status":"sold_out"}`, want: Answer{Code: 409, Body: checkout.Response{Status: checkout.OutcomeSoldOut}}},
		{name: "too late", code: 410, body: `{"status":"too_late","reason":"deadline"}`, want: Answer{Code: 410, Body: checkout.Response{Status: checkout.OutcomeTooLate, Reason: "deadline"}}},
		{name: "invalid", code: 400, body: `{"status":"invalid","error":"sku: required"}`, want: Answer{Code: 400, Body: checkout.Response{Status: checkout.OutcomeInvalid, Error: "sku: required"}}},
		// retry_after_ms is exact and wins over the header's whole seconds.
		{
			name: "unavailable", code: 503, header: map[string]string{"Retry-After": "2"},
			body: `{"status":"unavailable","dependency":"inventory","reason":"breaker_open","retry_after_ms":1500}`,
			want: Answer{Code: 503, RetryAfter: 1500 * time.Millisecond, Body: checkout.Response{Status: checkout.OutcomeUnavailable, Dependency: "inventory", Reason: "breaker_open", RetryAfterMS: 1500}},
		},
		// Without it, the header: seconds...
		{
			name: "in progress", code: 409, header: map[string]string{"Retry-After": "3"}, body: `{"status":"in_progress"}`,
			want: Answer{Code: 409, RetryAfter: 3 * time.Second, Body: checkout.Response{Status: checkout.OutcomeInProgress}},
		},
		// ... or an HTTP date.
		{
			name: "Retry-After date", code: 503, header: map[string]string{"Retry-After": date}, body: `{"status":"unavailable"}`,
			want:  Answer{Code: 503, RetryAfter: 5 * time.Second, Body: checkout.Response{Status: checkout.OutcomeUnavailable}},
			slack: 2 * time.Second,
		},
		// A proxy's page in front of the checkout: the status is kept, the
		// body is not the contract's, and it is not a transport error.
		{
			name: "not JSON", code: 502, header: map[string]string{"Content-Type": "text/html"}, body: `<html>bad gateway</html>`,
			want: Answer{Code: 502},
		},
		// A silly Retry-After does not overflow.
		{
			name: "huge Retry-After", code: 503, header: map[string]string{"Retry-After": "99999999999999999"}, body: `{"status":"unavailable"}`,
			want: Answer{Code: 503, RetryAfter: 24 * time.Hour, Body: checkout.Response{Status: checkout.OutcomeUnavailable}},
		},
	}
	deadline := time.Date(2026, 11, 27, 9, 0, 3, 500_000_000, time.UTC)
	sent := checkout.Request{CheckoutID: "co-1", Shopper: "s-1", SKU: "sku-1", Session: "sess-1", Deadline: deadline}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				req, err := decodeCheckout(r)
				if err != nil || !sameRequest(req, sent) {
					t.Errorf("server got %+v, %v; want %+v", req, err, sent)
				}
				for k, v := range tt.header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(tt.code)
				_, _ = w.Write([]byte(tt.body))
			})
			got, err := HTTPTarget(srv.URL+"/", nil).Checkout(context.Background(), sent)
			if err != nil {
				t.Fatalf("Checkout: %v", err)
			}
			if d := got.RetryAfter - tt.want.RetryAfter; d > 0 || d < -tt.slack {
				t.Errorf("retry after %v, want %v", got.RetryAfter, tt.want.RetryAfter)
			}
			got.RetryAfter = tt.want.RetryAfter
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(tt.want)
			if string(gj) != string(wj) {
				t.Errorf("answer %s, want %s", gj, wj)
			}
		})
	}
}

// TestHTTPTargetTransport: no answer is an error, and the attempt's context
// bounds the wait.
func TestHTTPTargetTransport(t *testing.T) {
	t.Run("refused", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		srv.Close()
		if _, err := HTTPTarget(srv.URL, nil).Checkout(context.Background(), checkout.Request{CheckoutID: "co-1"}); err == nil {
			t.Fatal("no error from a closed server")
		}
	})
	t.Run("deadline", func(t *testing.T) {
		release := make(chan struct{})
		srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		})
		defer close(release)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		began := time.Now()
		_, err := HTTPTarget(srv.URL, nil).Checkout(ctx, checkout.Request{CheckoutID: "co-1"})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Checkout: %v, want a deadline error", err)
		}
		if took := time.Since(began); took > time.Second {
			t.Errorf("gave up after %v", took)
		}
	})
}

// TestRunOverHTTP drives a small sale through HTTPTarget at a server that
// keeps the contract: the first attempt of every checkout id is told to come
// back in 20 ms, the second is confirmed. Every shopper confirms on its
// second attempt with the same id, session as chosen.
func TestRunOverHTTP(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	sessions := map[string]string{}
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		req, err := decodeCheckout(r)
		if err != nil {
			w.WriteHeader(400)
			return
		}
		mu.Lock()
		n := seen[req.CheckoutID]
		seen[req.CheckoutID]++
		sessions[req.CheckoutID] = req.Session
		mu.Unlock()
		resp := checkout.Response{Status: checkout.OutcomeConfirmed, CheckoutID: req.CheckoutID, Guest: req.Session == ""}
		if n == 0 {
			resp = checkout.Response{Status: checkout.OutcomeUnavailable, RetryAfterMS: 20}
			w.Header().Set("Retry-After", "1")
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(checkout.StatusCode(resp.Status))
		_ = json.NewEncoder(w).Encode(resp)
	})
	plan := validPlan()
	plan.Stages = []Stage{{Duration: 10 * time.Millisecond, Target: 1000}, {Duration: 100 * time.Millisecond, Target: 1000}}
	plan.MaxShoppers = 200 // about 40 in flight: none dropped
	rep, err := Run(context.Background(), plan, HTTPTarget(srv.URL, nil), Options{})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	choices := Shoppers(plan)
	for i, s := range rep.Shoppers {
		if s.Outcome != OutcomeConfirmed || len(s.Attempts) != 2 || s.Attempts[0].Code != 503 || s.Attempts[0].RetryAfter != 20*time.Millisecond {
			t.Fatalf("shopper %d: %q after %+v", i, s.Outcome, s.Attempts)
		}
		if seen[s.ID] != 2 || sessions[s.ID] != choices[i].Session {
			t.Fatalf("shopper %d: server saw %d attempts, session %q; want 2, %q", i, seen[s.ID], sessions[s.ID], choices[i].Session)
		}
	}
	if !strings.HasPrefix(rep.Shoppers[0].ID, "run1-") || rep.Started != 105 {
		t.Errorf("ids %q..., started %d", rep.Shoppers[0].ID, rep.Started)
	}
}

// TestHTTPTargetToken: a request's token travels in the Waiting-Room-Token
// header, never in the body; an answer's token header becomes
// Answer.Token, unless it is longer than any the checkout signs.
func TestHTTPTargetToken(t *testing.T) {
	long := strings.Repeat("t", admission.MaxTokenLen+1)
	tests := []struct {
		name, sent, answered, want string
	}{
		{"no token either way", "", "", ""},
		{"first attempt: given one", "", "k1.abc.mac", "k1.abc.mac"},
		{"a retry: sends it, gets it back", "k1.abc.mac", "k1.abc.mac", "k1.abc.mac"},
		{"an absurd token is not kept", "", long, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				req, err := decodeCheckout(r) // strict: a token in the body is an unknown field
				if err != nil || req.CheckoutID != "co-1" {
					t.Errorf("server got %+v, %v", req, err)
				}
				if got := r.Header.Get(admission.TokenHeader); got != tt.sent || len(r.Header.Values(admission.TokenHeader)) > 1 {
					t.Errorf("token header %q, want %q", got, tt.sent)
				}
				if tt.answered != "" {
					w.Header().Set(admission.TokenHeader, tt.answered)
				}
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(503)
				_, _ = w.Write([]byte(`{"status":"unavailable","reason":"waiting_room"}`))
			})
			got, err := HTTPTarget(srv.URL, nil).Checkout(context.Background(), checkout.Request{CheckoutID: "co-1", Shopper: "s-1", SKU: "sku-1", Token: tt.sent})
			if err != nil {
				t.Fatalf("Checkout: %v", err)
			}
			if got.Token != tt.want || got.Body.Reason != admission.RefusalWaitingRoom {
				t.Errorf("answer token %q, reason %q; want %q, waiting_room", got.Token, got.Body.Reason, tt.want)
			}
		})
	}
}
