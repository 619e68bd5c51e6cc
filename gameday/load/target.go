package load

import (
	"context"
	"time"

	"github.com/gameday-dev/gameday/checkout"
)

// Target is the checkout under load: one call is one attempt. It must honour
// ctx (Run gives each attempt the shopper's deadline plus a short grace, and
// cancels it when the run is aborted) and be safe for concurrent use.
//
// An answer of any status is an Answer with a nil error; the error is for an
// attempt that got no answer (connection refused or reset, timeout).
type Target interface {
	Checkout(ctx context.Context, req checkout.Request) (Answer, error)
}

// Answer is the checkout's answer to one attempt.
type Answer struct {
	Code int               // HTTP status
	Body checkout.Response // the decoded body; zero when it was not JSON
	// RetryAfter is the wait the checkout asked for (retry_after_ms, or the
	// Retry-After header); 0 when it asked for none.
	RetryAfter time.Duration
	// Token is the waiting-room token the checkout gave (the
	// Waiting-Room-Token header); "" when it gave none. The shopper sends
	// the latest one it was given on every later attempt. Why the answer
	// refused is Body.Reason.
	Token string
}

// TargetFunc adapts a function to Target.
type TargetFunc func(ctx context.Context, req checkout.Request) (Answer, error)

var _ Target = TargetFunc(nil)

// Checkout calls f.
func (f TargetFunc) Checkout(ctx context.Context, req checkout.Request) (Answer, error) {
	return f(ctx, req)
}
