package predict

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/checkout/admission"
	"github.com/gameday-dev/gameday/gameday/flash"
	"github.com/gameday-dev/gameday/gameday/load"
)

// simulate runs m once with seed and returns the finished simulation, so
// that a test can look at every shopper's record.
func simulate(t *testing.T, m Model, seed int64) (*sim, flash.Figures) {
	t.Helper()
	s, err := newSim(m)
	if err != nil {
		t.Fatal(err)
	}
	f, err := s.run(seed)
	if err != nil {
		t.Fatal(err)
	}
	return s, f
}

// steady is arrivals at rate per second for d.
func steady(rate float64, d time.Duration) []load.Stage {
	return []load.Stage{{Duration: time.Millisecond, Target: rate}, {Duration: d, Target: rate}}
}

// overload is a small sale well beyond what 4 payment slots can serve,
// with shoppers who retry: short enough for a test, busy enough for every
// mode to show its character.
func overload(mode admission.Mode) Model {
	return Model{
		Stages: []load.Stage{
			{Duration: 2 * time.Second, Target: 40},
			{Duration: 8 * time.Second, Target: 40},
			{Duration: 2 * time.Second, Target: 0},
		},
		Patience: 5 * time.Second, MaxRetries: 20, RetryJitter: 0.5,
		Stock:      10_000,
		Admission:  admission.Config{Mode: mode, InProgress: 4},
		PaymentMin: 100 * time.Millisecond, PaymentMax: 300 * time.Millisecond, DeclineRate: 0.05, Slots: 4,
		MinPaymentTime: 300 * time.Millisecond,
		Overhead:       2 * time.Millisecond,
	}
}

// shopperOutcomes are every outcome a simulated shopper can have.
var shopperOutcomes = []string{
	load.OutcomeConfirmed, load.OutcomeDeclined, load.OutcomeSoldOut, load.OutcomeTooLate,
	load.OutcomeGaveUp, load.OutcomeUnavailable, load.OutcomeError, load.OutcomeDropped,
}

// TestConservation checks every shopper's record in every mode, both
// inventories, with a stock that sells out and a pool that drops: one
// outcome each, attempts consistent with it, and nothing left in flight.
func TestConservation(t *testing.T) {
	for _, mode := range admission.Modes() {
		for _, variant := range []struct{ naive, line bool }{{false, false}, {true, false}, {false, true}} {
			naive := variant.naive
			m := overload(mode)
			m.Naive, m.Stock, m.MaxShoppers = naive, 150, 120
			m.PaymentTimeout = time.Second
			m.PaymentBulkhead = 6
			m.Breaker = Breaker{Failures: 5, OpenFor: time.Second}
			if variant.line {
				// A timeout inside the payment latency opens the breaker
				// (three in a row), which refuses the waiters a freed line
				// slot goes to; a stock that lasts keeps them charging.
				m.LineSlots, m.PaymentTimeout = m.Slots, 250*time.Millisecond
				m.Stock, m.Breaker.Failures = 10_000, 3
			}
			s, f := simulate(t, m, 7)
			name := mode.String()
			if naive {
				name += "/naive"
			}
			if variant.line {
				name += "/line"
			}
			checkRecords(t, name, s, m)
			if f.Shoppers != len(s.schedule) {
				t.Errorf("%s: %d shoppers in the figures, %d arrivals", name, f.Shoppers, len(s.schedule))
			}
			if s.calls != 0 || s.room.Stats().InProgress != 0 {
				t.Errorf("%s: after the run %d payment calls and %d checkouts still in progress", name, s.calls, s.room.Stats().InProgress)
			}
			for r, req := range s.reqs {
				if !req.answered || req.calling || req.inLine || req.lineSlot || req.charge == chargeQueued || req.charge == chargeProcessing {
					t.Errorf("%s: request %d unfinished after the run: %+v", name, r, req)
					break
				}
			}
			if m.Slots > 0 && s.freeSlots != m.Slots {
				t.Errorf("%s: %d of %d slots free after the run", name, s.freeSlots, m.Slots)
			}
			if s.lineFree != m.LineSlots {
				t.Errorf("%s: %d of %d line slots free after the run", name, s.lineFree, m.LineSlots)
			}
			if !naive && s.available+s.sold != m.Stock {
				t.Errorf("%s: %d available + %d sold after the run, stock %d", name, s.available, s.sold, m.Stock)
			}
		}
	}
}

// checkRecords checks that each shopper has exactly one outcome, that its
// attempts agree with it, and that the times are in order.
func checkRecords(t *testing.T, name string, s *sim, m Model) {
	t.Helper()
	counts := map[string]int{}
	for i, r := range s.recs {
		counts[r.Outcome]++
		if !slices.Contains(shopperOutcomes, r.Outcome) {
			t.Errorf("%s: shopper %d: outcome %q", name, i, r.Outcome)
			continue
		}
		if r.Outcome == load.OutcomeDropped {
			if len(r.Attempts) != 0 {
				t.Errorf("%s: dropped shopper %d has %d attempts", name, i, len(r.Attempts))
			}
			continue
		}
		if len(r.Attempts) == 0 || len(r.Attempts) > m.MaxRetries+1 {
			t.Errorf("%s: shopper %d: %d attempts, want 1 to %d", name, i, len(r.Attempts), m.MaxRetries+1)
			continue
		}
		if r.Started != r.Scheduled {
			t.Errorf("%s: shopper %d started at %v, scheduled %v", name, i, r.Started, r.Scheduled)
		}
		at := r.Started
		for k, a := range r.Attempts {
			if a.At < at || a.Took < 0 {
				t.Errorf("%s: shopper %d attempt %d at %v took %v, after %v", name, i, k, a.At, a.Took, at)
			}
			at = a.At + a.Took
			if k < len(r.Attempts)-1 && a.Code != 503 {
				t.Errorf("%s: shopper %d attempt %d: %d, yet it tried again", name, i, k, a.Code)
			}
		}
		last := r.Attempts[len(r.Attempts)-1]
		if at != r.Finished {
			t.Errorf("%s: shopper %d finished at %v, its last attempt ended at %v", name, i, r.Finished, at)
		}
		want := map[string]int{
			load.OutcomeConfirmed: 200, load.OutcomeDeclined: 402, load.OutcomeSoldOut: 409,
			load.OutcomeTooLate: 410, load.OutcomeUnavailable: 503, load.OutcomeError: 400,
		}
		switch {
		case r.Outcome == load.OutcomeGaveUp && last.Err:
			if cut := s.shoppers[i].deadline + attemptGrace; r.Finished != cut {
				t.Errorf("%s: shopper %d cut at %v, want its deadline plus grace %v", name, i, r.Finished, cut)
			}
		case r.Outcome == load.OutcomeGaveUp:
			if last.Code != 503 {
				t.Errorf("%s: shopper %d gave up after a %d", name, i, last.Code)
			}
		case last.Code != want[r.Outcome]:
			t.Errorf("%s: shopper %d is %s after a %d", name, i, r.Outcome, last.Code)
		}
		if r.Outcome == load.OutcomeConfirmed && !r.Charged {
			t.Errorf("%s: shopper %d bought without a charge", name, i)
		}
	}
	total := 0
	for _, n := range counts {
		total += n
	}
	if total != len(s.schedule) {
		t.Errorf("%s: %d outcomes for %d arrivals", name, total, len(s.schedule))
	}
	for _, o := range []string{load.OutcomeConfirmed} {
		if counts[o] == 0 {
			t.Errorf("%s: no shopper is %s: the scenario does not exercise the checkout", name, o)
		}
	}
}

// TestShoppersAsLoad checks that a simulated shopper waits exactly what
// gameday/load's shopper with the same plan would: the Retry-After times
// its seeded jitter for that retry.
func TestShoppersAsLoad(t *testing.T) {
	m := overload(admission.ModeLottery)
	const seed = 11
	s, _ := simulate(t, m, seed)
	choices := load.Shoppers(m.plan(seed))
	retryAfter := s.room.Config().RetryAfter
	checked := 0
	for i, r := range s.recs {
		for k := 1; k < len(r.Attempts); k++ {
			prev := r.Attempts[k-1]
			want := prev.At + prev.Took + time.Duration(float64(retryAfter)*choices[i].Jitter(k-1))
			if r.Attempts[k].At != want {
				t.Fatalf("shopper %d retry %d at %v, want %v", i, k, r.Attempts[k].At, want)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no retry to check")
	}
}

// TestDetachedCharge plays two shoppers against one slow payment slot: the
// first gets the slot, the second waits for it, and both run out of
// patience before any charge ends.
func TestDetachedCharge(t *testing.T) {
	base := Model{
		// Two arrivals, about 0.5 s apart.
		Stages:   steady(2, time.Second),
		Patience: 3 * time.Second, Stock: 10,
		PaymentMin: 10 * time.Second, PaymentMax: 10 * time.Second, Slots: 1,
	}
	type want struct {
		outcome  string
		finished time.Duration // after the shopper's deadline
		charged  bool
	}
	for _, tc := range []struct {
		mode admission.Mode
		want [2]want
	}{
		// The deadline is honoured: the charge in the slot is voided at the
		// first shopper's deadline, the waiting one dropped at the second's,
		// both told too_late at their deadlines; nobody is charged.
		{admission.ModeDeadline, [2]want{{load.OutcomeTooLate, 0, false}, {load.OutcomeTooLate, 0, false}}},
		// The charge is detached: both shoppers leave at their deadline plus
		// grace (timeouts) and are charged after they left, the second once
		// the first charge frees the slot.
		{admission.ModeQueue, [2]want{{load.OutcomeGaveUp, attemptGrace, true}, {load.OutcomeGaveUp, attemptGrace, true}}},
	} {
		t.Run(tc.mode.String(), func(t *testing.T) {
			m := base
			m.Admission.Mode = tc.mode
			s, f := simulate(t, m, 1)
			if len(s.recs) != 2 {
				t.Fatalf("%d arrivals, want 2", len(s.recs))
			}
			for i, w := range tc.want {
				r := s.recs[i]
				if r.Outcome != w.outcome || r.Finished != s.shoppers[i].deadline+w.finished || r.Charged != w.charged {
					t.Errorf("shopper %d: %s at %v, charged %v; want %s at %v, charged %v", i,
						r.Outcome, r.Finished, r.Charged, w.outcome, s.shoppers[i].deadline+w.finished, w.charged)
				}
			}
			// Queue: the second charge starts when the first ends, 10 s
			// after the first arrival, and the checkouts are in progress
			// until it ends, 10 s later.
			if tc.mode == admission.ModeQueue {
				if f.ChargedAfterLeaving != 2 || f.Timeouts != 2 {
					t.Errorf("charged after leaving %d, timeouts %d; want 2 and 2", f.ChargedAfterLeaving, f.Timeouts)
				}
				if f.MaxInProgress != 2 {
					t.Errorf("max in progress %d, want 2", f.MaxInProgress)
				}
			}
		})
	}
}

// TestPaymentLine is the checkout's TestPaymentLineSkipsWhoCannotFinish
// in the model: every charge takes 1s, the provider has one slot, and
// shoppers A, B and C come 0.5s apart with 1.4s of patience. A holds the
// slot until 1s; B could finish only with the slot by 0.9s.
//
// With the checkout's line B leaves too_late at 0.9s, 0.5s before its
// deadline, uncharged, and the slot goes from A to C, who buys. Through the
// provider's queue B gets the slot at 1s, is cut at its deadline and
// charged after (voided); C, behind B's doomed charge, is cut too.
func TestPaymentLine(t *testing.T) {
	for _, line := range []bool{true, false} {
		m := Model{
			Stages: steady(2, 1700*time.Millisecond), Patience: 1400 * time.Millisecond, Stock: 10,
			Admission:      admission.Config{Mode: admission.ModeDeadline},
			MinPaymentTime: time.Second, PaymentMin: time.Second, PaymentMax: time.Second, Slots: 1,
		}
		if line {
			m.LineSlots = 1
		}
		s, f := simulate(t, m, 1)
		if len(s.recs) != 3 {
			t.Fatalf("%d arrivals, want 3", len(s.recs))
		}
		a, b, c := s.recs[0], s.recs[1], s.recs[2]
		if a.Outcome != load.OutcomeConfirmed {
			t.Errorf("line %v: A %s, want confirmed", line, a.Outcome)
		}
		if b.Outcome != load.OutcomeTooLate || b.Charged {
			t.Errorf("line %v: B %s, charged %v; want too_late, uncharged", line, b.Outcome, b.Charged)
		}
		if line {
			if want := b.Scheduled + m.Patience - m.MinPaymentTime; b.Finished != want {
				t.Errorf("B told at %v, want %v: the moment it could no longer finish", b.Finished, want)
			}
			if c.Outcome != load.OutcomeConfirmed || f.Confirmed != 2 {
				t.Errorf("C %s, %d confirmed; want C confirmed, 2 in all", c.Outcome, f.Confirmed)
			}
			continue
		}
		if want := b.Scheduled + m.Patience; b.Finished != want {
			t.Errorf("provider queue: B told at %v, want its deadline %v", b.Finished, want)
		}
		if c.Outcome != load.OutcomeTooLate || f.Confirmed != 1 {
			t.Errorf("provider queue: C %s, %d confirmed; want C too_late, 1 in all", c.Outcome, f.Confirmed)
		}
	}
}

// TestMinPaymentTime: with less time left than MinPaymentTime the
// checkout answers too_late without charging, in the modes that honour
// the deadline, and ignores it in the others.
func TestMinPaymentTime(t *testing.T) {
	for _, mode := range admission.Modes() {
		m := Model{
			Stages: steady(10, time.Second), Patience: time.Second, Stock: 100,
			Admission:      admission.Config{Mode: mode, InProgress: 1000},
			MinPaymentTime: time.Second, PaymentMin: time.Millisecond, PaymentMax: time.Millisecond,
			MaxRetries: 5, RetryJitter: 0.5,
		}
		_, f := simulate(t, m, 1)
		// The rooms are never full (N = 1000), so even a fair room admits
		// every first attempt at once, and the deadline alone decides.
		switch {
		case mode.HonoursDeadline():
			if f.TooLate != f.Shoppers {
				t.Errorf("%s: %d of %d too late, want all", mode, f.TooLate, f.Shoppers)
			}
		default:
			if f.Confirmed != f.Shoppers {
				t.Errorf("%s: %d of %d confirmed, want all", mode, f.Confirmed, f.Shoppers)
			}
		}
	}
}

// TestGuard drives every charge into the payment guard's timeout: the
// breaker opens after Failures of them, refuses at once while open, lets
// one probe through after OpenFor, and a full bulkhead refuses too.
func TestGuard(t *testing.T) {
	m := Model{
		Stages: steady(20, 3*time.Second), Patience: 10 * time.Second, Stock: 1000,
		Admission:  admission.Config{Mode: admission.ModeQueue},
		PaymentMin: time.Second, PaymentMax: time.Second,
		// Every charge misses the deadline (a probe's too).
		PaymentTimeout: 200 * time.Millisecond,
		Breaker:        Breaker{Failures: 3, OpenFor: 500 * time.Millisecond, ProbeTimeout: 100 * time.Millisecond},
	}
	s, f := simulate(t, m, 1)
	if f.Confirmed != 0 || f.ChargedAfterLeaving != 0 {
		t.Errorf("%d confirmed, %d charged after leaving: every charge times out and is voided", f.Confirmed, f.ChargedAfterLeaving)
	}
	// MaxRetries is 0: every call is an arrival's. Those made until the
	// third timeout (arrivals first at equal times) time out, and that
	// third one opens the breaker; the first arrival strictly more than
	// OpenFor later is a probe, which times out after ProbeTimeout.
	openAt := s.schedule[2] + m.PaymentTimeout
	var want []time.Duration
	for _, at := range s.schedule {
		if at <= openAt {
			want = append(want, at+m.PaymentTimeout)
		}
	}
	for _, at := range s.schedule {
		if at > openAt+m.Breaker.OpenFor {
			want = append(want, at+m.Breaker.ProbeTimeout)
			break
		}
	}
	var timeouts []time.Duration
	refused := 0
	for _, r := range s.recs {
		for _, a := range r.Attempts {
			switch a.Reason {
			case "timeout":
				timeouts = append(timeouts, a.At+a.Took)
			case "breaker_open":
				refused++
				if a.Took != 0 {
					t.Errorf("a breaker_open refusal took %v, want at once", a.Took)
				}
			default:
				t.Fatalf("answer %d %q: want only timeouts and breaker_open", a.Code, a.Reason)
			}
		}
	}
	slices.Sort(timeouts)
	if len(timeouts) < len(want) || !slices.Equal(timeouts[:len(want)], want) {
		t.Errorf("timeouts at %v, want %v first", timeouts, want)
	}
	if refused == 0 {
		t.Error("no breaker_open refusal")
	}

	// The bulkhead: at most 3 calls at once, the others refused.
	m.Breaker, m.PaymentTimeout, m.PaymentBulkhead = Breaker{}, 0, 3
	s, f = simulate(t, m, 1)
	type edge struct {
		at time.Duration
		d  int
	}
	var edges []edge
	full := 0
	for _, r := range s.recs {
		for _, a := range r.Attempts {
			switch a.Reason {
			case "bulkhead_full":
				full++
			case "":
				edges = append(edges, edge{a.At, 1}, edge{a.At + a.Took, -1})
			}
		}
	}
	slices.SortFunc(edges, func(a, b edge) int { return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.d, b.d)) })
	most, n := 0, 0
	for _, e := range edges {
		n += e.d
		most = max(most, n)
	}
	if most != m.PaymentBulkhead || full == 0 || f.Confirmed == 0 {
		t.Errorf("%d charges at once, %d refused bulkhead_full, %d confirmed: want %d, some and some", most, full, f.Confirmed, m.PaymentBulkhead)
	}
}

func TestBreakerRules(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	b := newBreaker(Breaker{Failures: 2, OpenFor: ms(100), Probes: 2})
	call := func(at time.Duration) (bool, bool, uint32) { return b.allow(at) }
	ok, _, g0 := call(0)
	ok2, _, _ := call(0)
	if !ok || !ok2 {
		t.Fatal("closed breaker refused")
	}
	b.report(ms(1), g0, failure)
	b.report(ms(2), g0, success) // resets the run of failures
	b.report(ms(3), g0, failure)
	if b.state != closed {
		t.Fatal("opened after failures that were not in a row")
	}
	b.report(ms(4), g0, excluded) // a caller leaving is no failure
	b.report(ms(5), g0, failure)
	if b.state != open {
		t.Fatalf("state %d after two failures in a row, want open", b.state)
	}
	if ok, _, _ := call(ms(105)); ok {
		t.Fatal("let a call through exactly OpenFor after opening (gobreaker waits strictly longer)")
	}
	ok, probe, g1 := call(ms(106))
	ok2, _, g2 := call(ms(106))
	ok3, _, _ := call(ms(106))
	if !ok || !probe || !ok2 || ok3 {
		t.Fatalf("half-open: %v %v %v, probe %v: want two probes, the third refused", ok, ok2, ok3, probe)
	}
	b.report(ms(107), g0, failure) // a result of an older generation
	if b.state != halfOpen {
		t.Fatal("a stale result changed the state")
	}
	b.report(ms(108), g2, excluded) // gives its place back
	ok4, _, g4 := call(ms(108))
	if !ok4 {
		t.Fatal("an excluded probe did not give its place back")
	}
	b.report(ms(109), g1, success)
	b.report(ms(110), g4, success)
	if b.state != closed {
		t.Fatalf("state %d after Probes successes, want closed", b.state)
	}
}

func TestEventOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var q events
	due := map[event]bool{} // pushed and not popped
	for i := range 5000 {
		// Few distinct times, so that ties are common; distinct ids, so
		// that events are distinct.
		e := newEvent(time.Duration(rng.IntN(50)), kind(rng.IntN(int(evTick)+1)), int32(i))
		q.push(e)
		due[e] = true
		if rng.IntN(3) == 0 { // pops among the pushes
			got := q.pop()
			delete(due, got)
			for x := range due {
				if x.before(got) {
					t.Fatalf("popped %+v while %+v was due before it", got, x)
				}
			}
		}
	}
	var prev event
	for i := 0; len(q) > 0; i++ {
		e := q.pop()
		delete(due, e)
		if i > 0 && e.before(prev) {
			t.Fatalf("popped %+v after %+v", e, prev)
		}
		prev = e
	}
	if len(due) != 0 {
		t.Fatalf("%d events never popped", len(due))
	}
}

// TestRetryAfter: the checkout's own refusals ask for Model.RetryAfter,
// the waiting room's for Admission.RetryAfter, which defaults to the
// checkout's as in checkout.Config.
func TestRetryAfter(t *testing.T) {
	m := overload(admission.ModeLottery)
	m.RetryAfter = 300 * time.Millisecond
	s, _ := simulate(t, m, 1)
	if got := s.room.Config().RetryAfter; got != m.RetryAfter {
		t.Errorf("waiting room's retry after %v, want the checkout's %v", got, m.RetryAfter)
	}
	m.Admission.RetryAfter = 700 * time.Millisecond
	s, _ = simulate(t, m, 1)
	if got := s.room.Config().RetryAfter; got != m.Admission.RetryAfter {
		t.Errorf("waiting room's retry after %v, want its own %v", got, m.Admission.RetryAfter)
	}
}

// TestRoundTrip: a shopper told to come back sends again the run's round
// trip after the wait it drew; a round trip on every answer to come back
// asks the room less often; with a range, each run draws one of its own,
// the same for every answer of the run.
func TestRoundTrip(t *testing.T) {
	m := overload(admission.ModeFair)
	m.RetryJitter, m.Admission.RetryAfter = 0, 200*time.Millisecond
	// roundTrip is the one round trip of the run with seed, read from its
	// shoppers' come-back gaps, and the run's waiting-room answers.
	roundTrip := func(seed int64) (time.Duration, int) {
		s, f := simulate(t, m, seed)
		rt := time.Duration(-1)
		for i, r := range s.recs {
			for k := 1; k < len(r.Attempts); k++ {
				a := r.Attempts[k-1]
				if a.Reason != admission.RefusalWaitingRoom {
					continue
				}
				got := r.Attempts[k].At - (a.At + a.Took) - m.Admission.RetryAfter
				if rt >= 0 && got != rt {
					t.Fatalf("seed %d: shopper %d came back %v after its wait, others %v", seed, i, got, rt)
				}
				rt = got
			}
		}
		if rt < 0 {
			t.Fatalf("seed %d: no shopper was told to come back", seed)
		}
		return rt, f.WaitingRoomAnswers
	}
	m.RoundTrip = 0
	zero, none := roundTrip(1)
	m.RoundTrip = 50 * time.Millisecond
	fifty, some := roundTrip(1)
	if zero != 0 || fifty != m.RoundTrip {
		t.Errorf("round trips %v and %v, want 0 and %v", zero, fifty, m.RoundTrip)
	}
	if some >= none {
		t.Errorf("waiting-room answers %d with a 50 ms round trip, %d without: want fewer", some, none)
	}
	m.RoundTrip, m.RoundTripMax = 10*time.Millisecond, 60*time.Millisecond
	seen := map[time.Duration]bool{}
	for seed := range int64(5) {
		rt, _ := roundTrip(seed)
		if rt < m.RoundTrip || rt > m.RoundTripMax {
			t.Errorf("seed %d: round trip %v, outside [%v, %v]", seed, rt, m.RoundTrip, m.RoundTripMax)
		}
		if again, _ := roundTrip(seed); again != rt {
			t.Errorf("seed %d: round trip %v, then %v", seed, rt, again)
		}
		seen[rt] = true
	}
	if len(seen) < 3 {
		t.Errorf("five seeds drew round trips %v: want them to differ", seen)
	}
}
