package drive

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/judge"
	"github.com/gameday-dev/gameday/gameday/load"
	"github.com/gameday-dev/gameday/scenarios"
)

func p64(n int64) *int64 { return &n }

// What a shopper was told is the answer to its last attempt: one told
// "come back" that came back and left before the answer knows nothing
// final (its charge, if any, is a charge after leaving, not an order it
// was told failed); one whose last answer was a refusal was told so.
func TestToldIsTheLastAttemptsAnswer(t *testing.T) {
	start := time.Now()
	rep := &load.Report{Start: start, Shoppers: []*load.Shopper{
		{ID: "came-back-and-left", Outcome: load.OutcomeGaveUp, Deadline: time.Second, Attempts: []load.Attempt{
			{Code: 503, Status: "unavailable", RetryAfter: time.Second},
			{Err: context.DeadlineExceeded.Error()},
		}},
		{ID: "refused", Outcome: load.OutcomeUnavailable, Deadline: time.Second, Attempts: []load.Attempt{
			{Code: 503, Status: "unavailable"},
		}},
	}}
	vs := shoppers(rep)
	if len(vs) != 2 || vs[0].Told != "" || vs[1].Told != "unavailable" {
		t.Fatalf("told: %+v", vs)
	}
	f := &judge.Facts{OrdersKnown: true, Orders: []judge.Order{{CheckoutID: "came-back-and-left", Units: 1}, {CheckoutID: "refused", Units: 1}}}
	if iv, _ := judge.Reconcile(f, vs, 0); iv.OrdersToldFailed != 1 {
		t.Errorf("orders told failed: %d, want 1 (the refused shopper's)", iv.OrdersToldFailed)
	}
}

// A shopper told its purchase was pending, then refused (a poll that found
// the store down) with no retry left, knew its purchase was accepted: its
// order is not one it was told failed. One refused without a pending
// answer before was told so.
func TestARefusalAfterPendingIsNotToldFailed(t *testing.T) {
	start := time.Now()
	rep := &load.Report{Start: start, Shoppers: []*load.Shopper{
		{ID: "pending-then-refused", Outcome: load.OutcomeUnavailable, Deadline: 10 * time.Second, Attempts: []load.Attempt{
			{Code: 202, Status: "retry_later", RetryAfter: time.Second},
			{At: time.Second, Code: 503, Status: "unavailable", Reason: "db_unavailable", RetryAfter: time.Second},
		}},
		{ID: "refused", Outcome: load.OutcomeUnavailable, Deadline: 10 * time.Second, Attempts: []load.Attempt{
			{Code: 503, Status: "unavailable", RetryAfter: time.Second},
		}},
	}}
	f := &judge.Facts{OrdersKnown: true, Orders: []judge.Order{{CheckoutID: "pending-then-refused", Units: 1}, {CheckoutID: "refused", Units: 1}}}
	r := judge.ReconcileAll(f, shoppers(rep), 0)
	if r.Invariants.OrdersToldFailed != 1 || !slices.Equal(r.Examples["orders_told_failed"].IDs, []string{"refused"}) {
		t.Errorf("orders told failed %d %v, want 1 (refused)", r.Invariants.OrdersToldFailed, r.Examples["orders_told_failed"])
	}
}

// A purchase promise reads when each shopper got its final answer or left.
func TestShoppersCarryWhenTheyFinished(t *testing.T) {
	rep := &load.Report{Start: time.Now(), Shoppers: []*load.Shopper{
		{ID: "a", Outcome: load.OutcomeConfirmed, Scheduled: time.Second, Started: time.Second, Finished: 3 * time.Second, Deadline: 11 * time.Second,
			Attempts: []load.Attempt{{At: time.Second, Took: 2 * time.Second, Code: 200, Status: "confirmed"}}},
	}}
	if vs := shoppers(rep); vs[0].Finished != 3*time.Second {
		t.Errorf("finished %v, want 3s", vs[0].Finished)
	}
}

// A shopper whose last answer said its purchase was pending (paid, the
// order not yet confirmed: the store crashed between writing the order
// and answering; or queued, and polled) who left before it could ask
// again, was charged before it left and holds the order made with that
// charge, knew it might have bought and has what it paid for: not charged
// after leaving, whether its last answer came before the charge or after.
// Every other way of leaving with that charge still counts.
func TestAShopperToldPendingWhoHoldsTheOrderIsNotChargedAfterLeaving(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	// Told pending at 200ms (sent at 50ms, answered 150ms later), then
	// gone with a request in flight; charged at 100ms.
	rep := &load.Report{Start: t0, Shoppers: []*load.Shopper{{ID: "a", Outcome: load.OutcomeGaveUp, Deadline: time.Second, Attempts: []load.Attempt{
		{At: 50 * time.Millisecond, Took: 150 * time.Millisecond, Code: 202, Status: "retry_later", Reason: "order_unconfirmed", RetryAfter: time.Second},
		{At: 900 * time.Millisecond, Took: 120 * time.Millisecond, Err: context.DeadlineExceeded.Error()},
	}}}}
	vs := shoppers(rep)
	if len(vs) != 1 || !vs[0].ToldPending.Equal(t0.Add(200*time.Millisecond)) || vs[0].Told != "" {
		t.Fatalf("views: %+v", vs)
	}
	// A refusal after the pending answer (come back: a poll that found
	// the store down) leaves it; a final answer that the purchase failed
	// unsays it.
	then := func(a load.Attempt) []judge.Shopper {
		s := *rep.Shoppers[0]
		s.Attempts = append(slices.Clone(s.Attempts[:1]), a)
		return shoppers(&load.Report{Start: t0, Shoppers: []*load.Shopper{&s}})
	}
	if v := then(load.Attempt{At: 400 * time.Millisecond, Took: time.Millisecond, Code: 503, Status: "unavailable", Reason: "breaker_open", RetryAfter: time.Second}); !v[0].ToldPending.Equal(t0.Add(200 * time.Millisecond)) {
		t.Errorf("told pending, then refused: ToldPending %v, want the pending answer's", v[0].ToldPending)
	}
	if v := then(load.Attempt{At: 400 * time.Millisecond, Took: time.Millisecond, Code: 500, Status: "error"}); !v[0].ToldPending.IsZero() {
		t.Errorf("told pending, then told it failed: ToldPending %v, want zero", v[0].ToldPending)
	}
	healthy := func() (*judge.Facts, []judge.Shopper) {
		return &judge.Facts{Initial: p64(1), Sold: p64(1), OrdersKnown: true, ChargesKnown: true,
			Orders:  []judge.Order{{CheckoutID: "a", Charge: "ch_a", Units: 1}},
			Charges: []judge.Charge{{CheckoutID: "a", ID: "ch_a", Status: "approved", At: t0.Add(100 * time.Millisecond)}}}, []judge.Shopper{vs[0]}
	}
	for name, ok := range map[string]func(f *judge.Facts, s []judge.Shopper){
		"told so after the charge": func(*judge.Facts, []judge.Shopper) {},
		// Its last poll came before the charge, and its patience ended
		// before the next: it knew the same.
		"told so before the charge": func(f *judge.Facts, _ []judge.Shopper) { f.Charges[0].At = t0.Add(300 * time.Millisecond) },
	} {
		f, s := healthy()
		ok(f, s)
		if iv, _ := judge.Reconcile(f, s, 0); iv.ChargedAfterLeaving != 0 {
			t.Errorf("%s, holding the order made with its charge: counted as charged after leaving", name)
		}
	}
	for name, brk := range map[string]func(f *judge.Facts, s []judge.Shopper){
		"never told pending":                func(_ *judge.Facts, s []judge.Shopper) { s[0].ToldPending = time.Time{} },
		"told pending, then told it failed": func(_ *judge.Facts, s []judge.Shopper) { s[0].ToldPending, s[0].Told = time.Time{}, "error" },
		"no order":                          func(f *judge.Facts, _ []judge.Shopper) { f.Orders, f.Sold = nil, p64(0) },
		"the order paid another way":        func(f *judge.Facts, _ []judge.Shopper) { f.Orders[0].Charge = "ch_other" },
		"the order's charge unknown":        func(f *judge.Facts, _ []judge.Shopper) { f.Orders[0].Charge = "" },
		"the charge's id unknown":           func(f *judge.Facts, _ []judge.Shopper) { f.Charges[0].ID = "" },
		"the charge's time unknown":         func(f *judge.Facts, _ []judge.Shopper) { f.Charges[0].At = time.Time{} },
		"charged after its deadline":        func(f *judge.Facts, _ []judge.Shopper) { f.Charges[0].At = t0.Add(2 * time.Second) },
		"orders unknown":                    func(f *judge.Facts, _ []judge.Shopper) { f.Orders, f.OrdersKnown, f.Sold = nil, false, p64(1) },
		"a second charge beside the order": func(f *judge.Facts, _ []judge.Shopper) {
			f.Charges = append(f.Charges, judge.Charge{CheckoutID: "a", ID: "ch_a2", Status: "approved", At: t0.Add(150 * time.Millisecond)})
		},
	} {
		f, s := healthy()
		brk(f, s)
		if iv, _ := judge.Reconcile(f, s, 0); iv.ChargedAfterLeaving != 1 {
			t.Errorf("%s: charged after leaving %d, want 1", name, iv.ChargedAfterLeaving)
		}
	}
}

// Judging, the load generator and the scenarios speak one vocabulary of
// outcomes: judge's typed words are load's, and those a promise may name
// are every final one but dropped.
func TestJudgeSpeaksTheLoadGeneratorsOutcomes(t *testing.T) {
	pairs := []struct {
		judge judge.Outcome
		load  string
	}{
		{judge.Confirmed, load.OutcomeConfirmed}, {judge.Declined, load.OutcomeDeclined}, {judge.SoldOut, load.OutcomeSoldOut},
		{judge.TooLate, load.OutcomeTooLate}, {judge.GaveUp, load.OutcomeGaveUp}, {judge.Unavailable, load.OutcomeUnavailable},
		{judge.Error, load.OutcomeError}, {judge.OK, load.OutcomeOK}, {judge.Dropped, load.OutcomeDropped},
	}
	var final []string
	for _, p := range pairs {
		if string(p.judge) != p.load {
			t.Errorf("judge says %q where the load generator says %q", p.judge, p.load)
		}
		if p.judge != judge.Dropped {
			final = append(final, string(p.judge))
		}
	}
	if names := scenarios.OutcomeNames(); !slices.Equal(names, final) {
		t.Errorf("a scenario may name %v, judging knows %v", names, final)
	}
}

// A pending answer speaks for its own step only: a hold told "come back"
// (retry_later) that then went through (next) says nothing of the pay
// step after it. A refusal on the pay step is a refusal, its order one
// the shopper was told failed; a shopper who left while paying, charged,
// left without a word that its purchase was pending, however the hold
// step went. A refusal on the step that was pending still leaves the
// shopper knowing it was accepted.
func TestAPendingAnswerSpeaksForItsOwnStepOnly(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	hold := []load.Attempt{
		{At: 0, Took: 10 * time.Millisecond, Step: 0, Code: 202, Status: "retry_later", RetryAfter: 100 * time.Millisecond},
		{At: 110 * time.Millisecond, Took: 10 * time.Millisecond, Step: 0, Code: 200, Status: "next"},
	}
	rep := &load.Report{Start: t0, Shoppers: []*load.Shopper{
		{ID: "refused-on-pay", Outcome: load.OutcomeUnavailable, Deadline: 10 * time.Second, Attempts: append(slices.Clone(hold),
			load.Attempt{At: 130 * time.Millisecond, Took: 10 * time.Millisecond, Step: 1, Code: 503, Status: "unavailable", Reason: "payment"})},
		{ID: "left-while-paying", Outcome: load.OutcomeGaveUp, Deadline: time.Second, Attempts: append(slices.Clone(hold),
			load.Attempt{At: 130 * time.Millisecond, Took: 870 * time.Millisecond, Step: 1, Err: context.DeadlineExceeded.Error()})},
		{ID: "refused-while-holding", Outcome: load.OutcomeUnavailable, Deadline: 10 * time.Second, Attempts: []load.Attempt{hold[0],
			{At: 110 * time.Millisecond, Took: 10 * time.Millisecond, Step: 0, Code: 503, Status: "unavailable"}}},
	}}
	vs := shoppers(rep)
	for _, v := range vs[:2] {
		if !v.ToldPending.IsZero() {
			t.Errorf("%s after the hold went through: ToldPending %v, want none", v.ID, v.ToldPending)
		}
	}
	if vs[2].ToldPending.IsZero() {
		t.Errorf("refused on the step that was pending: ToldPending unset, want the pending answer's")
	}
	f := &judge.Facts{OrdersKnown: true, ChargesKnown: true,
		Orders: []judge.Order{{CheckoutID: "refused-on-pay", Charge: "ch_1", Units: 1}, {CheckoutID: "left-while-paying", Charge: "ch_2", Units: 1}},
		Charges: []judge.Charge{{CheckoutID: "refused-on-pay", ID: "ch_1", Status: "approved", At: t0.Add(135 * time.Millisecond)},
			{CheckoutID: "left-while-paying", ID: "ch_2", Status: "approved", At: t0.Add(500 * time.Millisecond)}}}
	r := judge.ReconcileAll(f, vs[:2], 0)
	if r.Invariants.OrdersToldFailed != 1 || r.Invariants.ChargedAfterLeaving != 1 {
		t.Errorf("pay step refused or left, orders and charges made: orders_told_failed %d, charged_after_leaving %d, want 1 and 1",
			r.Invariants.OrdersToldFailed, r.Invariants.ChargedAfterLeaving)
	}
}
