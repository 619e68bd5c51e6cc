// Package wait is the one way gameday waits: for a while, or until its
// context is done, whichever comes first.
package wait

import (
	"context"
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
