package checkout

import (
	"testing"
	"time"
)

// Once Redis has answered for a purchase, its pending record goes, so that
// a later outage is not answered "pending" for a purchase already settled
// (confirmed, or its charge voided); another shopper's request under the
// same id leaves the record alone; an expired record is no longer held.
// The count that lets a request skip the lock when nothing is pending
// follows the record.
func TestPendingIsForgottenWhenRedisAnswers(t *testing.T) {
	s := &Server{pending: map[string]pendingPurchase{}}
	mine := Request{CheckoutID: "c1", Shopper: "s1", SKU: "sku"}
	s.markPending(mine, time.Now().Add(time.Minute))
	if held, own := s.pendingFor(mine); !held || !own || s.pendingN.Load() != 1 {
		t.Fatalf("after marking: held %v, mine %v, count %d", held, own, s.pendingN.Load())
	}
	other := mine
	other.Shopper = "s2"
	s.forgetPending(other)
	if held, own := s.pendingFor(other); !held || own {
		t.Errorf("another shopper's answer forgot the record: held %v, mine %v", held, own)
	}
	s.forgetPending(mine)
	if held, _ := s.pendingFor(mine); held || s.pendingN.Load() != 0 {
		t.Errorf("Redis answered, yet the purchase is still pending: held %v, count %d", held, s.pendingN.Load())
	}
	s.markPending(mine, time.Now().Add(-time.Millisecond))
	if held, _ := s.pendingFor(mine); held {
		t.Error("a record past its lease is still held")
	}
}
