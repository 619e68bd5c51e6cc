// Package wait is the one way gameday waits: for a while, or until its
// context is done, whichever comes first; and what a retry loop reports
// when its time is up.
package wait

import (
	"context"
	"errors"
	"time"
)

// For waits d, or until ctx is done; it reports whether d passed.
func For(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// Until waits until t, or until ctx is done; it reports whether t came.
func Until(ctx context.Context, t time.Time) bool { return For(ctx, time.Until(t)) }

// Cut reports whether err is only ctx ending in the middle of an attempt:
// the retry loop's own deadline, not an answer from what it asked.
func Cut(ctx context.Context, err error) bool {
	return err != nil && ctx.Err() != nil &&
		(errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled))
}

// Last is the failure a retry loop keeps after an attempt that failed
// with err, prev being the one it kept before: err, unless ctx ended in
// the middle of the attempt and an earlier attempt had an answer. A loop
// that gives up names why the thing it waited for never came (a 307, a
// refused connection), not that its own time ran out mid-request.
func Last(ctx context.Context, prev, err error) error {
	if prev != nil && Cut(ctx, err) {
		return prev
	}
	return err
}
