package breakers_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/breakers"
)

var (
	errDown     = errors.New("connection refused")
	errDeclined = errors.New("card declined")
)

// The fns below are fakes of a dependency call; they only drive the guard.

func succeed(context.Context) error { return nil }

func fail(context.Context) error { return errDown }

// honour waits for its context and returns its error, as a well-behaved
// client does.
func honour(ctx context.Context) error {
	<-ctx.Done()
	return ctx.Err()
}

// hang returns a fn that ignores its context and blocks until the test ends.
// started, if not nil, gets a value when the fn starts.
func hang(tb testing.TB, started chan<- struct{}) func(context.Context) error {
	tb.Helper()
	release := make(chan struct{})
	tb.Cleanup(func() { close(release) })
	return func(context.Context) error {
		if started != nil {
			started <- struct{}{}
		}
		<-release
		return nil
	}
}

// counting returns a fn that counts its calls and returns err.
func counting(err error) (func(context.Context) error, func() int) {
	var mu sync.Mutex
	n := 0
	return func(context.Context) error {
			mu.Lock()
			defer mu.Unlock()
			n++
			return err
		}, func() int {
			mu.Lock()
			defer mu.Unlock()
			return n
		}
}

// eventually polls cond until it holds or a generous bound passes. It waits
// for the real clock that gobreaker reads (OpenFor), never asserts on time.
func eventually(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func waitState(tb testing.TB, g *breakers.Guard, want breakers.State) {
	tb.Helper()
	eventually(tb, "state "+want.String(), func() bool { return g.State() == want })
}

// trip fails calls until the breaker opens, at most ConsecutiveFailures times.
func trip(tb testing.TB, g *breakers.Guard) {
	tb.Helper()
	for range g.Settings().ConsecutiveFailures {
		if err := g.Do(context.Background(), fail); !errors.Is(err, errDown) {
			tb.Fatalf("Do(fail) = %v, want %v", err, errDown)
		}
	}
	if got := g.State(); got != breakers.StateOpen {
		tb.Fatalf("state after %d failures = %v, want open", g.Settings().ConsecutiveFailures, got)
	}
}

func TestTripsAfterConsecutiveFailures(t *testing.T) {
	tests := []struct {
		name      string
		threshold uint32
		calls     []func(context.Context) error
		want      breakers.State
	}{
		// The default threshold is 5: five failures in a row trip.
		{"default five", 0, []func(context.Context) error{fail, fail, fail, fail, fail}, breakers.StateOpen},
		// Four failures are one short of the default.
		{"default four", 0, []func(context.Context) error{fail, fail, fail, fail}, breakers.StateClosed},
		// A success in the middle restarts the run.
		{"success resets", 3, []func(context.Context) error{fail, fail, succeed, fail, fail}, breakers.StateClosed},
		// Three in a row after the reset do trip.
		{"run after reset", 3, []func(context.Context) error{fail, succeed, fail, fail, fail}, breakers.StateOpen},
		// A threshold of one trips on the first failure.
		{"threshold one", 1, []func(context.Context) error{fail}, breakers.StateOpen},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := breakers.New(breakers.Settings{ConsecutiveFailures: tt.threshold, OpenFor: time.Hour})
			for _, fn := range tt.calls {
				_ = g.Do(context.Background(), fn)
			}
			if got := g.State(); got != tt.want {
				t.Errorf("state = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestOpenRefusesWithoutCallingFn(t *testing.T) {
	g := breakers.New(breakers.Settings{Name: "payment", ConsecutiveFailures: 2, OpenFor: time.Hour})
	trip(t, g)
	fn, calls := counting(nil)
	for range 10 {
		err := g.Do(context.Background(), fn)
		if !errors.Is(err, breakers.ErrOpen) {
			t.Fatalf("Do while open = %v, want ErrOpen", err)
		}
		if err.Error() != "payment: breaker open" {
			t.Errorf("error text = %q", err)
		}
	}
	if n := calls(); n != 0 {
		t.Errorf("fn called %d times while open, want 0", n)
	}
	if n := g.InFlight(); n != 0 {
		t.Errorf("InFlight = %d after refusals, want 0", n)
	}
}

func TestHalfOpenProbe(t *testing.T) {
	isFailure := func(err error) bool { return !errors.Is(err, errDeclined) }
	tests := []struct {
		name  string
		probe error
		want  breakers.State
	}{
		// A successful probe closes the breaker.
		{"success closes", nil, breakers.StateClosed},
		// A failed probe reopens it.
		{"failure reopens", errDown, breakers.StateOpen},
		// An error that IsFailure lets pass proves the dependency answered.
		{"answered closes", errDeclined, breakers.StateClosed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := breakers.Settings{
				ConsecutiveFailures: 1,
				OpenFor:             20 * time.Millisecond,
				Timeout:             time.Hour,
				ProbeTimeout:        time.Minute,
				IsFailure:           isFailure,
			}
			g := breakers.New(s)
			trip(t, g)
			waitState(t, g, breakers.StateHalfOpen)
			err := g.Do(context.Background(), func(ctx context.Context) error {
				// The probe runs under ProbeTimeout, not Timeout.
				if dl, ok := ctx.Deadline(); !ok || time.Until(dl) > s.ProbeTimeout {
					t.Errorf("probe deadline in %v, want at most %v", time.Until(dl), s.ProbeTimeout)
				}
				return tt.probe
			})
			if err != tt.probe {
				t.Errorf("Do(probe) = %v, want %v unchanged", err, tt.probe)
			}
			last := g.Transitions()[g.TransitionCount()-1]
			if last.From != breakers.StateHalfOpen || last.To != tt.want {
				t.Errorf("last transition = %v → %v, want half-open → %v", last.From, last.To, tt.want)
			}
		})
	}
}

func TestHungProbeTimesOutAndReopens(t *testing.T) {
	g := breakers.New(breakers.Settings{
		ConsecutiveFailures: 1,
		OpenFor:             20 * time.Millisecond,
		Timeout:             10 * time.Second, // a probe under Timeout would fail the 1s bound
		ProbeTimeout:        20 * time.Millisecond,
	})
	trip(t, g)
	waitState(t, g, breakers.StateHalfOpen)

	started := make(chan struct{}, 1)
	probe := make(chan error, 1)
	begin := time.Now()
	go func() { probe <- g.Do(context.Background(), hang(t, started)) }()
	<-started

	// While the probe is in flight, everything else is refused.
	fn, calls := counting(nil)
	if err := g.Do(context.Background(), fn); !errors.Is(err, breakers.ErrOpen) {
		t.Errorf("Do during probe = %v, want ErrOpen", err)
	}
	if calls() != 0 {
		t.Error("fn called while the probe was in flight")
	}

	err := <-probe
	if !errors.Is(err, breakers.ErrTimeout) {
		t.Fatalf("hung probe = %v, want ErrTimeout", err)
	}
	if elapsed := time.Since(begin); elapsed > time.Second {
		t.Errorf("hung probe returned after %v, want well under 1s", elapsed)
	}
	if n := g.InFlight(); n != 1 {
		t.Errorf("InFlight = %d, want 1: the hung fn still holds its slot", n)
	}

	// Not stuck half-open: the next probe comes after OpenFor and closes it.
	waitState(t, g, breakers.StateHalfOpen)
	if err := g.Do(context.Background(), succeed); err != nil {
		t.Fatalf("second probe = %v", err)
	}
	want := []breakers.State{
		breakers.StateClosed, breakers.StateOpen, breakers.StateHalfOpen,
		breakers.StateOpen, breakers.StateHalfOpen, breakers.StateClosed,
	}
	checkPath(t, g.Transitions(), want)
}

// checkPath checks that transitions go through the states in want.
func checkPath(tb testing.TB, got []breakers.Transition, want []breakers.State) {
	tb.Helper()
	if len(got) != len(want)-1 {
		tb.Fatalf("%d transitions %v, want %d", len(got), got, len(want)-1)
	}
	for i, tr := range got {
		if tr.From != want[i] || tr.To != want[i+1] {
			tb.Errorf("transition %d = %v → %v, want %v → %v", i, tr.From, tr.To, want[i], want[i+1])
		}
	}
}

func TestGuardTimeoutCountsAsFailure(t *testing.T) {
	tests := []struct {
		name string
		fn   func(tb testing.TB) func(context.Context) error
	}{
		// fn ignores its context: Do must return on its own.
		{"fn ignores ctx", func(tb testing.TB) func(context.Context) error { return hang(tb, nil) }},
		// fn returns ctx.Err() when the deadline passes; still the guard's timeout.
		{"fn honours ctx", func(testing.TB) func(context.Context) error { return honour }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := breakers.New(breakers.Settings{
				Name: "payment", ConsecutiveFailures: 2, Timeout: 20 * time.Millisecond, OpenFor: time.Hour,
			})
			for range 2 {
				begin := time.Now()
				err := g.Do(context.Background(), tt.fn(t))
				if !errors.Is(err, breakers.ErrTimeout) {
					t.Fatalf("Do = %v, want ErrTimeout", err)
				}
				if errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("Do = %v: the guard's timeout must not look like the caller's deadline", err)
				}
				// A generous bound: it proves Do does not wait for fn (which
				// hangs until the test ends), without flaking on a busy machine.
				if elapsed := time.Since(begin); elapsed > 10*time.Second {
					t.Errorf("Do returned after %v, want long before fn ends", elapsed)
				}
			}
			if got := g.State(); got != breakers.StateOpen {
				t.Errorf("state after 2 timeouts = %v, want open", got)
			}
		})
	}
}

func TestFnSeesGuardDeadline(t *testing.T) {
	g := breakers.New(breakers.Settings{Timeout: time.Minute})
	err := g.Do(context.Background(), func(ctx context.Context) error {
		dl, ok := ctx.Deadline()
		if !ok || time.Until(dl) > time.Minute || time.Until(dl) < 30*time.Second {
			t.Errorf("deadline in %v, want about 1m", time.Until(dl))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The cause tells fn that it was the guard's deadline.
	g = breakers.New(breakers.Settings{Timeout: time.Millisecond})
	_ = g.Do(context.Background(), func(ctx context.Context) error {
		<-ctx.Done()
		if !errors.Is(context.Cause(ctx), breakers.ErrTimeout) {
			t.Errorf("cause = %v, want ErrTimeout", context.Cause(ctx))
		}
		return ctx.Err()
	})
}

func TestCallerLeavingIsNotAFailure(t *testing.T) {
	type when int
	const (
		before   when = iota // the caller's ctx ended before Do
		during               // it ends while fn runs
		deadline             // the caller's own deadline, earlier than the guard's
	)
	tests := []struct {
		name string
		when when
		fn   func(tb testing.TB, started chan<- struct{}) func(context.Context) error
		want error
	}{
		// Cancelled before the call: fn is never called.
		{"cancelled before", before, nil, context.Canceled},
		// Cancelled while fn waits on its ctx.
		{"cancelled, fn honours ctx", during, started(honour), context.Canceled},
		// Cancelled while fn ignores its ctx: Do still returns at once.
		{"cancelled, fn ignores ctx", during, hang, context.Canceled},
		// The caller's 5ms deadline beats the guard's hour; fn honours ctx.
		{"caller deadline, fn honours ctx", deadline, started(honour), context.DeadlineExceeded},
		// Same, fn ignores ctx.
		{"caller deadline, fn ignores ctx", deadline, hang, context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := breakers.New(breakers.Settings{ConsecutiveFailures: 1, Timeout: time.Hour, MaxConcurrent: -1})
			for range 10 {
				var err error
				switch tt.when {
				case before:
					ctx, cancel := context.WithCancel(context.Background())
					cancel()
					fn, calls := counting(nil)
					err = g.Do(ctx, fn)
					if calls() != 0 {
						t.Error("fn called with a cancelled ctx")
					}
				case during:
					ctx, cancel := context.WithCancel(context.Background())
					started := make(chan struct{}, 1)
					go func() { <-started; cancel() }()
					err = g.Do(ctx, tt.fn(t, started))
				case deadline:
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
					err = g.Do(ctx, tt.fn(t, make(chan struct{}, 1)))
					cancel()
				}
				if !errors.Is(err, tt.want) {
					t.Fatalf("Do = %v, want %v", err, tt.want)
				}
				if errors.Is(err, breakers.ErrTimeout) {
					t.Fatalf("Do = %v: the caller leaving is not the guard's timeout", err)
				}
			}
			if got := g.State(); got != breakers.StateClosed {
				t.Errorf("state = %v, want closed", got)
			}
			if c := breakers.Counts(g); c.TotalFailures != 0 || c.TotalSuccesses != 0 {
				t.Errorf("counts = %+v, want no failure and no success", c)
			}
		})
	}
}

// started wraps fn so that it signals when it starts.
func started(fn func(context.Context) error) func(testing.TB, chan<- struct{}) func(context.Context) error {
	return func(_ testing.TB, s chan<- struct{}) func(context.Context) error {
		return func(ctx context.Context) error {
			s <- struct{}{}
			return fn(ctx)
		}
	}
}

func TestCancelledProbeFreesHalfOpen(t *testing.T) {
	g := breakers.New(breakers.Settings{ConsecutiveFailures: 1, OpenFor: 20 * time.Millisecond, ProbeTimeout: time.Hour})
	trip(t, g)
	waitState(t, g, breakers.StateHalfOpen)
	ctx, cancel := context.WithCancel(context.Background())
	s := make(chan struct{}, 1)
	go func() { <-s; cancel() }()
	if err := g.Do(ctx, hang(t, s)); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled probe = %v, want context.Canceled", err)
	}
	if got := g.State(); got != breakers.StateHalfOpen {
		t.Fatalf("state after cancelled probe = %v, want still half-open", got)
	}
	if err := g.Do(context.Background(), succeed); err != nil {
		t.Fatalf("next probe = %v, want it let in", err)
	}
	if got := g.State(); got != breakers.StateClosed {
		t.Errorf("state = %v, want closed", got)
	}
}

func TestBulkheadRefusesAtOnce(t *testing.T) {
	tests := []struct {
		name     string
		max      int
		calls    int
		admitted int
	}{
		// Past the bound, calls are refused.
		{"bound of three", 3, 5, 3},
		// Zero means the default of 64.
		{"default", 0, 70, 64},
		// Negative means unlimited.
		{"unlimited", -1, 100, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := breakers.New(breakers.Settings{MaxConcurrent: tt.max, Timeout: time.Hour})
			release := make(chan struct{})
			started := make(chan struct{})
			blocked := func(context.Context) error {
				started <- struct{}{}
				<-release
				return nil
			}
			refused := make(chan error)
			var wg sync.WaitGroup
			admitted := 0
			// One call at a time: each either starts fn or is refused.
			for range tt.calls {
				wg.Go(func() {
					if err := g.Do(context.Background(), blocked); err != nil {
						refused <- err
					}
				})
				select {
				case <-started:
					admitted++
				case err := <-refused:
					if !errors.Is(err, breakers.ErrBulkheadFull) {
						t.Errorf("refusal = %v, want ErrBulkheadFull", err)
					}
				}
			}
			if admitted != tt.admitted {
				t.Errorf("admitted %d of %d, want %d", admitted, tt.calls, tt.admitted)
			}
			if n := g.InFlight(); n != tt.admitted {
				t.Errorf("InFlight = %d, want %d", n, tt.admitted)
			}
			// Refusals did not touch the breaker's counts.
			if c := breakers.Counts(g); int(c.Requests) != tt.admitted {
				t.Errorf("breaker saw %d requests, want %d", c.Requests, tt.admitted)
			}
			close(release)
			wg.Wait()
			if n := g.InFlight(); n != 0 {
				t.Errorf("InFlight = %d after release, want 0", n)
			}
			if err := g.Do(context.Background(), succeed); err != nil {
				t.Errorf("Do after release = %v", err)
			}
		})
	}
}

func TestBulkheadHoldsSlotUntilFnReturns(t *testing.T) {
	g := breakers.New(breakers.Settings{MaxConcurrent: 1, Timeout: 20 * time.Millisecond})
	release := make(chan struct{})
	err := g.Do(context.Background(), func(context.Context) error { <-release; return nil })
	if !errors.Is(err, breakers.ErrTimeout) {
		t.Fatalf("Do = %v, want ErrTimeout", err)
	}
	// Do gave up, but the fn still runs and holds the only slot.
	if err := g.Do(context.Background(), succeed); !errors.Is(err, breakers.ErrBulkheadFull) {
		t.Fatalf("Do while abandoned fn runs = %v, want ErrBulkheadFull", err)
	}
	close(release)
	eventually(t, "slot released", func() bool { return g.InFlight() == 0 })
	if err := g.Do(context.Background(), succeed); err != nil {
		t.Errorf("Do after fn returned = %v", err)
	}
}

func TestOutcomeCounting(t *testing.T) {
	notDeclined := func(err error) bool { return !errors.Is(err, errDeclined) }
	always := func(error) bool { return true }
	tests := []struct {
		name      string
		isFailure func(error) bool
		err       error
		want      breakers.State
		successes uint32 // checked when the breaker stays closed
		excluded  uint32
	}{
		// By default any error is a failure.
		{"default, error", nil, errDown, breakers.StateOpen, 0, 0},
		// A nil error is a success.
		{"default, nil", nil, nil, breakers.StateClosed, 10, 0},
		// The hook says a decline is no failure: it counts as a success.
		{"hook, declined", notDeclined, fmt.Errorf("charge: %w", errDeclined), breakers.StateClosed, 10, 0},
		// The hook still fails other errors.
		{"hook, other error", notDeclined, errDown, breakers.StateOpen, 0, 0},
		// A nested guard's full bulkhead never reached the dependency.
		{"nested bulkhead full", nil, fmt.Errorf("inner: %w", breakers.ErrBulkheadFull), breakers.StateClosed, 0, 10},
		// Whatever the hook says.
		{"nested bulkhead full, hook", always, fmt.Errorf("inner: %w", breakers.ErrBulkheadFull), breakers.StateClosed, 0, 10},
		// fn's own context.Canceled, the caller still waiting: a failure.
		{"fn's own cancellation", nil, context.Canceled, breakers.StateOpen, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := breakers.New(breakers.Settings{ConsecutiveFailures: 3, OpenFor: time.Hour, IsFailure: tt.isFailure})
			for i := range 10 {
				err := g.Do(context.Background(), func(context.Context) error { return tt.err })
				if i < 3 && err != tt.err {
					t.Errorf("Do = %v, want fn's error %v unchanged", err, tt.err)
				}
			}
			if got := g.State(); got != tt.want {
				t.Fatalf("state = %v, want %v", got, tt.want)
			}
			c := breakers.Counts(g)
			if tt.want == breakers.StateClosed && (c.TotalSuccesses != tt.successes || c.TotalExclusions != tt.excluded || c.TotalFailures != 0) {
				t.Errorf("counts = %+v, want %d successes, %d exclusions, no failure", c, tt.successes, tt.excluded)
			}
		})
	}
}

// clock is a fake clock that moves one second on every reading.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(time.Second)
	return c.now
}

func TestTransitionsUseInjectedClock(t *testing.T) {
	base := time.Date(2025, 11, 28, 9, 0, 0, 0, time.UTC)
	g := breakers.New(breakers.Settings{
		ConsecutiveFailures: 1,
		OpenFor:             20 * time.Millisecond,
		Now:                 (&clock{now: base}).Now,
	})
	if tr := g.Transitions(); len(tr) != 0 {
		t.Fatalf("new guard has transitions %v", tr)
	}
	trip(t, g)
	waitState(t, g, breakers.StateHalfOpen)
	if err := g.Do(context.Background(), succeed); err != nil {
		t.Fatal(err)
	}
	want := []breakers.Transition{
		{From: breakers.StateClosed, To: breakers.StateOpen, At: base.Add(1 * time.Second)},
		{From: breakers.StateOpen, To: breakers.StateHalfOpen, At: base.Add(2 * time.Second)},
		{From: breakers.StateHalfOpen, To: breakers.StateClosed, At: base.Add(3 * time.Second)},
	}
	got := g.Transitions()
	if len(got) != len(want) {
		t.Fatalf("transitions = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("transition %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if n := g.TransitionCount(); n != 3 {
		t.Errorf("TransitionCount = %d, want 3", n)
	}
	// Transitions returns a copy.
	got[0].To = breakers.StateClosed
	if g.Transitions()[0].To != breakers.StateOpen {
		t.Error("Transitions shares its slice with the guard")
	}
}

func TestMaxTransitionsDropsOldest(t *testing.T) {
	g := breakers.New(breakers.Settings{ConsecutiveFailures: 1, OpenFor: 20 * time.Millisecond, MaxTransitions: 2})
	trip(t, g)
	waitState(t, g, breakers.StateHalfOpen)
	if err := g.Do(context.Background(), succeed); err != nil {
		t.Fatal(err)
	}
	checkPath(t, g.Transitions(), []breakers.State{breakers.StateOpen, breakers.StateHalfOpen, breakers.StateClosed})
	if n := g.TransitionCount(); n != 3 {
		t.Errorf("TransitionCount = %d, want 3 including the dropped one", n)
	}
}

// TestObserversDuringTrips reads the guard from many goroutines while calls
// trip and reset the breaker; run it with -race. A deadlock between
// OnStateChange and the readers would hang it.
func TestObserversDuringTrips(t *testing.T) {
	g := breakers.New(breakers.Settings{
		ConsecutiveFailures: 2,
		OpenFor:             time.Millisecond,
		ProbeTimeout:        5 * time.Millisecond,
		HalfOpenProbes:      2,
	})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		var writers, readers sync.WaitGroup
		stop := make(chan struct{})
		for w := range 8 {
			writers.Go(func() {
				for i := range 300 {
					fn := succeed
					if (i+w)%3 != 0 {
						fn = fail
					}
					_ = g.Do(context.Background(), fn)
					// The calls themselves take no time: pace them so that
					// the 300 span several OpenFor periods and the breaker
					// cycles, on a fast machine too.
					time.Sleep(50 * time.Microsecond)
				}
			})
		}
		for range 8 {
			readers.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					_ = g.State()
					_ = g.Transitions()
					_ = g.TransitionCount()
					_ = g.InFlight()
				}
			})
		}
		writers.Wait()
		close(stop)
		readers.Wait()
	}()
	select {
	case <-finished:
	case <-time.After(time.Minute):
		t.Fatal("observers and callers deadlocked")
	}

	tr := g.Transitions()
	t.Logf("%d transitions", len(tr))
	if len(tr) < 3 {
		t.Fatalf("%d transitions recorded, want the breaker to have cycled", len(tr))
	}
	if tr[0].From != breakers.StateClosed {
		t.Errorf("first transition from %v, want closed", tr[0].From)
	}
	for i := 1; i < len(tr); i++ {
		if tr[i].From != tr[i-1].To {
			t.Errorf("transition %d from %v, but %d went to %v", i, tr[i].From, i-1, tr[i-1].To)
		}
		if tr[i].At.Before(tr[i-1].At) {
			t.Errorf("transition %d at %v, before %v", i, tr[i].At, tr[i-1].At)
		}
	}
	if g.TransitionCount() != uint64(len(tr)) {
		t.Errorf("TransitionCount = %d, kept %d (none should be dropped)", g.TransitionCount(), len(tr))
	}
}

// Call hands fn's value over when fn finishes in time, and nothing when the
// guard gave up on it; under -race this also shows the hand-over is safe.
func TestCallHandsOverValueOnlyInTime(t *testing.T) {
	g := breakers.New(breakers.Settings{Name: "dep", Timeout: 20 * time.Millisecond})
	v, err := breakers.Call(context.Background(), g, func(context.Context) (int, error) { return 7, nil })
	if err != nil || v != 7 {
		t.Fatalf("Call = %d, %v; want 7, nil", v, err)
	}
	release := make(chan struct{})
	finished := make(chan struct{})
	v, err = breakers.Call(context.Background(), g, func(context.Context) (int, error) {
		defer close(finished)
		<-release // ignores its context
		return 9, nil
	})
	if !errors.Is(err, breakers.ErrTimeout) || v != 0 {
		t.Fatalf("Call of a hung fn = %d, %v; want 0, ErrTimeout", v, err)
	}
	close(release)
	<-finished
}

// OnOpen runs each time the breaker opens, and only then: the checkout
// drops its payment connections there, since a vanished peer's connections
// go silent and would eat every probe.
func TestOnOpenRunsWhenTheBreakerOpens(t *testing.T) {
	opened := make(chan struct{}, 4)
	g := breakers.New(breakers.Settings{Name: "dep", ConsecutiveFailures: 2, OpenFor: 20 * time.Millisecond,
		OnOpen: func() { opened <- struct{}{} }})
	if err := g.Do(context.Background(), succeed); err != nil {
		t.Fatal(err)
	}
	select {
	case <-opened:
		t.Fatal("OnOpen ran while the breaker was closed")
	case <-time.After(20 * time.Millisecond):
	}
	trip(t, g)
	for round := 1; round <= 2; round++ {
		select {
		case <-opened:
		case <-time.After(time.Second):
			t.Fatalf("OnOpen did not run after opening #%d", round)
		}
		if round == 1 {
			// Half-open, then a failed probe opens it again.
			waitState(t, g, breakers.StateHalfOpen)
			_ = g.Do(context.Background(), fail)
		}
	}
}

// An inline guard runs fn on the caller's goroutine, and keeps the guard's
// promises for a fn that honours its context: the deadline is a failure
// that trips the breaker, a caller who leaves is not counted.
func TestInlineGuard(t *testing.T) {
	g := breakers.New(breakers.Settings{Name: "sessions", Inline: true, Timeout: 20 * time.Millisecond, ConsecutiveFailures: 2})
	var onCaller bool
	if err := g.Do(context.Background(), func(context.Context) error {
		buf := make([]byte, 8<<10)
		// The test's own frame, not this closure's (TestInlineGuard.func1).
		onCaller = strings.Contains(string(buf[:runtime.Stack(buf, false)]), "breakers_test.TestInlineGuard(")
		return nil
	}); err != nil || !onCaller {
		t.Fatalf("Do = %v, fn on the caller's goroutine: %v", err, onCaller)
	}

	for range 3 {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(5*time.Millisecond, cancel)
		if err := g.Do(ctx, honour); !errors.Is(err, context.Canceled) {
			t.Fatalf("caller left: Do = %v, want context.Canceled", err)
		}
	}
	if g.State() != breakers.StateClosed {
		t.Fatalf("a caller leaving counted as a failure: %v", g.State())
	}

	for i := range 2 {
		if err := g.Do(context.Background(), honour); !errors.Is(err, breakers.ErrTimeout) {
			t.Fatalf("call %d: Do = %v, want ErrTimeout", i, err)
		}
	}
	if g.State() != breakers.StateOpen || g.InFlight() != 0 {
		t.Fatalf("after two deadlines: %v, %d in flight; want open, none", g.State(), g.InFlight())
	}
}

// Do returns when an inline fn does, even long past the deadline of a fn
// that ignores its context (the price of running on the caller's
// goroutine); a fn that panics frees its slot and counts as a failure.
func TestInlineGuardWaitsForItsFn(t *testing.T) {
	g := breakers.New(breakers.Settings{Name: "payment", Inline: true, Timeout: 5 * time.Millisecond, MaxConcurrent: 1, ConsecutiveFailures: 1})
	release := make(chan struct{})
	res := make(chan error, 1)
	go func() {
		res <- g.Do(context.Background(), func(context.Context) error { <-release; return nil })
	}()
	time.Sleep(50 * time.Millisecond) // ten deadlines
	select {
	case err := <-res:
		t.Fatalf("Do returned before its fn: %v", err)
	default:
	}
	close(release)
	if err := <-res; err != nil {
		t.Fatalf("a late success: Do = %v, want nil", err)
	}

	func() {
		defer func() {
			if recover() == nil {
				t.Error("the panic did not go on up")
			}
		}()
		_ = g.Do(context.Background(), func(context.Context) error { panic("bug") })
	}()
	if g.InFlight() != 0 || g.State() != breakers.StateOpen {
		t.Fatalf("after a panic: %d in flight, %v; want none, open", g.InFlight(), g.State())
	}
}
