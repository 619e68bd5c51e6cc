package checkout_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/breakers"
	"github.com/gameday-dev/gameday/checkout"
	"github.com/gameday-dev/gameday/checkout/payment"
	"github.com/gameday-dev/gameday/gameday/toxi"
)

// The payment provider's reply is lost after it charged (the reply is cut
// by limit_data): a retry with the same key returns that charge, and the
// provider holds exactly one.
func TestLostPaymentReplyRetriedWithSameKeyChargesOnce(t *testing.T) {
	e := newEnv(t, envOptions{stock: 5})
	pay := payment.NewClient("http://"+e.proxyListen("payment"), nil)
	ctx := context.Background()
	req := payment.ChargeRequest{Key: "co-lost", AmountCents: 1299, Shopper: "s-lost", SKU: sku}

	e.addToxic("payment", toxi.Toxic{Name: "cut", Type: "limit_data", Stream: "downstream", Attributes: map[string]any{"bytes": 16}})
	if _, err := pay.Charge(ctx, req); err == nil {
		t.Fatal("charge with its reply cut succeeded")
	}
	e.removeToxic("payment", "cut")
	ch, err := pay.Charge(ctx, req)
	if err != nil || ch.Status != payment.StatusApproved {
		t.Fatalf("retry: %+v, %v", ch, err)
	}
	charges := e.payment.Charges()
	if len(charges) != 1 || charges[0].ID != ch.ID {
		t.Fatalf("charges after a lost reply and a retry = %+v, want exactly %s", charges, ch.ID)
	}
}

// The same fault under the checkout: it resends once with the same key
// (still cut), gives up, voids the charge it cannot confirm and releases
// the unit. The shopper is not charged and the unit is back.
func TestLostPaymentReplyUnderCheckoutIsVoided(t *testing.T) {
	e := newEnv(t, envOptions{stock: 5})
	e.addToxic("payment", toxi.Toxic{Name: "cut", Type: "limit_data", Stream: "downstream", Attributes: map[string]any{"bytes": 16}})
	a := e.post(shopper(1))
	if a.body.Status != checkout.OutcomeUnavailable || a.body.Dependency != "payment" {
		t.Fatalf("checkout with payment replies cut: %d %+v", a.code, a.body)
	}
	e.removeToxic("payment", "cut")
	eventually(t, 10*time.Second, func() (bool, string) {
		cs := e.payment.Charges()
		return len(cs) == 1 && cs[0].Status == payment.StatusVoided, "charges " + chargesString(cs)
	})
	if b := e.books(); !b.ledger.Balanced() || b.ledger.Available != 5 || b.chargeNoOrder != 0 {
		t.Errorf("books after the void: %+v", b)
	}
}

// The bulkhead refuses at once past its bound: with two payment calls held
// by latency, the other four are refused without waiting.
func TestPaymentBulkheadRefusesAtOnce(t *testing.T) {
	e := newEnv(t, envOptions{stock: 20, cfg: checkout.Config{
		Payment: breakers.Settings{MaxConcurrent: 2, Timeout: 5 * time.Second, ConsecutiveFailures: 100},
	}})
	e.addToxic("payment", toxi.Toxic{Name: "slow", Type: "latency", Stream: "downstream", Attributes: map[string]any{"latency": 1000}})
	var wg sync.WaitGroup
	as := make([]answer, 6)
	for i := range as {
		wg.Add(1)
		go func() { defer wg.Done(); as[i] = e.post(shopper(i)) }()
	}
	wg.Wait()
	full := 0
	for _, a := range as {
		if a.body.Reason == "bulkhead_full" {
			full++
			if a.took > 500*time.Millisecond || a.code != http.StatusServiceUnavailable || a.retryAfter == "" {
				t.Errorf("bulkhead refusal: %d after %s, Retry-After %q", a.code, a.took, a.retryAfter)
			}
		}
	}
	if full != 4 || count(as, checkout.OutcomeConfirmed) != 2 {
		t.Errorf("%d refused by the bulkhead and %d confirmed, want 4 and 2", full, count(as, checkout.OutcomeConfirmed))
	}
	if l := e.ledger(); l.Sold != 2 || l.Reserved != 0 || !l.Balanced() {
		t.Errorf("ledger = %+v", l)
	}
}

// A half-open probe that hangs (a timeout toxic holds every reply) gives up
// after the probe timeout and the breaker opens again, instead of staying
// half-open and refusing everyone behind one stuck call.
func TestHungHalfOpenProbeTimesOut(t *testing.T) {
	e := newEnv(t, envOptions{stock: 100, cfg: checkout.Config{
		Payment: breakers.Settings{Timeout: 300 * time.Millisecond, ProbeTimeout: 100 * time.Millisecond, ConsecutiveFailures: 2, OpenFor: 200 * time.Millisecond},
	}})
	g := e.checkout.Guard("payment")
	e.addToxic("payment", toxi.Toxic{Name: "hold", Type: "timeout", Stream: "downstream", Attributes: map[string]any{"timeout": 0}})
	for i := 0; g.State() != breakers.StateOpen; i++ {
		if i == 5 {
			t.Fatalf("breaker still %s after 5 held payments", g.State())
		}
		e.post(shopper(i))
	}
	time.Sleep(250 * time.Millisecond) // OpenFor has passed: the next call is a probe
	probe := e.post(shopper(50))
	if probe.body.Reason != "timeout" || probe.took > time.Second {
		t.Fatalf("probe answer after %s: %+v", probe.took, probe.body)
	}
	if s := g.State(); s != breakers.StateOpen {
		t.Errorf("after the hung probe the breaker is %s, want open", s)
	}
	tr := g.Transitions()
	if n := len(tr); n < 3 || tr[n-2].To != breakers.StateHalfOpen || tr[n-1].To != breakers.StateOpen {
		t.Errorf("transitions = %+v, want ... half-open, open", tr)
	}
	e.removeToxic("payment", "hold")
	eventually(t, 5*time.Second, func() (bool, string) {
		a := e.post(shopper(60))
		return a.body.Status == checkout.OutcomeConfirmed && g.State() == breakers.StateClosed, "state " + g.State().String()
	})
}

// A shopper whose deadline has passed is refused and charged nothing; one
// whose deadline passes while payment is slow is not charged either.
func TestShopperPastDeadlineIsNeverCharged(t *testing.T) {
	e := newEnv(t, envOptions{stock: 5, cfg: checkout.Config{Payment: breakers.Settings{Timeout: 5 * time.Second}}})
	late := shopper(1)
	late.Deadline = time.Now().Add(-time.Second)
	if a := e.post(late); a.code != http.StatusGone || a.body.Status != checkout.OutcomeTooLate {
		t.Fatalf("past deadline: %d %+v", a.code, a.body)
	}
	e.addToxic("payment", toxi.Toxic{Name: "slow", Type: "latency", Stream: "downstream", Attributes: map[string]any{"latency": 800}})
	leaving := shopper(2)
	leaving.Deadline = time.Now().Add(300 * time.Millisecond)
	if a := e.post(leaving); a.body.Status != checkout.OutcomeTooLate {
		t.Fatalf("deadline during payment: %d %+v", a.code, a.body)
	}
	e.removeToxic("payment", "slow")
	eventually(t, 10*time.Second, func() (bool, string) {
		cs := e.payment.Charges()
		for _, c := range cs {
			if c.Status == payment.StatusApproved {
				return false, "charges " + chargesString(cs)
			}
		}
		return true, ""
	})
	if b := e.books(); !b.ledger.Balanced() || b.ledger.Sold != 0 || b.ledger.Reserved != 0 {
		t.Errorf("books: %+v", b)
	}
	if e.checkout.Guard("payment").State() != breakers.StateClosed {
		t.Errorf("a shopper leaving opened the payment breaker")
	}
}
