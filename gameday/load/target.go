package load

import (
	"context"
	"time"
)

// Target is the system under load: one call is one request of a shopper's
// purchase. It must honour ctx (Run gives each request the shopper's
// deadline plus a short grace, and cancels it when the run is aborted) and
// be safe for concurrent use.
//
// An answer of any status is an Answer with a nil error; the error is for
// a request that got no answer (connection refused or reset, timeout).
type Target interface {
	Do(ctx context.Context, c *Call) (Answer, error)
}

// Keeper is a Target that keeps values from answers for a shopper's later
// requests (a waiting-room token, a reservation id): Keeps is how many, and
// Run gives every shopper a Call.Kept of that length.
type Keeper interface {
	Keeps() int
}

// Call is one request of a shopper's purchase: what a Target needs to
// make it.
type Call struct {
	// CheckoutID identifies the purchase: the same for every request of
	// it, so that a retry is recognised (the idempotency key).
	CheckoutID string
	// Shopper is the shopper's id; Number its index in the plan.
	Shopper string
	Number  int
	// Shop is the shop the purchase is in (Plan.Shops); "" without shops.
	Shop string
	// Journey is the journey the call is a request of; "" for the
	// purchase.
	Journey string
	// Session is the shopper's session token; "" for a guest.
	Session string
	// Deadline is when the shopper leaves.
	Deadline time.Time
	// Step is the purchase's step, from 0; Attempt the attempt of this
	// step, from 1.
	Step, Attempt int
	// Kept holds what the Target kept from this shopper's earlier answers
	// (see Keeper); the Target may set its values.
	Kept []string
}

// Meaning is what an answer means to the shopper. The zero value is an
// error: an answer nobody understood.
type Meaning uint8

// The meanings of an answer.
const (
	MeansError       Meaning = iota // the purchase failed: the shopper stops
	MeansConfirmed                  // bought
	MeansDeclined                   // the payment was declined
	MeansSoldOut                    // nothing left
	MeansTooLate                    // refused at the shopper's deadline
	MeansUnavailable                // refused: come back after Retry-After, if any
	MeansRetryLater                 // in progress or pending: come back after Retry-After
	MeansNext                       // this step is done: go on to the next
	MeansOK                         // a journey that does not buy went through
)

var meaningNames = [...]string{"error", "confirmed", "declined", "sold_out", "too_late", "unavailable", "retry_later", "next", "ok"}

// String is the meaning's name as answer rules and attempts name it.
func (m Meaning) String() string {
	if int(m) < len(meaningNames) {
		return meaningNames[m]
	}
	return "error"
}

// ParseMeaning reads a meaning's name.
func ParseMeaning(s string) (Meaning, bool) {
	for i, n := range meaningNames {
		if n == s {
			return Meaning(i), true
		}
	}
	return MeansError, false
}

// MeaningNames lists every meaning's name, in order.
func MeaningNames() []string { return append([]string(nil), meaningNames[:]...) }

// Answer is what the Target made of one answer.
type Answer struct {
	Code  int // the HTTP status; 0 without one
	Means Meaning
	// Reason is a short word saying why it refused ("waiting_room",
	// "breaker_open"), when the target reads one; "" otherwise.
	Reason string
	// RetryAfter is the wait the system asked for before coming back; 0
	// when it asked for none.
	RetryAfter time.Duration
	// Degraded: the answer said it was served with a fallback.
	Degraded bool
	// Unmatched: no rule of the target understood the answer (Means is
	// then MeansError).
	Unmatched bool
	// Think is how long the shopper waits before the next step, when
	// Means is MeansNext: a journey's visitor reading the page.
	Think time.Duration
}

// TargetFunc adapts a function to Target.
type TargetFunc func(ctx context.Context, c *Call) (Answer, error)

var _ Target = TargetFunc(nil)

// Do calls f.
func (f TargetFunc) Do(ctx context.Context, c *Call) (Answer, error) { return f(ctx, c) }
