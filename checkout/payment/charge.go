package payment

import "time"

// Status is the outcome of a charge.
type Status string

// The statuses of a charge. Only an approved charge moved money.
const (
	// StatusApproved is a charge the provider accepted: the shopper paid.
	StatusApproved Status = "approved"
	// StatusDeclined is a charge the provider refused: nothing was paid.
	StatusDeclined Status = "declined"
	// StatusVoided is a charge cancelled by a void before it settled, or
	// recorded after a void for its key: nothing was paid.
	StatusVoided Status = "voided"
)

// Charge is one charge as the provider recorded it.
type Charge struct {
	// ID is the provider's identifier, "ch_" and a counter.
	ID string `json:"id"`
	// Key is the idempotency key the charge was created with.
	Key string `json:"key"`
	// AmountCents is the amount charged, in cents.
	AmountCents int64 `json:"amount_cents"`
	// Shopper identifies who was charged.
	Shopper string `json:"shopper"`
	// SKU is the item paid for; it may be empty.
	SKU string `json:"sku"`
	// Status is the outcome: approved, declined or voided.
	Status Status `json:"status"`
	// CreatedAt is when processing ended and the charge was recorded, in UTC.
	CreatedAt time.Time `json:"created_at"`
	// VoidedAt is when the charge was voided, or nil if it was not. For a
	// charge voided before it was recorded it is the time of the void
	// request, which can be earlier than CreatedAt.
	VoidedAt *time.Time `json:"voided_at,omitempty"`
}

// clone returns a copy of c that shares no memory with it.
func (c *Charge) clone() Charge {
	out := *c
	if c.VoidedAt != nil {
		t := *c.VoidedAt
		out.VoidedAt = &t
	}
	return out
}

// ChargeRequest asks for a charge. It is also the body of POST /charges.
type ChargeRequest struct {
	// Key is the idempotency key: the same key is never charged twice.
	// Required.
	Key string `json:"key"`
	// AmountCents is the amount to charge, in cents; it must be above 0.
	AmountCents int64 `json:"amount_cents"`
	// Shopper identifies who pays. Required.
	Shopper string `json:"shopper"`
	// SKU is the item paid for. Optional.
	SKU string `json:"sku"`
}
