package load

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeTarget is a Target whose answers a test scripts: our own logic is
// under test, not the network's. Each checkout id's requests are counted
// from 0. It checks what every request must carry: a context deadline of
// the shopper's deadline plus the grace.
type fakeTarget struct {
	tb     testing.TB
	answer func(ctx context.Context, c *Call, attempt int) (Answer, error)
	// shift is the run's clock minus this machine's: the attempt's
	// context ends at the shopper's deadline (on the run's clock) plus
	// AnswerGrace, on this machine's clock.
	shift time.Duration

	mu       sync.Mutex
	attempts map[string]int
	reqs     map[string][]Call // copies, as sent
	inFlight int
	maxIn    int
}

var _ Target = (*fakeTarget)(nil)

func newFake(tb testing.TB, answer func(ctx context.Context, c *Call, attempt int) (Answer, error)) *fakeTarget {
	return &fakeTarget{tb: tb, answer: answer, attempts: map[string]int{}, reqs: map[string][]Call{}}
}

func (f *fakeTarget) Do(ctx context.Context, c *Call) (Answer, error) {
	want := c.Deadline.Add(AnswerGrace).Add(-f.shift)
	if dl, ok := ctx.Deadline(); !ok || dl.Sub(want).Abs() > time.Millisecond || (f.shift == 0 && !dl.Equal(want)) {
		f.tb.Errorf("%s: attempt context deadline %v (%v), want %v", c.CheckoutID, dl, ok, want)
	}
	f.mu.Lock()
	n := f.attempts[c.CheckoutID]
	f.attempts[c.CheckoutID]++
	sent := *c
	sent.Kept = append([]string(nil), c.Kept...)
	f.reqs[c.CheckoutID] = append(f.reqs[c.CheckoutID], sent)
	f.inFlight++
	f.maxIn = max(f.maxIn, f.inFlight)
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.inFlight--
		f.mu.Unlock()
	}()
	return f.answer(ctx, c, n)
}

// codes are the statuses a checkout might give for each meaning (the
// load does not read them; attempts record them).
var codes = map[Meaning]int{MeansConfirmed: 200, MeansDeclined: 402, MeansSoldOut: 409, MeansTooLate: 410,
	MeansUnavailable: 503, MeansRetryLater: 409, MeansError: 400, MeansNext: 201}

func answer(m Meaning) Answer { return Answer{Code: codes[m], Means: m} }

func comeBack(m Meaning, after time.Duration) Answer {
	a := answer(m)
	a.RetryAfter = after
	return a
}

// step is one scripted attempt; a deaf one answers after its delay even
// when the attempt's context ended first (a target that does not stop).
type step struct {
	ans   Answer
	err   error
	delay time.Duration // before answering
	deaf  bool
}

// scripted answers attempt k with steps[k], the last step repeating.
func scripted(steps ...step) func(context.Context, *Call, int) (Answer, error) {
	return func(ctx context.Context, _ *Call, attempt int) (Answer, error) {
		s := steps[min(attempt, len(steps)-1)]
		if s.deaf {
			time.Sleep(s.delay)
			return s.ans, s.err
		}
		if s.delay > 0 {
			select {
			case <-time.After(s.delay):
			case <-ctx.Done():
				return Answer{}, ctx.Err()
			}
		}
		return s.ans, s.err
	}
}

// onePlan has a single shopper, due 10 ms into the sale (a ramp from 0 to
// 200/s over 10 ms has an area of exactly 1).
func onePlan() Plan {
	return Plan{
		Stages:      []Stage{{Duration: 10 * time.Millisecond, Target: 200}},
		Patience:    300 * time.Millisecond,
		MaxRetries:  2,
		RetryJitter: 0.5,
		MaxShoppers: 1,
		Seed:        1,
		IDPrefix:    "t",
	}
}

// collect returns an OnResult that counts calls per shopper.
func collect() (func(*Shopper), func() map[int]int) {
	var mu sync.Mutex
	calls := map[int]int{}
	return func(s *Shopper) {
			mu.Lock()
			calls[s.Index]++
			mu.Unlock()
		}, func() map[int]int {
			mu.Lock()
			defer mu.Unlock()
			return calls
		}
}

// A purchase pending to the end is polled while the shopper's patience
// lasts, beyond its retries, and the shopper gives up at its deadline.
func TestAShopperPollsAPendingPurchaseUntilItsPatienceEnds(t *testing.T) {
	plan := onePlan()
	f := newFake(t, scripted(step{ans: comeBack(MeansRetryLater, 20*time.Millisecond)}))
	rep, err := Run(context.Background(), plan, f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Shoppers[0]
	if s.Outcome != OutcomeGaveUp || len(s.Attempts) <= plan.MaxRetries+1 {
		t.Fatalf("outcome %q after %d attempts, want gave_up after more than %d: %+v", s.Outcome, len(s.Attempts), plan.MaxRetries+1, s.Attempts)
	}
	checkShopper(t, rep, plan, s)
}

func TestShopperOutcomes(t *testing.T) {
	const ra = 20 * time.Millisecond
	c := MeansConfirmed
	tests := []struct {
		name     string
		steps    []step
		want     string
		attempts int
		degraded bool
	}{
		// Final answers map one to one.
		{"confirmed", []step{{ans: answer(c)}}, OutcomeConfirmed, 1, false},
		{"declined", []step{{ans: answer(MeansDeclined)}}, OutcomeDeclined, 1, false},
		{"sold out", []step{{ans: answer(MeansSoldOut)}}, OutcomeSoldOut, 1, false},
		{"too late", []step{{ans: answer(MeansTooLate)}}, OutcomeTooLate, 1, false},
		// 400 and anything the contract does not have are errors, never
		// retried.
		{"invalid", []step{{ans: answer(MeansError)}}, OutcomeError, 1, false},
		{"500", []step{{ans: Answer{Code: 500}}}, OutcomeError, 1, false},
		{"200 that is not confirmed", []step{{ans: Answer{Code: 200}}}, OutcomeError, 1, false},
		{"an answer no rule understood", []step{{ans: Answer{Code: 409, Unmatched: true}}}, OutcomeError, 1, false},
		// No answer before the deadline: error; after it: the shopper
		// had left.
		{"transport error", []step{{err: errors.New("connection reset")}}, OutcomeError, 1, false},
		{"transport error after the deadline", []step{{err: errors.New("connection reset"), delay: 350 * time.Millisecond}}, OutcomeGaveUp, 1, false},
		// Patience means patience: a confirmation that comes well after
		// the deadline (300 ms; the grace is 20 ms) was never seen.
		{"confirmed after the shopper left", []step{{ans: answer(c), delay: 500 * time.Millisecond, deaf: true}}, OutcomeGaveUp, 1, false},
		// Told to come back, it does, with the same checkout id.
		{"unavailable then confirmed", []step{{ans: comeBack(MeansUnavailable, ra)}, {ans: answer(c)}}, OutcomeConfirmed, 2, false},
		{"in progress then confirmed", []step{{ans: comeBack(MeansRetryLater, ra)}, {ans: answer(c)}}, OutcomeConfirmed, 2, false},
		{"unavailable then too late", []step{{ans: comeBack(MeansUnavailable, ra)}, {ans: answer(MeansTooLate)}}, OutcomeTooLate, 2, false},
		// Out of retries (2 after the first): unavailable.
		{"always unavailable", []step{{ans: comeBack(MeansUnavailable, ra)}}, OutcomeUnavailable, 3, false},
		// A purchase in progress or pending is polled without spending
		// a retry: five polls, beyond the two retries, then confirmed;
		// and a poll before three refusals leaves the retries whole.
		{"pending five times then confirmed", []step{{ans: comeBack(MeansRetryLater, ra)}, {ans: comeBack(MeansRetryLater, ra)},
			{ans: comeBack(MeansRetryLater, ra)}, {ans: comeBack(MeansRetryLater, ra)}, {ans: comeBack(MeansRetryLater, ra)}, {ans: answer(c)}},
			OutcomeConfirmed, 6, false},
		{"pending then always unavailable", []step{{ans: comeBack(MeansRetryLater, ra)}, {ans: comeBack(MeansUnavailable, ra)}},
			OutcomeUnavailable, 4, false},
		// Not told when to come back: no retry.
		{"unavailable without Retry-After", []step{{ans: answer(MeansUnavailable)}}, OutcomeUnavailable, 1, false},
		// Told to come back after its deadline: it gives up at once.
		{"Retry-After past the deadline", []step{{ans: comeBack(MeansUnavailable, time.Second)}}, OutcomeGaveUp, 1, false},
		// A degraded answer marks the shopper.
		{"degraded", []step{{ans: Answer{Code: 200, Means: c, Degraded: true}}}, OutcomeConfirmed, 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			plan := onePlan()
			f := newFake(t, scripted(tt.steps...))
			onResult, calls := collect()
			rep, err := Run(context.Background(), plan, f, Options{OnResult: onResult})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if rep.Scheduled != 1 || rep.Started != 1 || rep.Dropped != 0 {
				t.Fatalf("scheduled %d, started %d, dropped %d; want 1, 1, 0", rep.Scheduled, rep.Started, rep.Dropped)
			}
			s := rep.Shoppers[0]
			if s.Outcome != tt.want || len(s.Attempts) != tt.attempts || s.Degraded != tt.degraded {
				t.Fatalf("outcome %q after %d attempts (degraded %v), want %q after %d (%v): %+v",
					s.Outcome, len(s.Attempts), s.Degraded, tt.want, tt.attempts, tt.degraded, s.Attempts)
			}
			if n := calls()[0]; n != 1 {
				t.Errorf("OnResult called %d times, want once", n)
			}
			checkShopper(t, rep, plan, s)
			reqs := f.reqs[s.ID]
			if len(reqs) != tt.attempts {
				t.Fatalf("target saw %d attempts, want %d", len(reqs), tt.attempts)
			}
			for k, r := range reqs {
				// A retry is the same purchase: only its attempt number grows.
				r.Attempt -= k
				if fmt.Sprint(r) != fmt.Sprint(reqs[0]) {
					t.Errorf("a retry changed the request: %+v, first %+v", r, reqs[0])
				}
			}
			// Each retry waited the asked time times this shopper's seeded
			// jitter draw, never less.
			choice := Shoppers(plan)[0]
			for k := 1; k < len(s.Attempts); k++ {
				prev := s.Attempts[k-1]
				want := time.Duration(float64(prev.RetryAfter) * choice.Jitter(k-1))
				if waited := s.Attempts[k].At - (prev.At + prev.Took); waited < want {
					t.Errorf("retry %d after %v, want at least %v", k, waited, want)
				}
			}
		})
	}
}

// checkShopper checks what holds for every shopper that started.
func checkShopper(t *testing.T, rep *Report, plan Plan, s *Shopper) {
	t.Helper()
	if s.Started < s.Scheduled || s.Finished < s.Started {
		t.Errorf("shopper %d: scheduled %v, started %v, finished %v", s.Index, s.Scheduled, s.Started, s.Finished)
	}
	if s.Deadline != s.Scheduled+plan.Patience {
		t.Errorf("shopper %d: deadline %v, want %v", s.Index, s.Deadline, s.Scheduled+plan.Patience)
	}
	if s.Latency != s.Finished-s.Scheduled {
		t.Errorf("shopper %d: latency %v, want finished-scheduled %v", s.Index, s.Latency, s.Finished-s.Scheduled)
	}
	// Every attempt but a poll (one after a retry_later answer) is the
	// first or spends a retry.
	spent := 0
	for i := range s.Attempts {
		if i == 0 || s.Attempts[i-1].Status != MeansRetryLater.String() {
			spent++
		}
	}
	if len(s.Attempts) == 0 || spent > plan.MaxRetries+1 || len(s.Attempts)-spent > maxPolls {
		t.Errorf("shopper %d: %d attempts, %d of them not polls", s.Index, len(s.Attempts), spent)
	}
	if len(s.Attempts) > 0 && s.Attempts[0].At < s.Started {
		t.Errorf("shopper %d: first attempt at %v, before its start %v", s.Index, s.Attempts[0].At, s.Started)
	}
}

var outcomes = map[string]bool{
	OutcomeConfirmed: true, OutcomeDeclined: true, OutcomeSoldOut: true, OutcomeTooLate: true,
	OutcomeGaveUp: true, OutcomeUnavailable: true, OutcomeError: true, OutcomeDropped: true,
}

// TestExactlyOneOutcome runs a few hundred shoppers against a target that
// answers anything the contract allows, at random (seeded), and checks that
// every shopper ends with exactly one outcome, reported exactly once.
func TestExactlyOneOutcome(t *testing.T) {
	plan := Plan{
		Stages:      []Stage{{Duration: 10 * time.Millisecond, Target: 400}, {Duration: time.Second, Target: 400}},
		Patience:    150 * time.Millisecond,
		MaxRetries:  3,
		RetryJitter: 0.5,
		MaxShoppers: 8,
		Seed:        3,
	}
	choices := []step{
		{ans: answer(MeansConfirmed)},
		{ans: answer(MeansDeclined)},
		{ans: answer(MeansSoldOut)},
		{ans: answer(MeansTooLate)},
		{ans: answer(MeansError)},
		{ans: comeBack(MeansUnavailable, 10*time.Millisecond)},
		{ans: comeBack(MeansRetryLater, 30*time.Millisecond)},
		{ans: comeBack(MeansUnavailable, 200*time.Millisecond)},
		{ans: answer(MeansUnavailable)},
		{err: errors.New("connection refused")},
		{ans: answer(MeansConfirmed), delay: 40 * time.Millisecond},
		{err: errors.New("reset"), delay: 200 * time.Millisecond},
	}
	var seq atomic.Uint64
	f := newFake(t, func(ctx context.Context, c *Call, attempt int) (Answer, error) {
		r := rand.New(rand.NewPCG(seq.Add(1), 9))
		return scripted(choices[r.IntN(len(choices))])(ctx, c, 0)
	})
	onResult, calls := collect()
	rep, err := Run(context.Background(), plan, f, Options{OnResult: onResult})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if rep.Scheduled != 402 || rep.Started+rep.Dropped != rep.Scheduled {
		t.Fatalf("scheduled %d, started %d, dropped %d", rep.Scheduled, rep.Started, rep.Dropped)
	}
	got := calls()
	counts := rep.Outcomes()
	total := 0
	for _, n := range counts {
		total += n
	}
	if total != rep.Scheduled || counts[OutcomeDropped] != rep.Dropped {
		t.Errorf("outcomes %v: %d in all, %d dropped; want %d, %d", counts, total, counts[OutcomeDropped], rep.Scheduled, rep.Dropped)
	}
	for i, s := range rep.Shoppers {
		if s.Index != i || !outcomes[s.Outcome] {
			t.Fatalf("shopper %d: index %d, outcome %q", i, s.Index, s.Outcome)
		}
		if got[i] != 1 {
			t.Errorf("shopper %d: OnResult called %d times", i, got[i])
		}
		if s.Outcome != OutcomeDropped {
			checkShopper(t, rep, plan, s)
		}
	}
	if f.maxIn > plan.MaxShoppers {
		t.Errorf("%d attempts in flight, pool of %d", f.maxIn, plan.MaxShoppers)
	}
	t.Logf("outcomes %v, late p50 %v p99 %v max %v", counts, rep.LateP50, rep.LateP99, rep.LateMax)
}

// TestDropsWhenThePoolIsFull: with a pool of 3 and a target that holds
// every shopper, the first 3 arrivals start and the other 7 are dropped at
// once, each counted and reported, none queued.
func TestDropsWhenThePoolIsFull(t *testing.T) {
	plan := onePlan()
	plan.Stages = []Stage{{Duration: 50 * time.Millisecond, Target: 400}} // 10 arrivals
	plan.MaxShoppers = 3
	plan.Patience = 10 * time.Second
	release := make(chan struct{})
	f := newFake(t, func(ctx context.Context, req *Call, _ int) (Answer, error) {
		select {
		case <-release:
			return answer(MeansConfirmed), nil
		case <-ctx.Done():
			return Answer{}, ctx.Err()
		}
	})
	var dropped atomic.Int32
	rep, err := Run(context.Background(), plan, f, Options{OnResult: func(s *Shopper) {
		if s.Outcome == OutcomeDropped && dropped.Add(1) == 7 {
			close(release) // every arrival is due: let the pool go
		}
	}})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if rep.Scheduled != 10 || rep.Started != 3 || rep.Dropped != 7 {
		t.Fatalf("scheduled %d, started %d, dropped %d; want 10, 3, 7", rep.Scheduled, rep.Started, rep.Dropped)
	}
	for i, s := range rep.Shoppers {
		want := OutcomeDropped
		if i < 3 {
			want = OutcomeConfirmed
		}
		if s.Outcome != want {
			t.Errorf("shopper %d: %q, want %q", i, s.Outcome, want)
		}
		if s.Outcome == OutcomeDropped && (len(s.Attempts) != 0 || s.ID == "" || s.Late() != 0 || s.Finished < s.Scheduled) {
			t.Errorf("dropped shopper %d: %+v", i, s)
		}
	}
	if f.maxIn != 3 {
		t.Errorf("%d shoppers in flight at most, want 3", f.maxIn)
	}
}

// TestAbort: when the run's context ends, scheduling stops, the shopper in
// flight is cancelled and gives up, arrivals not yet due keep no outcome,
// and Run returns the partial report with the context's error. An arrival
// due in the moment between the abort and the scheduler seeing it (the
// next is due 5 ms after the one that aborts: a busy machine can take
// longer to run the abort) is handed over and gives up without sending:
// how many are is the machine's timing, never more than a second's worth.
func TestAbort(t *testing.T) {
	plan := onePlan()
	plan.Stages = []Stage{{Duration: 10 * time.Millisecond, Target: 200}, {Duration: 10 * time.Second, Target: 200}}
	plan.Patience = time.Minute
	plan.MaxShoppers = 4
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := newFake(t, func(ctx context.Context, req *Call, _ int) (Answer, error) {
		if req.CheckoutID == "t-20" {
			cancel()
			<-ctx.Done()
			return Answer{}, ctx.Err()
		}
		return answer(MeansConfirmed), nil
	})
	onResult, calls := collect()
	began := time.Now()
	rep, err := Run(ctx, plan, f, Options{OnResult: onResult})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v, want context.Canceled", err)
	}
	if took := time.Since(began); took > 2*time.Second {
		t.Errorf("aborted run took %v", took)
	}
	started := rep.Started
	if rep.Scheduled != 2001 || started < 21 || started > 21+200 || rep.Dropped != 0 {
		t.Fatalf("scheduled %d, started %d, dropped %d; want 2001, from 21 to 221, 0", rep.Scheduled, started, rep.Dropped)
	}
	if s := rep.Shoppers[20]; s.Outcome != OutcomeGaveUp || s.Attempts[0].Err != context.Canceled.Error() || !s.Cut {
		t.Errorf("shopper in flight: %q, cut %v, %+v", s.Outcome, s.Cut, s.Attempts)
	}
	for _, s := range rep.Shoppers[:20] {
		if s.Cut {
			t.Errorf("shopper %d (%s) finished before the abort, but is marked cut", s.Index, s.Outcome)
		}
	}
	for _, s := range rep.Shoppers[21:started] {
		if s.Outcome != OutcomeGaveUp || len(s.Attempts) != 0 {
			t.Errorf("shopper %d, handed over as the run was aborted: outcome %q, %d attempts; want gave_up, none sent", s.Index, s.Outcome, len(s.Attempts))
		}
	}
	for _, s := range rep.Shoppers[started:] {
		if s.Outcome != "" || s.Started != 0 || s.ID == "" {
			t.Fatalf("shopper %d not due: outcome %q, started %v, id %q", s.Index, s.Outcome, s.Started, s.ID)
		}
	}
	if n := len(calls()); n != started {
		t.Errorf("OnResult for %d shoppers, want %d", n, started)
	}
	if o := rep.Outcomes(); o[OutcomeConfirmed] != 20 || o[OutcomeGaveUp] != started-20 || len(o) != 2 {
		t.Errorf("outcomes %v", o)
	}
}

// TestAbortWhileWaitingToRetry: a shopper waiting out a Retry-After leaves
// at once when the run is aborted.
func TestAbortWhileWaitingToRetry(t *testing.T) {
	plan := onePlan()
	plan.Patience = time.Minute
	ctx, cancel := context.WithCancel(context.Background())
	f := newFake(t, func(context.Context, *Call, int) (Answer, error) {
		time.AfterFunc(20*time.Millisecond, cancel)
		return comeBack(MeansUnavailable, 10*time.Second), nil
	})
	began := time.Now()
	rep, err := Run(ctx, plan, f, Options{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v", err)
	}
	if took := time.Since(began); took > 2*time.Second {
		t.Errorf("aborted run took %v", took)
	}
	if s := rep.Shoppers[0]; s.Outcome != OutcomeGaveUp || len(s.Attempts) != 1 {
		t.Errorf("%q after %d attempts", s.Outcome, len(s.Attempts))
	}
}

// TestRequestsAndClock: the request carries the seeded choices and the
// absolute deadline Start + Scheduled + Patience, read from the clock.
func TestRequestsAndClock(t *testing.T) {
	plan := validPlan()
	plan.Stages = []Stage{{Duration: 10 * time.Millisecond, Target: 1000}, {Duration: 50 * time.Millisecond, Target: 1000}}
	shift := 1000 * time.Hour
	f := newFake(t, scripted(step{ans: answer(MeansConfirmed)}))
	f.shift = shift
	rep, err := Run(context.Background(), plan, f, Options{Clock: func() time.Time { return time.Now().Add(shift) }})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if d := rep.Start.Sub(time.Now().Add(shift)); d > 0 || d < -time.Minute {
		t.Errorf("start %v is not the test clock's", rep.Start)
	}
	choices := Shoppers(plan)
	if len(choices) != rep.Scheduled || rep.Scheduled != 55 {
		t.Fatalf("%d choices, %d scheduled, want 55", len(choices), rep.Scheduled)
	}
	for i, s := range rep.Shoppers {
		c := choices[i]
		want := Call{CheckoutID: c.ID, Shopper: c.Name, Number: i, Session: c.Session, Deadline: rep.Start.Add(s.Scheduled + plan.Patience), Attempt: 1}
		got := f.reqs[c.ID]
		if len(got) != 1 || fmt.Sprint(got[0]) != fmt.Sprint(want) {
			t.Fatalf("shopper %d sent %+v, want %+v", i, got, want)
		}
		if s.ID != c.ID || s.Name != c.Name || s.Session != c.Session {
			t.Errorf("shopper %d: %q %q %q, want %+v", i, s.ID, s.Name, s.Session, c)
		}
	}
}

// TestSameSeedSameRun: two runs of the same plan make the same choices
// (sessions, retries and their jitter), whatever the goroutines did.
func TestSameSeedSameRun(t *testing.T) {
	plan := validPlan()
	plan.Stages = []Stage{{Duration: 10 * time.Millisecond, Target: 2000}, {Duration: 100 * time.Millisecond, Target: 2000}}
	const ra = 10 * time.Millisecond
	run := func() (*Report, *fakeTarget) {
		// Even-numbered attempts are told to come back, odd ones confirmed.
		f := newFake(t, func(_ context.Context, _ *Call, attempt int) (Answer, error) {
			if attempt%2 == 0 {
				return comeBack(MeansUnavailable, ra), nil
			}
			return answer(MeansConfirmed), nil
		})
		rep, err := Run(context.Background(), plan, f, Options{})
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		return rep, f
	}
	a, fa := run()
	b, fb := run()
	if a.Scheduled != 210 || a.Scheduled != b.Scheduled {
		t.Fatalf("scheduled %d and %d, want 210", a.Scheduled, b.Scheduled)
	}
	choices := Shoppers(plan)
	for i := range a.Shoppers {
		x, y := a.Shoppers[i], b.Shoppers[i]
		if x.Outcome == OutcomeDropped || y.Outcome == OutcomeDropped {
			continue // the pool is 50 for 210 arrivals in 110 ms: drops are timing
		}
		if x.ID != y.ID || x.Session != y.Session || x.Scheduled != y.Scheduled || x.Deadline != y.Deadline ||
			x.Outcome != y.Outcome || len(x.Attempts) != len(y.Attempts) || x.Session != choices[i].Session {
			t.Fatalf("shopper %d differs:\n%+v\n%+v", i, x, y)
		}
		if ra, rb := relative(fa.reqs[x.ID], a.Start), relative(fb.reqs[y.ID], b.Start); fmt.Sprint(ra) != fmt.Sprint(rb) {
			t.Fatalf("shopper %d sent %v then %v", i, ra, rb)
		}
		if w := x.Attempts[1].At - x.Attempts[0].At - x.Attempts[0].Took; w < time.Duration(float64(ra)*choices[i].Jitter(0)) {
			t.Errorf("shopper %d waited %v, its jitter says %v", i, w, time.Duration(float64(ra)*choices[i].Jitter(0)))
		}
	}
}

// relative drops the absolute time from requests, keeping the deadline as an
// offset from the start, which is what a run's seed decides.
func relative(reqs []Call, start time.Time) []string {
	out := make([]string, len(reqs))
	for i, r := range reqs {
		out[i] = fmt.Sprintf("%s %s %d %s %v %d %d", r.CheckoutID, r.Shopper, r.Number, r.Session, r.Deadline.Sub(start), r.Step, r.Attempt)
	}
	return out
}

// TestLateness: every started shopper's lateness is measured, and the
// report's percentiles are ordered and agree with the records.
func TestLateness(t *testing.T) {
	plan := validPlan()
	plan.Stages = []Stage{{Duration: 10 * time.Millisecond, Target: 2000}, {Duration: 200 * time.Millisecond, Target: 2000}}
	plan.MaxShoppers = 100
	rep, err := Run(context.Background(), plan, newFake(t, scripted(step{ans: answer(MeansConfirmed)})), Options{})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	var worst time.Duration
	for _, s := range rep.Shoppers {
		if s.Late() < 0 {
			t.Fatalf("shopper %d started %v early", s.Index, -s.Late())
		}
		worst = max(worst, s.Late())
	}
	if rep.LateMax != worst || rep.LateP50 > rep.LateP99 || rep.LateP99 > rep.LateMax {
		t.Errorf("p50 %v, p99 %v, max %v; worst %v", rep.LateP50, rep.LateP99, rep.LateMax, worst)
	}
	t.Logf("%d started, %d dropped; late p50 %v, p99 %v, max %v", rep.Started, rep.Dropped, rep.LateP50, rep.LateP99, rep.LateMax)
}

// TestRunRefusesABadPlan: an invalid plan changes nothing and says why.
func TestRunRefusesABadPlan(t *testing.T) {
	plan := onePlan()
	plan.MaxShoppers = 0
	f := newFake(t, scripted(step{ans: answer(MeansConfirmed)}))
	var fe *FieldError
	if _, err := Run(context.Background(), plan, f, Options{}); !errors.As(err, &fe) || fe.Field != "max_shoppers" {
		t.Fatalf("Run: %v, want a max_shoppers field error", err)
	}
	if _, err := Run(context.Background(), onePlan(), nil, Options{}); err == nil {
		t.Fatal("Run with no target: no error")
	}
	if len(f.reqs) != 0 {
		t.Errorf("a refused plan sent %d requests", len(f.reqs))
	}
}

// keeper is a fakeTarget that keeps one value for each shopper, as a
// waiting-room token is kept.
type keeper struct{ *fakeTarget }

func (keeper) Keeps() int { return 1 }

// TestShopperKeepsValues: what a target keeps from an answer (a waiting-room
// token) travels with the shopper to every later request, and an answer
// without one does not make it forget it; each attempt records the
// answer's reason.
func TestShopperKeepsValues(t *testing.T) {
	const ra = 20 * time.Millisecond
	plan := onePlan()
	plan.MaxRetries = 3
	script := []struct {
		reason, token string
		means         Meaning
	}{
		{"waiting_room", "tok-1", MeansUnavailable},
		{"breaker_open", "", MeansUnavailable}, // admitted, then refused further on: no token
		{"waiting_room", "tok-2", MeansUnavailable},
		{"", "", MeansConfirmed},
	}
	f := keeper{newFake(t, func(_ context.Context, c *Call, attempt int) (Answer, error) {
		sc := script[min(attempt, len(script)-1)]
		if sc.token != "" {
			c.Kept[0] = sc.token
		}
		a := comeBack(sc.means, ra)
		a.Reason = sc.reason
		return a, nil
	})}
	rep, err := Run(context.Background(), plan, f, Options{})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	s := rep.Shoppers[0]
	if s.Outcome != OutcomeConfirmed || len(s.Attempts) != 4 {
		t.Fatalf("%q after %+v", s.Outcome, s.Attempts)
	}
	reqs := f.reqs[s.ID]
	wantTokens := []string{"", "tok-1", "tok-1", "tok-2"}
	for k, r := range reqs {
		if len(r.Kept) != 1 || r.Kept[0] != wantTokens[k] {
			t.Errorf("attempt %d sent kept %q, want [%q]", k, r.Kept, wantTokens[k])
		}
		if s.Attempts[k].Reason != script[k].reason || r.Attempt != k+1 {
			t.Errorf("attempt %d: reason %q, attempt number %d; want %q and %d", k, s.Attempts[k].Reason, r.Attempt, script[k].reason, k+1)
		}
	}
}

// A purchase of two steps: "next" goes on to the following step at once,
// its attempts counted afresh, and the retries budget is the purchase's.
func TestStepsOfAPurchase(t *testing.T) {
	plan := onePlan()
	plan.MaxRetries = 2
	f := newFake(t, func(_ context.Context, c *Call, attempt int) (Answer, error) {
		switch {
		case c.Step == 0:
			return answer(MeansNext), nil
		case c.Attempt == 1:
			return comeBack(MeansUnavailable, 10*time.Millisecond), nil
		}
		return answer(MeansConfirmed), nil
	})
	rep, err := Run(context.Background(), plan, f, Options{})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	s := rep.Shoppers[0]
	if s.Outcome != OutcomeConfirmed || len(s.Attempts) != 3 {
		t.Fatalf("%q after %+v", s.Outcome, s.Attempts)
	}
	var got []string
	for _, r := range f.reqs[s.ID] {
		got = append(got, fmt.Sprintf("%d/%d", r.Step, r.Attempt))
	}
	if fmt.Sprint(got) != "[0/1 1/1 1/2]" || s.Attempts[0].Status != "next" || s.Attempts[2].Step != 1 {
		t.Errorf("requests %v, attempts %+v", got, s.Attempts)
	}
}

// A target that says "next" for ever does not keep its shopper for ever.
func TestEndlessStepsEndInError(t *testing.T) {
	f := newFake(t, scripted(step{ans: answer(MeansNext)}))
	rep, err := Run(context.Background(), onePlan(), f, Options{})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if s := rep.Shoppers[0]; s.Outcome != OutcomeError || len(s.Attempts) != maxSteps {
		t.Errorf("%q after %d requests, want error after %d", s.Outcome, len(s.Attempts), maxSteps)
	}
}

func TestIntern(t *testing.T) {
	long := strings.Repeat("x", 100)
	for _, tt := range []struct{ in, want string }{
		{"", ""},                         // no reason
		{"waiting_room", "waiting_room"}, // a reason
		{long, long[:64]},                // long: cut
	} {
		if got := intern(tt.in); got != tt.want {
			t.Errorf("intern(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
