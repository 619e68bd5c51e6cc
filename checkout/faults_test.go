package checkout_test

import (
	"context"
	"fmt"
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
	req := payment.ChargeRequest{Key: "co-lost/1", AmountCents: 1299, Shopper: "s-lost", SKU: sku}

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
// (still cut), gives up, records and sends a void for the charge it cannot
// confirm and releases the unit. When the shopper retries the same checkout
// id after the fault, the new attempt has its own charge key and buys; the
// first charge stays voided: one unit, one charge.
func TestLostPaymentReplyUnderCheckoutIsVoided(t *testing.T) {
	e := newEnv(t, envOptions{stock: 5, cfg: checkout.Config{SweepInterval: 100 * time.Millisecond}})
	e.addToxic("payment", toxi.Toxic{Name: "cut", Type: "limit_data", Stream: "downstream", Attributes: map[string]any{"bytes": 16}})
	a := e.post(shopper(1))
	if a.body.Status != checkout.OutcomeUnavailable || a.body.Dependency != "payment" {
		t.Fatalf("checkout with payment replies cut: %d %+v", a.code, a.body)
	}
	if l := e.ledger(); l.Available != 5 || len(l.Voids) != 1 || l.Voids[0].ChargeKey != "co-1/1" {
		t.Fatalf("after the lost reply: ledger %+v", l)
	}
	e.removeToxic("payment", "cut")
	eventually(t, 10*time.Second, func() (bool, string) {
		cs := e.payment.Charges()
		return len(cs) == 1 && cs[0].Status == payment.StatusVoided, "charges " + chargesString(cs)
	})
	again := e.post(shopper(1))
	if again.body.Status != checkout.OutcomeConfirmed || again.body.Order.ChargeKey != "co-1/2" {
		t.Fatalf("retry of the same checkout id: %d %+v", again.code, again.body)
	}
	b := e.books()
	if !b.ledger.Balanced() || b.ledger.Sold != 1 || b.approved != 1 || b.chargeNoOrder+b.orderNoCharge+b.doubleCharged != 0 {
		t.Errorf("books: %+v", b)
	}
	eventually(t, 5*time.Second, func() (bool, string) {
		l := e.ledger()
		return len(l.Voids) == 1 && !l.Voids[0].Pending, fmt.Sprintf("voids %+v", l.Voids)
	})
}

// A first send that reached the provider and tripped the breaker: the
// resend is refused by the open breaker, and the charge that may have been
// made is still voided.
func TestResendRefusedByBreakerStillVoids(t *testing.T) {
	e := newEnv(t, envOptions{stock: 5, cfg: checkout.Config{
		Payment:       breakers.Settings{ConsecutiveFailures: 1, OpenFor: time.Minute},
		SweepInterval: 100 * time.Millisecond,
	}})
	e.addToxic("payment", toxi.Toxic{Name: "cut", Type: "limit_data", Stream: "downstream", Attributes: map[string]any{"bytes": 16}})
	a := e.post(shopper(1))
	if a.body.Status != checkout.OutcomeUnavailable {
		t.Fatalf("answer: %+v", a.body)
	}
	e.removeToxic("payment", "cut")
	eventually(t, 10*time.Second, func() (bool, string) {
		b := e.books()
		return b.approved == 0 && len(e.payment.Charges()) == 1 && b.ledger.Balanced() && b.ledger.Available == 5,
			fmt.Sprintf("charges %s, books %+v", chargesString(e.payment.Charges()), b)
	})
}

// A checkout id reused by another shopper or for another SKU is refused as
// invalid; the first purchase keeps its order and its charge.
func TestCheckoutIDReusedElsewhereKeepsFirstOrder(t *testing.T) {
	e := newEnv(t, envOptions{stock: 5})
	ctx := context.Background()
	if err := e.checkout.Inventory().SetStock(ctx, "sku-2", 5); err != nil {
		t.Fatal(err)
	}
	first := e.post(shopper(1))
	if first.body.Status != checkout.OutcomeConfirmed {
		t.Fatalf("first: %+v", first.body)
	}
	other := shopper(1)
	other.SKU = "sku-2"
	if a := e.post(other); a.code != http.StatusBadRequest || a.body.Status != checkout.OutcomeInvalid {
		t.Fatalf("same id for another sku: %d %+v", a.code, a.body)
	}
	time.Sleep(200 * time.Millisecond) // a wrongful void would have landed by now
	b := e.books()
	if b.approved != 1 || b.orderNoCharge != 0 || b.ledger.Sold != 1 {
		t.Errorf("books after the reuse: %+v, charges %s", b, chargesString(e.payment.Charges()))
	}
	l2, err := e.checkout.Inventory().Ledger(ctx, "sku-2")
	if err != nil || !l2.Balanced() || l2.Available != 5 {
		t.Errorf("sku-2 ledger: %+v, %v", l2, err)
	}
}

// A checkout that dies between the charge and the claim: its lease
// expires, the unit goes back, and the sweeper of a live checkout voids the
// charge once the late-claim grace has passed.
func TestCheckoutDiedMidPaymentIsSwept(t *testing.T) {
	e := newEnv(t, envOptions{stock: 3, cfg: checkout.Config{SweepInterval: 50 * time.Millisecond, LateClaimGrace: 200 * time.Millisecond}})
	ctx := context.Background()
	// What the dead checkout did: reserve, then charge with its attempt's key.
	inv := checkout.NewInventory(checkout.NewRedisClient(e.proxyUpstream("inventory"), time.Second))
	if err := inv.SetStock(ctx, sku, 3); err != nil {
		t.Fatal(err)
	}
	res := checkout.ReserveFor(t, inv, "co-dead", 300*time.Millisecond)
	pay := payment.NewClient(e.payURL, nil)
	if ch, err := pay.Charge(ctx, payment.ChargeRequest{Key: "co-dead/" + res, AmountCents: 1299, Shopper: "s-dead", SKU: sku}); err != nil || ch.Status != payment.StatusApproved {
		t.Fatalf("charge: %+v %v", ch, err)
	}
	eventually(t, 10*time.Second, func() (bool, string) {
		cs := e.payment.Charges()
		b := e.books()
		return len(cs) == 1 && cs[0].Status == payment.StatusVoided && b.ledger.Available == 3 && b.ledger.Balanced(),
			fmt.Sprintf("charges %s, ledger %+v", chargesString(cs), b.ledger)
	})
}

// Restarting a checkout with the same -stock keeps its books.
func TestInitStockKeepsExistingBooks(t *testing.T) {
	e := newEnv(t, envOptions{stock: 4})
	if a := e.post(shopper(1)); a.body.Status != checkout.OutcomeConfirmed {
		t.Fatal(a.body)
	}
	set, err := e.checkout.Inventory().InitStock(context.Background(), sku, 4)
	if err != nil || set {
		t.Fatalf("InitStock on a SKU with books: set=%v err=%v", set, err)
	}
	if l := e.ledger(); l.Sold != 1 || l.Available != 3 {
		t.Errorf("books after InitStock: %+v", l)
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
	next := 60
	eventually(t, 5*time.Second, func() (bool, string) {
		next++ // a fresh id each time: a timed-out probe voids its attempt
		a := e.post(shopper(next))
		return a.body.Status == checkout.OutcomeConfirmed && g.State() == breakers.StateClosed, "state " + g.State().String()
	})
}

// A shopper whose deadline has passed is refused and charged nothing; one
// whose deadline passes while payment is slow is not charged either.
func TestShopperPastDeadlineIsNeverCharged(t *testing.T) {
	// One failure would open the breaker: the shopper leaving must not count.
	e := newEnv(t, envOptions{stock: 5, cfg: checkout.Config{Payment: breakers.Settings{Timeout: 5 * time.Second, ConsecutiveFailures: 1}}})
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

// The claim's reply is lost after the script ran (the inventory Redis
// answers too late, and the inventory breaker trips on the first lost
// reply): the order exists, so the shopper must not be told to go away. The
// answer is pending, and the same checkout id, asked again, learns that it
// bought: one order, one approved charge. A checkout that answered 503
// here told a paying shopper to start a new purchase.
func TestLostClaimReplyIsNeverARefusal(t *testing.T) {
	e := newEnv(t, envOptions{stock: 5, cfg: checkout.Config{
		Inventory: breakers.Settings{Timeout: 100 * time.Millisecond, ConsecutiveFailures: 1, OpenFor: time.Minute},
	}})
	// A first purchase loads the scripts into Redis: an EVALSHA answered
	// NOSCRIPT too late would never run the claim.
	if a := e.post(shopper(9)); a.body.Status != checkout.OutcomeConfirmed {
		t.Fatalf("warm-up purchase: %+v", a.body)
	}
	e.addToxic("payment", toxi.Toxic{Name: "slow", Type: "latency", Stream: "downstream", Attributes: map[string]any{"latency": 400}})
	done := make(chan answer, 1)
	go func() { done <- e.post(shopper(1)) }()
	time.Sleep(200 * time.Millisecond) // reserved; the charge is on its way
	e.addToxic("inventory", toxi.Toxic{Name: "late", Type: "latency", Stream: "downstream", Attributes: map[string]any{"latency": 600}})
	a := <-done
	e.removeToxic("inventory", "late")
	if l := e.ledger(); len(l.Orders) != 2 {
		t.Fatalf("the claim's script should have run: ledger %+v", l)
	}
	if a.code != http.StatusAccepted || a.body.Status != checkout.OutcomePending || a.retryAfter == "" {
		t.Fatalf("answer with the order written and its reply lost: %d %+v (Retry-After %q), want 202 pending", a.code, a.body, a.retryAfter)
	}
	again := e.post(shopper(1))
	if again.body.Status != checkout.OutcomeConfirmed || !again.body.Replayed {
		t.Fatalf("asking again with the same checkout id: %d %+v, want the order replayed", again.code, again.body)
	}
	b := e.books()
	if b.approved != 2 || b.ledger.Sold != 2 || b.chargeNoOrder+b.orderNoCharge+b.doubleCharged != 0 || !b.ledger.Balanced() {
		t.Errorf("books: %+v, charges %s", b, chargesString(e.payment.Charges()))
	}
}

// Pending stays the answer while it is the truth. A shopper answered
// pending (paid, the order written, the reply lost) asks again while Redis
// cannot be reached: answering 503 there told a shopper who holds an order
// to start a new purchase; it is told pending again, and the order is
// replayed once Redis is back. A shopper whose claim never reached Redis
// is told pending until its lease expires, when the sweeper may void its
// charge: from then on it is refused like anyone else.
func TestPendingIsAnsweredAgainWhileRedisCannotSay(t *testing.T) {
	e := newEnv(t, envOptions{stock: 5, cfg: checkout.Config{
		Inventory:      breakers.Settings{Timeout: 100 * time.Millisecond, ConsecutiveFailures: 1, OpenFor: 300 * time.Millisecond},
		LeaseTTL:       2 * time.Second,
		SweepInterval:  50 * time.Millisecond,
		LateClaimGrace: 200 * time.Millisecond,
	}})
	if a := e.post(shopper(9)); a.body.Status != checkout.OutcomeConfirmed {
		t.Fatalf("warm-up purchase: %+v", a.body)
	}
	paidThenCut := func(i int, cut func(), heal func()) answer {
		e.addToxic("payment", toxi.Toxic{Name: "slow", Type: "latency", Stream: "downstream", Attributes: map[string]any{"latency": 400}})
		done := make(chan answer, 1)
		go func() { done <- e.post(shopper(i)) }()
		time.Sleep(200 * time.Millisecond) // reserved; the charge is on its way
		cut()
		a := <-done
		heal()
		e.removeToxic("payment", "slow")
		if a.code != http.StatusAccepted || a.body.Status != checkout.OutcomePending {
			t.Fatalf("shopper %d paid, claim cut: %d %+v, want 202 pending", i, a.code, a.body)
		}
		return a
	}

	// The order written, its reply lost.
	paidThenCut(1, func() {
		e.addToxic("inventory", toxi.Toxic{Name: "late", Type: "latency", Stream: "downstream", Attributes: map[string]any{"latency": 600}})
	}, func() { e.removeToxic("inventory", "late") })
	e.setEnabled("inventory", false)
	for i, why := range []string{"Redis unreachable", "the inventory breaker open"} {
		if a := e.post(shopper(1)); a.code != http.StatusAccepted || a.body.Status != checkout.OutcomePending || a.retryAfter == "" {
			t.Fatalf("ask %d again, %s: %d %+v, want 202 pending with Retry-After", i+1, why, a.code, a.body)
		}
	}
	if a := e.post(shopper(2)); a.body.Status != checkout.OutcomeUnavailable {
		t.Errorf("a shopper never answered pending, Redis unreachable: %d %+v, want unavailable", a.code, a.body)
	}
	// Another shopper using the pending purchase's id is told nothing of
	// it: refused like anyone else.
	stranger := shopper(1)
	stranger.Shopper = "s-someone-else"
	if a := e.post(stranger); a.body.Status != checkout.OutcomeUnavailable {
		t.Errorf("another shopper with the pending purchase's id: %d %+v, want unavailable", a.code, a.body)
	}
	e.setEnabled("inventory", true)
	eventually(t, 5*time.Second, func() (bool, string) {
		a := e.post(shopper(1))
		return a.body.Status == checkout.OutcomeConfirmed && a.body.Replayed, fmt.Sprintf("%d %+v", a.code, a.body)
	})

	// No order: the claim never reached Redis.
	paidThenCut(3, func() { e.setEnabled("inventory", false) }, func() {})
	// The checkout's lease began before the answer came: from here its
	// lease TTL (and a margin) is past its expiry.
	leased := time.Now().Add(100 * time.Millisecond)
	if a := e.post(shopper(3)); a.body.Status != checkout.OutcomePending {
		t.Fatalf("ask again within the lease, Redis unreachable: %d %+v, want pending", a.code, a.body)
	}
	time.Sleep(time.Until(leased.Add(2 * time.Second)))
	if a := e.post(shopper(3)); a.body.Status != checkout.OutcomeUnavailable {
		t.Fatalf("ask again after the lease, Redis unreachable: %d %+v, want unavailable", a.code, a.body)
	}
	e.setEnabled("inventory", true)
	eventually(t, 10*time.Second, func() (bool, string) {
		b := e.books()
		return b.approved == 2 && b.ledger.Sold == 2 && b.ledger.Balanced() && b.ledger.AwaitingSweep == 0 && b.chargeNoOrder+b.orderNoCharge+b.doubleCharged == 0,
			fmt.Sprintf("books %+v, charges %s", b, chargesString(e.payment.Charges()))
	})
}

// A paid attempt whose claim never reached Redis (pending, no order), then
// a retry of the same checkout id that refreshes its lease but cannot pay
// (the payment breaker is open) and releases it: the released lease held an
// approved charge, which must be voided. A release that freed the unit and
// forgot the lease left that charge approved for ever.
func TestReleasedLeaseChargeIsSwept(t *testing.T) {
	e := newEnv(t, envOptions{stock: 5, cfg: checkout.Config{
		Payment:        breakers.Settings{ConsecutiveFailures: 1, OpenFor: time.Minute},
		SweepInterval:  50 * time.Millisecond,
		LateClaimGrace: 200 * time.Millisecond,
	}})
	e.addToxic("payment", toxi.Toxic{Name: "slow", Type: "latency", Stream: "downstream", Attributes: map[string]any{"latency": 400}})
	done := make(chan answer, 1)
	go func() { done <- e.post(shopper(1)) }()
	time.Sleep(200 * time.Millisecond) // reserved; the charge is on its way
	e.setEnabled("inventory", false)
	a := <-done
	e.setEnabled("inventory", true)
	e.removeToxic("payment", "slow")
	if a.body.Status != checkout.OutcomePending {
		t.Fatalf("paid, claim failed: %d %+v, want pending", a.code, a.body)
	}
	if cs := e.payment.Charges(); len(cs) != 1 || cs[0].Status != payment.StatusApproved || len(e.ledger().Orders) != 0 {
		t.Fatalf("want one approved charge and no order: charges %s, ledger %+v", chargesString(cs), e.ledger())
	}
	// Open the payment breaker with another shopper's lost reply.
	e.addToxic("payment", toxi.Toxic{Name: "cut", Type: "limit_data", Stream: "downstream", Attributes: map[string]any{"bytes": 16}})
	if b := e.post(shopper(2)); b.body.Status != checkout.OutcomeUnavailable {
		t.Fatalf("shopper 2: %+v", b.body)
	}
	e.removeToxic("payment", "cut")
	retry := e.post(shopper(1))
	if retry.body.Status != checkout.OutcomeUnavailable || retry.body.Reason != "breaker_open" {
		t.Fatalf("retry with the payment breaker open: %d %+v", retry.code, retry.body)
	}
	eventually(t, 10*time.Second, func() (bool, string) {
		b := e.books()
		return b.approved == 0 && b.ledger.Balanced() && b.ledger.Available == 5 && b.ledger.AwaitingSweep == 0,
			fmt.Sprintf("charges %s, ledger %+v", chargesString(e.payment.Charges()), b.ledger)
	})
}
