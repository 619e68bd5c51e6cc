package checkout

import (
	"context"
	"testing"
	"time"
)

// ReserveFor exposes Reserve's attempt number to the external tests.
func ReserveFor(t *testing.T, inv *Inventory, id string, ttl time.Duration) string {
	t.Helper()
	r, err := inv.Reserve(context.Background(), "sku-1", id, ttl)
	if err != nil || r.status != resReserved {
		t.Fatalf("reserve %s: %+v %v", id, r, err)
	}
	return r.attempt
}

// PaymentLine reports the payment line's free slots, waiters and the
// waiters answered too_late so far; ok is false without a line.
func PaymentLine(s *Server) (free, waiting int, skipped int64, ok bool) {
	if s.line == nil {
		return 0, 0, 0, false
	}
	s.line.mu.Lock()
	defer s.line.mu.Unlock()
	return s.line.free, s.line.waiters.Len(), s.line.skipped, true
}

// WaitFor polls cond every millisecond for up to 5s, failing t if it never
// holds.
func WaitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); !cond(); {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
