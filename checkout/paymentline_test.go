package checkout_test

import (
	"context"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/breakers"
	"github.com/gameday-dev/gameday/checkout"
	"github.com/gameday-dev/gameday/checkout/admission"
	"github.com/gameday-dev/gameday/checkout/payment"
)

// The deadline rule where it matters: when a payment slot is given. Every
// charge takes 1s and the provider has one slot. A holds it; B comes
// 1.6s before its deadline, so it could finish only if it had the slot
// within 0.6s; C has time.
//
// With the checkout's line (PaymentSlots 1) B leaves too_late the moment
// it can no longer finish, 1s before its deadline, and is never charged;
// the slot goes from A to C. Without the line, B waits in the provider's
// own queue, which cannot know its deadline: it is charged after it was
// told too_late, and the slot was spent on a charge the checkout voids.
func TestPaymentLineSkipsWhoCannotFinish(t *testing.T) {
	const latency = time.Second
	for _, line := range []bool{true, false} {
		name := map[bool]string{true: "checkout line", false: "provider queue"}[line]
		t.Run(name, func(t *testing.T) {
			cfg := checkout.Config{MinPaymentTime: latency, SweepInterval: 100 * time.Millisecond,
				Payment:   breakers.Settings{Timeout: 10 * time.Second},
				Admission: admission.Config{Mode: admission.ModeDeadline}}
			if line {
				cfg.PaymentSlots = 1
			}
			e := newEnv(t, envOptions{stock: 10, cfg: cfg,
				payment: payment.Config{MinLatency: latency, MaxLatency: latency, Slots: 1}})
			send := func(i int, left time.Duration) <-chan answer {
				req := shopper(i)
				req.Deadline = time.Now().Add(left)
				ch := make(chan answer, 1)
				go func() {
					a, _, err := e.send(context.Background(), req, "")
					if err != nil {
						t.Errorf("shopper %d: %v", i, err)
					}
					ch <- a
				}()
				return ch
			}
			a := send(1, time.Minute)
			if line {
				checkout.WaitFor(t, "A to hold the slot", func() bool { free, _, _, _ := checkout.PaymentLine(e.checkout); return free == 0 })
			} else {
				// The provider tells nobody who waits: give A, then B, a
				// fifth of a charge to reach it.
				time.Sleep(200 * time.Millisecond)
			}
			b := send(2, latency+600*time.Millisecond)
			if line {
				checkout.WaitFor(t, "B in line", func() bool { _, w, _, _ := checkout.PaymentLine(e.checkout); return w == 1 })
			} else {
				time.Sleep(200 * time.Millisecond) // B reaches the provider's queue before C
			}
			c := send(3, time.Minute)

			ab := <-b
			if ab.body.Status != checkout.OutcomeTooLate || ab.body.Reason != "deadline" {
				t.Fatalf("B: %d %+v, want too_late (deadline)", ab.code, ab.body)
			}
			for i, ch := range []<-chan answer{a, c} {
				if got := <-ch; got.body.Status != checkout.OutcomeConfirmed && got.body.Status != checkout.OutcomeDeclined {
					t.Errorf("%c: %d %+v, want a charge's answer", "AC"[i], got.code, got.body)
				}
			}
			// Every charge has settled (the provider's slot is free again
			// once C's is made) and voids are swept every 100ms.
			var bCharges []payment.Charge
			eventually(t, 10*time.Second, func() (bool, string) {
				bCharges = bCharges[:0]
				for _, ch := range e.payment.Charges() {
					if checkout.CheckoutIDOf(ch.Key) == "co-2" {
						bCharges = append(bCharges, ch)
					}
				}
				settled := len(bCharges) == 0 || bCharges[0].Status == payment.StatusVoided
				return settled && len(e.payment.Charges()) >= 2, chargesString(e.payment.Charges())
			})
			if line {
				if len(bCharges) != 0 {
					t.Errorf("B was charged: %s", chargesString(bCharges))
				}
				if ab.took >= latency {
					t.Errorf("B was answered after %s, within 600ms of its deadline: it could not finish from 600ms after it came, and must be told then", ab.took)
				}
				if _, _, skipped, _ := checkout.PaymentLine(e.checkout); skipped != 1 {
					t.Errorf("%d skipped, want 1", skipped)
				}
				return
			}
			// The provider's queue: the slot went to B, too late.
			if len(bCharges) != 1 {
				t.Errorf("B's charges in the provider's queue: %s; want one, made after B left and voided", chargesString(bCharges))
			}
			if ab.took < latency+500*time.Millisecond {
				t.Errorf("B was answered after %s: in the provider's queue it can only be cut at its deadline", ab.took)
			}
		})
	}
}
