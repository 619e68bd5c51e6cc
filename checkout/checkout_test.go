package checkout_test

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/breakers"
	"github.com/gameday-dev/gameday/checkout"
	"github.com/gameday-dev/gameday/checkout/payment"
	"github.com/gameday-dev/gameday/gameday/toxi"
)

// Healthy dependencies: a crowd four times the stock buys exactly the stock,
// and the books balance.
func TestHealthySaleSellsExactlyTheStock(t *testing.T) {
	e := newEnv(t, envOptions{stock: 40, payment: payment.Config{MinLatency: time.Millisecond, MaxLatency: 5 * time.Millisecond},
		// Generous timeouts: this test is about correctness with healthy
		// dependencies, on a small machine under the race detector.
		cfg: checkout.Config{Sessions: breakers.Settings{Timeout: 2 * time.Second}, Inventory: breakers.Settings{Timeout: 2 * time.Second}}})
	as := e.crowd(160, 32, shopper)

	if got := count(as, checkout.OutcomeConfirmed); got != 40 {
		t.Errorf("confirmed = %d, want 40", got)
	}
	if got := count(as, checkout.OutcomeSoldOut); got != 120 {
		t.Errorf("sold out = %d, want 120", got)
	}
	for _, a := range as {
		if a.body.Status == checkout.OutcomeConfirmed && (a.code != http.StatusOK || a.body.Order == nil || a.body.Degraded) {
			t.Fatalf("confirmed answer = %d %+v", a.code, a.body)
		}
		if a.body.Status == checkout.OutcomeSoldOut && a.code != http.StatusConflict {
			t.Fatalf("sold out answered %d", a.code)
		}
	}
	b := e.books()
	if !b.ledger.Balanced() || b.ledger.Sold != 40 || b.ledger.Available != 0 || b.ledger.Reserved != 0 {
		t.Errorf("ledger = %+v, want 40 sold, 0 available, 0 reserved", b.ledger)
	}
	if len(b.ledger.Orders) != 40 || b.approved != 40 || b.chargeNoOrder+b.orderNoCharge+b.doubleCharged != 0 {
		t.Errorf("books: %d orders, %d approved charges, %+v", len(b.ledger.Orders), b.approved, b)
	}
}

// Retrying a confirmed checkout returns the same order and charges nothing
// more.
func TestRepeatedCheckoutIsHarmless(t *testing.T) {
	e := newEnv(t, envOptions{stock: 5})
	first := e.post(shopper(1))
	again := e.post(shopper(1))
	if first.body.Status != checkout.OutcomeConfirmed || again.body.Status != checkout.OutcomeConfirmed || !again.body.Replayed {
		t.Fatalf("first %+v, again %+v", first.body, again.body)
	}
	if first.body.Order.ChargeID != again.body.Order.ChargeID {
		t.Errorf("charge ids differ: %s, %s", first.body.Order.ChargeID, again.body.Order.ChargeID)
	}
	if l := e.ledger(); l.Sold != 1 || l.Available != 4 {
		t.Errorf("ledger = %+v, want 1 sold", l)
	}
	if n := len(e.payment.Charges()); n != 1 {
		t.Errorf("charges = %d, want 1", n)
	}
}

// The naive mode (read, pay, decrement) oversells under concurrency: the
// premise of the oversell invariant, shown rather than assumed.
func TestNaiveModeOversells(t *testing.T) {
	e := newEnv(t, envOptions{
		stock: 10,
		// Generous timeouts, as in the healthy sale: the claim is about
		// the naive mode's logic, and on a busy machine under the race
		// detector a 250 ms inventory read times out, the inventory
		// breaker opens, and the crowd is refused before it can race.
		cfg: checkout.Config{Mode: checkout.ModeNaive,
			Sessions: breakers.Settings{Timeout: 2 * time.Second}, Inventory: breakers.Settings{Timeout: 2 * time.Second}},
		payment: payment.Config{MinLatency: 20 * time.Millisecond, MaxLatency: 60 * time.Millisecond},
	})
	as := e.crowd(80, 40, shopper)
	l := e.ledger()
	if l.Oversold() == 0 {
		t.Fatalf("naive mode did not oversell: %d confirmed of 10 (answers %v), ledger %+v", count(as, checkout.OutcomeConfirmed), outcomes(as), l)
	}
	t.Logf("naive mode sold %d of 10 units (oversold %d)", l.Sold, l.Oversold())
	if int64(count(as, checkout.OutcomeConfirmed)) != l.Sold {
		t.Errorf("confirmed %d != sold %d", count(as, checkout.OutcomeConfirmed), l.Sold)
	}
}

// Payment far slower than its timeout: the breaker opens; while open,
// checkouts are refused at once with Retry-After and their units released;
// once the fault is gone the breaker half-opens and closes.
func TestPaymentLatencyOpensBreakerAndRecovers(t *testing.T) {
	e := newEnv(t, envOptions{stock: 1000, cfg: checkout.Config{
		Payment:       breakers.Settings{Timeout: 150 * time.Millisecond, ConsecutiveFailures: 3, OpenFor: 300 * time.Millisecond},
		SweepInterval: 100 * time.Millisecond,
	}})
	if a := e.post(shopper(0)); a.body.Status != checkout.OutcomeConfirmed {
		t.Fatalf("warm-up checkout: %+v", a.body)
	}
	e.addToxic("payment", toxi.Toxic{Name: "slow", Type: "latency", Stream: "downstream", Attributes: map[string]any{"latency": 2000}})

	var refused answer
	for i := 1; i <= 10; i++ {
		a := e.post(shopper(i))
		if a.body.Status != checkout.OutcomeUnavailable || a.body.Dependency != "payment" {
			t.Fatalf("checkout %d under payment latency: %d %+v", i, a.code, a.body)
		}
		if a.body.Reason == "breaker_open" {
			refused = a
			break
		}
	}
	if refused.body.Reason != "breaker_open" {
		t.Fatal("payment breaker never opened")
	}
	if e.checkout.Guard("payment").State() != breakers.StateOpen {
		t.Fatalf("payment breaker state = %s", e.checkout.Guard("payment").State())
	}
	if refused.took > 500*time.Millisecond {
		t.Errorf("refusal took %s; an open breaker should answer well under the 2s latency", refused.took)
	}
	if refused.code != http.StatusServiceUnavailable || refused.retryAfter == "" {
		t.Errorf("refusal: %d Retry-After %q", refused.code, refused.retryAfter)
	}
	if l := e.ledger(); l.Reserved != 0 || !l.Balanced() || l.Sold != 1 {
		t.Errorf("units not released: %+v", l)
	}

	e.removeToxic("payment", "slow")
	i := 100
	eventually(t, 10*time.Second, func() (bool, string) {
		i++
		a := e.post(shopper(i))
		return a.body.Status == checkout.OutcomeConfirmed, fmt.Sprintf("last answer %+v", a.body)
	})
	var path []breakers.State
	for _, tr := range e.checkout.Guard("payment").Transitions() {
		path = append(path, tr.To)
	}
	if len(path) < 3 || !slices.Equal(path[len(path)-3:], []breakers.State{breakers.StateOpen, breakers.StateHalfOpen, breakers.StateClosed}) {
		t.Errorf("transitions = %v, want ... open, half-open, closed", path)
	}
	// Every charge that timed out was voided once the provider answered again.
	eventually(t, 15*time.Second, func() (bool, string) {
		b := e.books()
		return b.chargeNoOrder == 0 && b.orderNoCharge == 0 && b.doubleCharged == 0, fmt.Sprintf("books %+v", b)
	})
}

// Session store down: checkouts still succeed, as guests, marked degraded.
func TestSessionStoreDownDegradesToGuest(t *testing.T) {
	e := newEnv(t, envOptions{stock: 20})
	if a := e.post(shopper(0)); a.body.Degraded || a.body.Guest {
		t.Fatalf("healthy checkout marked degraded: %+v", a.body)
	}
	e.setEnabled("sessions", false)
	for i := 1; i <= 8; i++ {
		a := e.post(shopper(i))
		if a.code != http.StatusOK || a.body.Status != checkout.OutcomeConfirmed {
			t.Fatalf("checkout %d with sessions down: %d %+v", i, a.code, a.body)
		}
		if !a.body.Degraded || !a.body.Guest || !slices.Contains(a.body.DegradedReasons, "session_store_unavailable") {
			t.Fatalf("checkout %d not marked degraded guest: %+v", i, a.body)
		}
	}
	if s := e.checkout.Guard("sessions").State(); s != breakers.StateOpen {
		t.Errorf("sessions breaker = %s after 8 failures, want open", s)
	}
	if l := e.ledger(); l.Sold != 9 || !l.Balanced() {
		t.Errorf("ledger = %+v", l)
	}
}

// A sold-out shopper's answer asks nothing of the session store: the
// session is touched once a unit is held. With the store down, the one
// buyer is a degraded guest; the eight told sold out after it are not,
// and the sessions breaker, which five failures would open, saw one.
func TestSoldOutShoppersDoNotTouchTheSessionStore(t *testing.T) {
	e := newEnv(t, envOptions{stock: 1})
	e.setEnabled("sessions", false)
	if a := e.post(shopper(0)); a.body.Status != checkout.OutcomeConfirmed || !a.body.Degraded {
		t.Fatalf("the buyer with sessions down: %d %+v, want a degraded confirmation", a.code, a.body)
	}
	for i := 1; i <= 8; i++ {
		a := e.post(shopper(i))
		if a.body.Status != checkout.OutcomeSoldOut || a.body.Degraded || a.body.Guest {
			t.Fatalf("shopper %d after the sell-out: %d %+v, want sold out, not degraded", i, a.code, a.body)
		}
	}
	if s := e.checkout.Guard("sessions").State(); s != breakers.StateClosed {
		t.Errorf("sessions breaker = %s: sold-out shoppers touched the session store", s)
	}
}

// Inventory Redis faults in the middle of a sale: down, reset_peer, and a
// timeout toxic. Whatever happens, no unit is sold twice, nobody pays for a
// unit they did not get, and once the leases expire the books balance.
func TestInventoryFaultsMidSaleStayCorrect(t *testing.T) {
	faults := []struct {
		name   string
		inject func(e *env)
		remove func(e *env)
	}{
		// The proxy is disabled: connections refused and cut.
		{"down", func(e *env) { e.setEnabled("inventory", false) }, func(e *env) { e.setEnabled("inventory", true) }},
		// Every connection is reset by the peer after 20ms.
		{"reset_peer", func(e *env) {
			e.addToxic("inventory", toxi.Toxic{Name: "reset", Type: "reset_peer", Stream: "upstream", Attributes: map[string]any{"timeout": 20}})
		}, func(e *env) { e.removeToxic("inventory", "reset") }},
		// Data is held (timeout 0) until the toxic goes: replies are lost.
		{"timeout", func(e *env) {
			e.addToxic("inventory", toxi.Toxic{Name: "hold", Type: "timeout", Stream: "downstream", Attributes: map[string]any{"timeout": 0}})
		}, func(e *env) { e.removeToxic("inventory", "hold") }},
	}
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			e := newEnv(t, envOptions{
				stock:   30,
				payment: payment.Config{MinLatency: 10 * time.Millisecond, MaxLatency: 40 * time.Millisecond},
				cfg: checkout.Config{
					LeaseTTL:  time.Second,
					Inventory: breakers.Settings{Timeout: 100 * time.Millisecond, ConsecutiveFailures: 5, OpenFor: 200 * time.Millisecond},
				},
			})
			// Mid-sale: the fault goes in as the 21st shopper starts, with
			// at most 20 units sold and a dozen checkouts in flight.
			injected := make(chan struct{})
			var once sync.Once
			mk := func(i int) checkout.Request {
				if i == 20 {
					once.Do(func() { f.inject(e); close(injected) })
				}
				return shopper(i)
			}
			done := make(chan []answer)
			go func() { done <- e.crowd(120, 12, mk) }()
			<-injected
			time.Sleep(400 * time.Millisecond)
			f.remove(e)
			as := <-done

			refused := count(as, checkout.OutcomeUnavailable)
			if refused == 0 {
				t.Fatal("no checkout was refused: the fault never hit")
			}
			t.Logf("%s: %d confirmed, %d pending, %d sold out, %d refused", f.name, count(as, checkout.OutcomeConfirmed), count(as, checkout.OutcomePending), count(as, checkout.OutcomeSoldOut), refused)
			for _, a := range as {
				if a.body.Status == checkout.OutcomeUnavailable && (a.code != http.StatusServiceUnavailable || a.retryAfter == "") {
					t.Fatalf("refusal without Retry-After: %d %+v", a.code, a.body)
				}
				if a.body.Status == checkout.OutcomePending && (a.code != http.StatusAccepted || a.retryAfter == "") {
					t.Fatalf("pending without Retry-After: %d %+v", a.code, a.body)
				}
			}
			// Leases expire after 1s; voids of charges whose unit is gone
			// are retried until they land.
			eventually(t, 15*time.Second, func() (bool, string) {
				b := e.books()
				ok := b.ledger.Balanced() && b.ledger.Reserved == 0 && b.ledger.Oversold() == 0 &&
					b.chargeNoOrder == 0 && b.orderNoCharge == 0 && b.doubleCharged == 0 && b.unknownChargeIDs == 0
				return ok, fmt.Sprintf("books %+v", b)
			})
			b := e.books()
			if int64(count(as, checkout.OutcomeConfirmed)) > b.ledger.Sold {
				t.Errorf("%d shoppers told confirmed but only %d sold", count(as, checkout.OutcomeConfirmed), b.ledger.Sold)
			}
		})
	}
}

// Inventory Redis down: refuse quickly with 503 and Retry-After, and charge
// nobody.
func TestInventoryDownFailsClosed(t *testing.T) {
	e := newEnv(t, envOptions{stock: 10})
	e.setEnabled("inventory", false)
	for i := range 6 {
		a := e.post(shopper(i))
		if a.code != http.StatusServiceUnavailable || a.body.Dependency != "inventory" || a.retryAfter == "" {
			t.Fatalf("checkout %d with inventory down: %d %+v", i, a.code, a.body)
		}
		if a.took > time.Second {
			t.Errorf("refusal took %s", a.took)
		}
	}
	if n := len(e.payment.Charges()); n != 0 {
		t.Errorf("%d charges made with inventory down", n)
	}
}
