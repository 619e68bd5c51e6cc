package checkout_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/checkout"
	"github.com/gameday-dev/gameday/checkout/admission"
	"github.com/gameday-dev/gameday/checkout/payment"
)

var testKey = admission.Key{ID: "t1", Secret: []byte("a test secret of 32 bytes, no...")}

// send posts req with an optional waiting-room token on ctx; it returns the
// answer and the token header of the answer. An error is the client's
// (the shopper left).
func (e *env) send(ctx context.Context, req checkout.Request, token string) (answer, string, error) {
	e.t.Helper()
	if req.SKU == "" {
		req.SKU = sku
	}
	b, _ := json.Marshal(req)
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url+"/checkout", bytes.NewReader(b))
	if err != nil {
		e.t.Fatal(err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	if token != "" {
		hreq.Header.Set(admission.TokenHeader, token)
	}
	start := time.Now()
	resp, err := e.hc.Do(hreq)
	if err != nil {
		return answer{}, "", err
	}
	defer resp.Body.Close()
	a := answer{code: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), took: time.Since(start)}
	if err := json.NewDecoder(resp.Body).Decode(&a.body); err != nil {
		e.t.Fatalf("decode checkout answer (%d): %v", resp.StatusCode, err)
	}
	return a, resp.Header.Get(admission.TokenHeader), nil
}

func (e *env) admission() admission.Stats {
	e.t.Helper()
	resp, err := e.hc.Get(e.url + "/admin/admission")
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var s admission.Stats
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil || resp.StatusCode != http.StatusOK {
		e.t.Fatalf("GET /admin/admission: %d %v", resp.StatusCode, err)
	}
	return s
}

// metric reads one unlabelled series from /metrics.
func (e *env) metric(name string) string {
	e.t.Helper()
	resp, err := e.hc.Get(e.url + "/metrics")
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for line := range strings.Lines(string(body)) {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return strings.TrimSpace(v)
		}
	}
	e.t.Fatalf("no %s in /metrics", name)
	return ""
}

// The lottery lets N in and answers everyone else at once with 503
// waiting_room and Retry-After; the place is free again once one of them
// answers. The admin endpoint and the metrics count it.
func TestLotteryRefusesAtOnceWhenFull(t *testing.T) {
	const n = 2
	e := newEnv(t, envOptions{stock: 10,
		cfg: checkout.Config{Admission: admission.Config{Mode: admission.ModeLottery, InProgress: n}},
		// Each charge takes 800ms: the first n stay in progress meanwhile.
		payment: payment.Config{MinLatency: 800 * time.Millisecond, MaxLatency: 800 * time.Millisecond}})
	var wg sync.WaitGroup
	held := make([]answer, n)
	for i := range n {
		wg.Go(func() { held[i] = e.post(shopper(i)) })
	}
	eventually(t, 5*time.Second, func() (bool, string) {
		s := e.admission()
		return s.InProgress == n, fmt.Sprintf("admission %+v", s)
	})
	a, token, _ := e.send(context.Background(), shopper(9), "")
	if a.code != http.StatusServiceUnavailable || a.body.Status != checkout.OutcomeUnavailable || a.body.Reason != admission.RefusalWaitingRoom ||
		a.retryAfter != "1" || a.body.RetryAfterMS != 1000 || token != "" {
		t.Errorf("with %d in progress: %d %+v, Retry-After %q, token %q", n, a.code, a.body, a.retryAfter, token)
	}
	if a.took > 400*time.Millisecond {
		t.Errorf("the waiting-room answer took %s: it must not wait for a place", a.took)
	}
	wg.Wait()
	for i, h := range held {
		if h.body.Status != checkout.OutcomeConfirmed {
			t.Errorf("held shopper %d: %+v", i, h.body)
		}
	}
	if a := e.post(shopper(9)); a.body.Status != checkout.OutcomeConfirmed {
		t.Errorf("after the room emptied: %+v", a.body)
	}
	s := e.admission()
	if s.Mode != admission.ModeLottery || s.InProgress != 0 || s.MaxInProgress != n || s.WaitingRoomAnswers != 1 || s.Admitted != n+1 {
		t.Errorf("admission stats %+v", s)
	}
	if got := e.metric("gameday_admission_max_in_progress"); got != fmt.Sprint(n) {
		t.Errorf("max in progress metric %s, want %d", got, n)
	}
	if got := e.metric("gameday_admission_waiting_room_answers_total"); got != "1" {
		t.Errorf("waiting room answers metric %s, want 1", got)
	}
	resp, err := e.hc.Post(e.url+"/admin/admission/reset-max", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if s := e.admission(); s.MaxInProgress != 0 {
		t.Errorf("after reset-max: max %d", s.MaxInProgress)
	}
}

// The fair room admits a first attempt at once while it has a place free
// and nobody waiting, with a token. Once full, it answers a first attempt
// with a token and 503; the same shopper presenting it is admitted once the
// threshold passes its stamp. A forged token, or the token presented with
// another checkout id or by another shopper, gets 400. Nothing is charged
// before admission.
func TestFairIssuesTokenThenAdmits(t *testing.T) {
	e := newEnv(t, envOptions{stock: 10, cfg: checkout.Config{Admission: admission.Config{
		Mode: admission.ModeFair, InProgress: 1, Tick: 10 * time.Millisecond, Keys: []admission.Key{testKey},
	}}})
	at, atToken, _ := e.send(context.Background(), shopper(0), "")
	if at.body.Status != checkout.OutcomeConfirmed || atToken == "" {
		t.Fatalf("first attempt in an empty room: %d %+v, token %q; want confirmed at once, with a token", at.code, at.body, atToken)
	}
	// Hold the one place, as a checkout in progress would.
	room := e.checkout.Admission()
	if d := room.Admit("co-hold", ""); !d.Admitted {
		t.Fatalf("holding the place: %+v", d)
	}
	first, token, _ := e.send(context.Background(), shopper(1), "")
	if first.code != http.StatusServiceUnavailable || first.body.Reason != admission.RefusalWaitingRoom || token == "" || first.retryAfter == "" {
		t.Fatalf("first attempt: %d %+v, token %q, Retry-After %q", first.code, first.body, token, first.retryAfter)
	}
	if n := len(e.payment.Charges()); n != 1 {
		t.Fatalf("%d charges before shopper 1's admission, want shopper 0's alone", n)
	}
	for _, bad := range []struct {
		name, id, shopper, token string
	}{
		{"forged", "co-1", "s-1", "t1.abc.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"},
		{"replayed for another checkout", "co-2", "s-1", token},
		{"presented by another shopper", "co-1", "s-9", token},
	} {
		req := shopper(1)
		req.CheckoutID, req.Shopper = bad.id, bad.shopper
		a, _, _ := e.send(context.Background(), req, bad.token)
		if a.code != http.StatusBadRequest || a.body.Status != checkout.OutcomeInvalid || a.body.Reason != admission.RefusalTokenInvalid {
			t.Errorf("%s token: %d %+v", bad.name, a.code, a.body)
		}
	}
	room.Done() // the place is free: the tick calls shopper 1
	var last answer
	eventually(t, 5*time.Second, func() (bool, string) {
		var echoed string
		last, echoed, _ = e.send(context.Background(), shopper(1), token)
		if echoed != token {
			t.Fatalf("answer carried token %q, want the one presented", echoed)
		}
		return last.body.Status == checkout.OutcomeConfirmed, fmt.Sprintf("last answer %d %+v", last.code, last.body)
	})
	s := e.admission()
	if s.TokensIssued != 3 || s.TokensRefused != 3 || s.Admitted != 3 || s.NowServing.IsZero() {
		t.Errorf("admission stats %+v, want 3 tokens issued and admitted (shopper 0, the place held, shopper 1)", s)
	}
	if b := e.books(); len(b.ledger.Orders) != 2 || b.approved != 2 {
		t.Errorf("books: %d orders, %d charges", len(b.ledger.Orders), b.approved)
	}
}

// Whether the shopper's deadline counts depends on the mode: queue (and
// the other detached modes) ignores it, deadline honours it, refusing a
// charge with less than MinPaymentTime left.
func TestDeadlineByMode(t *testing.T) {
	tests := []struct {
		name string
		mode admission.Mode
		left time.Duration // deadline - now when sent
		want checkout.Outcome
	}{
		{"none: past deadline", admission.ModeNone, -time.Second, checkout.OutcomeTooLate},
		{"none spelled out: past deadline", "none", -time.Second, checkout.OutcomeTooLate},
		{"deadline: past deadline", admission.ModeDeadline, -time.Second, checkout.OutcomeTooLate},
		{"deadline: less than MinPaymentTime left", admission.ModeDeadline, 200 * time.Millisecond, checkout.OutcomeTooLate},
		{"deadline: time enough", admission.ModeDeadline, 5 * time.Second, checkout.OutcomeConfirmed},
		{"queue: past deadline", admission.ModeQueue, -time.Second, checkout.OutcomeConfirmed},
		{"queue: less than MinPaymentTime left", admission.ModeQueue, 200 * time.Millisecond, checkout.OutcomeConfirmed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, envOptions{stock: 5, cfg: checkout.Config{MinPaymentTime: 500 * time.Millisecond, Admission: admission.Config{Mode: tt.mode}}})
			req := shopper(1)
			req.Deadline = time.Now().Add(tt.left)
			a := e.post(req)
			if a.body.Status != tt.want || a.code != checkout.StatusCode(tt.want) {
				t.Fatalf("%d %+v, want %s", a.code, a.body, tt.want)
			}
			if tt.want == checkout.OutcomeTooLate {
				if a.body.Reason != "deadline" || len(e.payment.Charges()) != 0 {
					t.Errorf("too late: reason %q, %d charges", a.body.Reason, len(e.payment.Charges()))
				}
			}
			if s := e.admission(); s.MaxInProgress > 1 || s.Mode.String() != tt.mode.String() {
				t.Errorf("admission stats %+v", s)
			}
		})
	}
}

// In queue mode a shopper who leaves mid-payment is charged anyway and the
// order is made: the charge is detached from the request. Without an
// admission mode the same shopper leaving gets its charge voided.
func TestQueueModeChargesAfterTheShopperLeaves(t *testing.T) {
	tests := []struct {
		mode      admission.Mode
		wantOrder bool
	}{
		{admission.ModeQueue, true},
		{admission.ModeNone, false},
	}
	for _, tt := range tests {
		t.Run(tt.mode.String(), func(t *testing.T) {
			e := newEnv(t, envOptions{stock: 5, cfg: checkout.Config{Admission: admission.Config{Mode: tt.mode}, SweepInterval: 100 * time.Millisecond},
				payment: payment.Config{MinLatency: 600 * time.Millisecond, MaxLatency: 600 * time.Millisecond}})
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(150*time.Millisecond, cancel) // mid-payment
			if _, _, err := e.send(ctx, shopper(1), ""); err == nil {
				t.Fatal("the shopper did not leave: the answer came first")
			}
			eventually(t, 10*time.Second, func() (bool, string) {
				b := e.books()
				cs := e.payment.Charges()
				if len(cs) != 1 || e.admission().InProgress != 0 {
					return false, "charges " + chargesString(cs)
				}
				if tt.wantOrder {
					return len(b.ledger.Orders) == 1 && b.approved == 1 && b.ledger.Sold == 1, fmt.Sprintf("books %+v, charges %s", b, chargesString(cs))
				}
				return len(b.ledger.Orders) == 0 && cs[0].Status == payment.StatusVoided && b.ledger.Available == 5, fmt.Sprintf("books %+v, charges %s", b, chargesString(cs))
			})
		})
	}
}

// Bad admission settings are refused, naming the field.
func TestAdmissionConfigIsValidated(t *testing.T) {
	cfg := checkout.Config{InventoryRedis: "127.0.0.1:6379", PaymentURL: "http://127.0.0.1:1"}
	for _, tt := range []struct {
		adm  admission.Config
		want string
	}{
		{admission.Config{Mode: "fifo"}, "admission.mode"},
		{admission.Config{Mode: admission.ModeLottery}, "admission.in_progress"},
		{admission.Config{Mode: admission.ModeFair, InProgress: 4}, "admission.keys"},
	} {
		cfg.Admission = tt.adm
		err := cfg.Validate()
		if _, nerr := checkout.New(cfg); err == nil || nerr == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v / %v, want an error naming %s", tt.adm, err, nerr, tt.want)
		}
	}
}
