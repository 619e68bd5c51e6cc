package checkout_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/checkout"
	"github.com/gameday-dev/gameday/checkout/admission"
	"github.com/gameday-dev/gameday/checkout/payment"
	"github.com/gameday-dev/gameday/gameday/toxi"
)

// The paced room through the checkout, against real Redis and the payment
// stand-in: at most N in progress; every waiting answer says when this
// shopper should come back (retry_after_ms, and Retry-After in whole
// seconds); a shopper whose turn would come too late for its deadline is
// told 410 too_late, reason not_today, at once and is never charged.
func TestPacedRoomThroughTheCheckout(t *testing.T) {
	const n, latency = 2, 200 * time.Millisecond
	e := newEnv(t, envOptions{stock: 100,
		cfg: checkout.Config{MinPaymentTime: latency, Admission: admission.Config{
			Mode: admission.ModePaced, InProgress: n, Tick: 10 * time.Millisecond, Keys: []admission.Key{testKey}}},
		payment: payment.Config{MinLatency: latency, MaxLatency: latency, Slots: n}})

	// Warm up: shoppers who follow the room's answers until they buy,
	// giving the room its measure of a checkout's time.
	buy := func(i int, deadline time.Time) (answer, int) {
		req := shopper(i)
		req.Deadline = deadline
		token := ""
		for k := 0; k < 500; k++ {
			a, tok, err := e.send(context.Background(), req, token)
			if err != nil {
				t.Errorf("shopper %d: %v", i, err)
				return a, k
			}
			token = tok
			if a.body.Status != checkout.OutcomeUnavailable {
				return a, k
			}
			if a.body.RetryAfterMS <= 0 {
				t.Errorf("shopper %d: a waiting answer without retry_after_ms: %+v", i, a.body)
				return a, k
			}
			time.Sleep(time.Duration(a.body.RetryAfterMS) * time.Millisecond)
		}
		t.Errorf("shopper %d never got a final answer", i)
		return answer{}, 0
	}
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Go(func() {
			if a, _ := buy(i, time.Now().Add(time.Minute)); a.body.Status != checkout.OutcomeConfirmed {
				t.Errorf("warm-up shopper %d: %d %+v", i, a.code, a.body)
			}
		})
	}
	wg.Wait()
	s := e.admission()
	// The room's service time is estimated from the checkouts in
	// progress at each 10 ms tick (Little's law, decayed), not timed one
	// by one: it lands within a tick or two of the payment's 200 ms (one
	// run measured 198.6), never near half or double it.
	if s.MaxInProgress > n || s.ServiceMS < float64((latency-20*time.Millisecond)/time.Millisecond) || s.ServiceMS > 1000 {
		t.Fatalf("after the warm-up: %+v, want at most %d in progress and a measured service time of about %s", s, n, latency)
	}

	// Fill both places with slow purchases, then ask.
	e.addToxic("payment", toxi.Toxic{Name: "slow", Type: "latency", Stream: "downstream", Attributes: map[string]any{"latency": 1500}})
	var held sync.WaitGroup
	for i := range n {
		held.Go(func() { e.post(shopper(100 + i)) })
	}
	eventually(t, 5*time.Second, func() (bool, string) { s := e.admission(); return s.InProgress == n, fmt.Sprintf("%+v", s) })

	// Three frees away (two in progress, then its own), then a poll and
	// a charge: 200ms of patience is not enough.
	late := shopper(200)
	late.Deadline = time.Now().Add(200 * time.Millisecond)
	a, token, _ := e.send(context.Background(), late, "")
	if a.code != http.StatusGone || a.body.Status != checkout.OutcomeTooLate || a.body.Reason != admission.RefusalNotToday || token == "" {
		t.Errorf("a shopper whose turn comes too late: %d %+v, token %q; want 410 too_late, not_today", a.code, a.body, token)
	}
	if a.took > 150*time.Millisecond {
		t.Errorf("not_today took %s: it must be told at once", a.took)
	}
	// A shopper with time enough waits its turn, told when to come back.
	ok := shopper(201)
	ok.Deadline = time.Now().Add(time.Minute)
	w, _, _ := e.send(context.Background(), ok, "")
	if w.code != http.StatusServiceUnavailable || w.body.Reason != admission.RefusalWaitingRoom || w.body.RetryAfterMS <= 0 || w.body.RetryAfterMS >= 1000 || w.retryAfter != "1" {
		t.Errorf("a shopper at the door: %d %+v, Retry-After %q; want 503 waiting_room, retry_after_ms under a second, Retry-After 1", w.code, w.body, w.retryAfter)
	}
	held.Wait()
	e.removeToxic("payment", "slow")
	if a, _ := buy(201, ok.Deadline); a.body.Status != checkout.OutcomeConfirmed {
		t.Errorf("the shopper with time enough: %d %+v", a.code, a.body)
	}
	for _, c := range e.payment.Charges() {
		if checkout.CheckoutIDOf(c.Key) == "co-200" {
			t.Errorf("the shopper told not_today was charged: %+v", c)
		}
	}
	if s := e.admission(); s.MaxInProgress > n || s.NotToday != 1 {
		t.Errorf("at the end: %+v, want at most %d in progress and 1 not today", s, n)
	}
}
