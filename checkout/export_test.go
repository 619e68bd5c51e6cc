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
