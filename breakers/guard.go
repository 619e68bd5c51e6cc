package breakers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/sony/gobreaker/v2"
)

// Guard runs calls to one dependency through a bulkhead, a circuit breaker and
// a deadline; see the package documentation. Make one with [New]; it is safe
// for concurrent use.
type Guard struct {
	s        Settings
	cb       *gobreaker.TwoStepCircuitBreaker[struct{}]
	inFlight atomic.Int64

	// The guard's own errors, made once so that refusing does not allocate.
	// errTimeout and errProbeTimeout are also the cause given to the call's
	// context, which tells the guard's deadline from the caller's.
	errOpen, errBusy, errFull, errTimeout, errProbeTimeout error

	mu    sync.Mutex // guards trans and count; held only briefly, never while calling gobreaker
	trans []Transition
	count uint64
}

// Outcomes reported to gobreaker; nil reports a success.
var (
	errFailure  = errors.New("failure")
	errExcluded = errors.New("excluded")
)

// New returns a closed Guard configured by s, with s's zero fields set to
// their documented defaults.
func New(s Settings) *Guard {
	s = s.normalise()
	g := &Guard{
		s:               s,
		errOpen:         fmt.Errorf("%s: %w", s.Name, ErrOpen),
		errBusy:         fmt.Errorf("%s: %w (half-open, probes in flight)", s.Name, ErrOpen),
		errFull:         fmt.Errorf("%s: %w (%d in flight)", s.Name, ErrBulkheadFull, s.MaxConcurrent),
		errTimeout:      fmt.Errorf("%s: %w (timeout %v)", s.Name, ErrTimeout, s.Timeout),
		errProbeTimeout: fmt.Errorf("%s: %w (probe timeout %v)", s.Name, ErrTimeout, s.ProbeTimeout),
	}
	trip := s.ConsecutiveFailures
	g.cb = gobreaker.NewTwoStepCircuitBreaker[struct{}](gobreaker.Settings{
		Name:          s.Name,
		MaxRequests:   s.HalfOpenProbes,
		Interval:      s.Interval,
		Timeout:       s.OpenFor,
		ReadyToTrip:   func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= trip },
		OnStateChange: g.record,
		IsExcluded:    func(err error) bool { return err == errExcluded },
	})
	return g
}

// Name returns the dependency's name.
func (g *Guard) Name() string { return g.s.Name }

// Settings returns the normalised settings.
func (g *Guard) Settings() Settings { return g.s }

// State returns the breaker's state. It may move the breaker from open to
// half-open when OpenFor has passed, and record that transition.
func (g *Guard) State() State { return State(g.cb.State()) }

// Transitions returns a copy of the kept transitions, oldest first.
func (g *Guard) Transitions() []Transition {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.trans)
}

// TransitionCount returns how many transitions there have been, including
// those dropped past Settings.MaxTransitions.
func (g *Guard) TransitionCount() uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.count
}

// InFlight returns how many fns are running, including those Do has already
// given up on.
func (g *Guard) InFlight() int { return int(g.inFlight.Load()) }

// record is gobreaker's OnStateChange. gobreaker holds its lock while calling
// it, so it only appends under the Guard's own mutex and returns.
func (g *Guard) record(_ string, from, to gobreaker.State) {
	t := Transition{From: State(from), To: State(to), At: g.s.Now()}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.count++
	if len(g.trans) >= g.s.MaxTransitions {
		g.trans = append(g.trans[:0], g.trans[len(g.trans)-g.s.MaxTransitions+1:]...)
	}
	g.trans = append(g.trans, t)
	if t.To == StateOpen && g.s.OnOpen != nil {
		go g.s.OnOpen()
	}
}

// Do runs fn through the bulkhead, the breaker and the deadline, and returns
// fn's error, or an error wrapping [ErrBulkheadFull], [ErrOpen], [ErrTimeout],
// or the caller's ctx.Err() when ctx ended first. fn gets a context derived
// from ctx with the guard's deadline. A ctx that has already ended is refused
// at once without calling fn: a shopper who has left is never charged.
func (g *Guard) Do(ctx context.Context, fn func(ctx context.Context) error) error {
	if ctx.Err() != nil {
		return g.callerLeft(ctx)
	}
	if !g.acquire() {
		return g.errFull
	}
	done, err := g.cb.Allow()
	if err != nil {
		g.release()
		if errors.Is(err, gobreaker.ErrTooManyRequests) {
			return g.errBusy
		}
		return g.errOpen
	}
	// Asked after Allow: if the breaker is half-open now, this call was let in
	// as a probe. (If the state moved on meanwhile, this call's outcome belongs
	// to an old generation and gobreaker ignores it.)
	timeout, cause := g.s.Timeout, g.errTimeout
	if g.cb.State() == gobreaker.StateHalfOpen {
		timeout, cause = g.s.ProbeTimeout, g.errProbeTimeout
	}
	cctx, cancel := context.WithTimeoutCause(ctx, timeout, cause)
	defer cancel()
	if g.s.Inline {
		return g.doInline(ctx, cctx, cause, done, fn)
	}

	res := make(chan error, 1)
	go func() {
		err := fn(cctx)
		g.release() // before the send, so that InFlight is down when Do returns
		res <- err
	}()
	select {
	case err := <-res:
		return g.settle(ctx, cctx, cause, done, err)
	case <-cctx.Done():
	}
	select {
	case err := <-res: // fn returned at the same moment: its result wins
		return g.settle(ctx, cctx, cause, done, err)
	default:
	}
	if context.Cause(cctx) != cause { // the caller's ctx ended first
		done(errExcluded)
		return g.callerLeft(ctx)
	}
	done(errFailure)
	return cause
}

// doInline is Do's call for Settings.Inline: fn on this goroutine.
func (g *Guard) doInline(ctx, cctx context.Context, cause error, done func(error), fn func(ctx context.Context) error) error {
	returned := false
	defer func() {
		if !returned { // fn panicked: its slot is free, and the call failed
			g.release()
			done(errFailure)
		}
	}()
	err := fn(cctx)
	returned = true
	g.release()
	return g.settle(ctx, cctx, cause, done, err)
}

// settle reports fn's result to the breaker and returns Do's error.
func (g *Guard) settle(ctx, cctx context.Context, cause error, done func(error), err error) error {
	switch {
	case err == nil:
		done(nil)
		return nil
	case context.Cause(cctx) == cause: // the guard's deadline came first
		done(errFailure)
		return cause
	case ctx.Err() != nil: // the caller left; fn's error is likely just that
		done(errExcluded)
		return g.callerLeft(ctx)
	case errors.Is(err, ErrBulkheadFull): // a nested guard refused
		done(errExcluded)
		return err
	case g.s.IsFailure(err):
		done(errFailure)
		return err
	default: // the dependency answered
		done(nil)
		return err
	}
}

func (g *Guard) callerLeft(ctx context.Context) error {
	return fmt.Errorf("%s: caller left: %w", g.s.Name, ctx.Err())
}

// acquire takes a bulkhead slot without waiting.
func (g *Guard) acquire() bool {
	limit := int64(g.s.MaxConcurrent)
	if limit < 0 {
		g.inFlight.Add(1)
		return true
	}
	for {
		n := g.inFlight.Load()
		if n >= limit {
			return false
		}
		if g.inFlight.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

func (g *Guard) release() { g.inFlight.Add(-1) }
