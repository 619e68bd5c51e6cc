package breakers

import (
	"errors"
	"fmt"
	"time"

	"github.com/sony/gobreaker/v2"
)

// State is a breaker state. It marshals to JSON as "closed", "half-open" or
// "open".
type State int

// The breaker states, with the same values as gobreaker's.
const (
	StateClosed   = State(gobreaker.StateClosed)
	StateHalfOpen = State(gobreaker.StateHalfOpen)
	StateOpen     = State(gobreaker.StateOpen)
)

// String returns "closed", "half-open", "open", or "State(n)" for any other
// value.
func (s State) String() string {
	switch s {
	case StateClosed:
		return "closed"
	case StateHalfOpen:
		return "half-open"
	case StateOpen:
		return "open"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// MarshalText returns the state's String, or an error for an unknown state.
func (s State) MarshalText() ([]byte, error) {
	if s < StateClosed || s > StateOpen {
		return nil, fmt.Errorf("marshal breaker state: unknown state %d", int(s))
	}
	return []byte(s.String()), nil
}

// UnmarshalText parses "closed", "half-open" or "open", so that a reader of
// [Transition] JSON (the runner, say) can decode it.
func (s *State) UnmarshalText(b []byte) error {
	for _, v := range []State{StateClosed, StateHalfOpen, StateOpen} {
		if string(b) == v.String() {
			*s = v
			return nil
		}
	}
	return fmt.Errorf("unmarshal breaker state: unknown state %q", b)
}

// Transition is one change of a breaker's state.
type Transition struct {
	From State     `json:"from"`
	To   State     `json:"to"`
	At   time.Time `json:"at"` // from Settings.Now, when the change was observed
}

// Errors returned by [Guard.Do], always wrapped with the dependency's name;
// test for them with errors.Is.
var (
	// ErrOpen: the breaker is open, or half-open with all its probes in
	// flight. fn was not called.
	ErrOpen = errors.New("breaker open")
	// ErrBulkheadFull: Settings.MaxConcurrent calls are already in flight. fn
	// was not called and the breaker's counts were not touched.
	ErrBulkheadFull = errors.New("bulkhead full")
	// ErrTimeout: the guard's own deadline (Timeout, or ProbeTimeout for a
	// probe) passed before fn returned. It counts as a dependency failure. It
	// does not wrap context.DeadlineExceeded, which Do keeps for the caller's
	// own deadline.
	ErrTimeout = errors.New("dependency deadline exceeded")
)

// Settings configures a [Guard]. The zero value of every field is valid and
// stands for the default given in its comment; [New] normalises them, and
// [Guard.Settings] returns the result.
type Settings struct {
	// Name of the dependency, e.g. "payment"; it prefixes the guard's errors.
	// "" → "dependency".
	Name string
	// MaxConcurrent is the bulkhead: how many calls may be in flight at once
	// (counting fns still running after Do gave up on them). Past it Do
	// refuses at once with ErrBulkheadFull. 0 → 64; negative → unlimited.
	MaxConcurrent int
	// Timeout is the deadline of a call made while the breaker is closed.
	// 0 or negative → 1s.
	Timeout time.Duration
	// ProbeTimeout is the deadline of a call made while the breaker is
	// half-open (a probe), so that a hung probe cannot hold the breaker
	// half-open. 0 or negative → Timeout/4, at least 1ms.
	ProbeTimeout time.Duration
	// ConsecutiveFailures trips the breaker after this many failures in a
	// row. 0 → 5.
	ConsecutiveFailures uint32
	// OpenFor is how long the breaker stays open before it lets a probe
	// through (gobreaker's Timeout). 0 or negative → 5s.
	OpenFor time.Duration
	// HalfOpenProbes is how many calls may run while half-open; that many
	// successes in a row close the breaker, one failure reopens it
	// (gobreaker's MaxRequests). 0 → 1.
	HalfOpenProbes uint32
	// Interval clears the counts every Interval while closed (gobreaker's
	// Interval). 0 or negative → never (stored as 0).
	Interval time.Duration
	// IsFailure says whether an error returned by fn is the dependency's
	// fault; when it returns false the call counts as a success (the
	// dependency answered). It is not asked about the guard's own timeout
	// (always a failure), the caller leaving or a wrapped ErrBulkheadFull
	// (never counted). nil → every such error is a failure.
	IsFailure func(error) bool
	// Now stamps transitions. It is called while gobreaker holds its lock, so
	// it must not call the Guard. nil → time.Now.
	Now func() time.Time
	// OnOpen, when set, is called in a goroutine of its own each time the
	// breaker opens. It is the place to drop the dependency's pooled
	// connections: when a peer's host vanishes (a killed container), its
	// connections go silent instead of being reset, and every probe would
	// otherwise take one of them and time out.
	OnOpen func()
	// MaxTransitions is how many transitions are kept, oldest dropped first;
	// TransitionCount still counts the dropped ones. 0 or negative → 1024.
	MaxTransitions int
	// Inline runs fn on the caller's goroutine. Set it only for a fn that
	// returns by its context's deadline: go-redis with
	// ContextTimeoutEnabled, net/http with a request context. Do then
	// returns when fn does: at the guard's deadline for such a fn, but
	// never before fn, however long a fn that ignores its context takes,
	// and a fn that ignores its deadline and then succeeds counts as a
	// success. A caller who leaves is told so only when fn returns: go-redis
	// honours a context's deadline but not its cancellation during a read,
	// so its call runs on to its answer or the guard's deadline. Without it (the
	// default) fn runs on a goroutine of its own and Do returns at the
	// deadline whatever fn does; that costs a goroutine and two hand-offs
	// between threads a call (docs/benchmarks.md). A panic in an inline
	// fn frees its bulkhead slot, counts as a failure and goes on up.
	Inline bool
}

// Defaults applied by New to zero fields. A probe's deadline defaults to a
// quarter of Timeout (ProbeTimeoutFor).
const (
	DefaultMaxConcurrent  = 64
	DefaultTimeout        = time.Second
	DefaultFailures       = 5
	DefaultOpenFor        = 5 * time.Second
	defaultName           = "dependency"
	defaultProbes         = 1
	defaultMaxTransitions = 1024
	minProbeTimeout       = time.Millisecond
)

// ProbeTimeoutFor is the probe deadline New gives a guard whose Settings
// leave ProbeTimeout zero: a quarter of its timeout, at least a
// millisecond.
func ProbeTimeoutFor(timeout time.Duration) time.Duration {
	return max(timeout/4, minProbeTimeout)
}

func (s Settings) normalise() Settings {
	if s.Name == "" {
		s.Name = defaultName
	}
	if s.MaxConcurrent == 0 {
		s.MaxConcurrent = DefaultMaxConcurrent
	}
	if s.Timeout <= 0 {
		s.Timeout = DefaultTimeout
	}
	if s.ProbeTimeout <= 0 {
		s.ProbeTimeout = ProbeTimeoutFor(s.Timeout)
	}
	if s.ConsecutiveFailures == 0 {
		s.ConsecutiveFailures = DefaultFailures
	}
	if s.OpenFor <= 0 {
		s.OpenFor = DefaultOpenFor
	}
	if s.HalfOpenProbes == 0 {
		s.HalfOpenProbes = defaultProbes
	}
	if s.Interval < 0 {
		s.Interval = 0
	}
	if s.IsFailure == nil {
		s.IsFailure = anyError
	}
	if s.Now == nil {
		s.Now = time.Now
	}
	if s.MaxTransitions <= 0 {
		s.MaxTransitions = defaultMaxTransitions
	}
	return s
}

func anyError(error) bool { return true }
