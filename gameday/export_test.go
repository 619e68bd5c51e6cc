package gameday

import (
	"context"

	"github.com/gameday-dev/gameday/gameday/podmove"
	"github.com/gameday-dev/gameday/scenarios"
)

// SetBeforeRemovingFaults makes f run just before the faults are removed
// at the end of the load, and returns what undoes it.
func SetBeforeRemovingFaults(f func()) (undo func()) {
	old := beforeRemovingFaults
	beforeRemovingFaults = f
	return func() { beforeRemovingFaults = old }
}

// SetMisroute makes f change every routing table the runner writes for
// pods, and returns what undoes it.
func SetMisroute(f func(routes map[string]string)) (undo func()) {
	old := misroute
	misroute = f
	return func() { misroute = old }
}

// SetMoveShop makes f carry out every move of a shop between pods, and
// returns what undoes it.
func SetMoveShop(f func(ctx context.Context, m *podmove.Move) podmove.Result) (undo func()) {
	old := moveShop
	moveShop = f
	return func() { moveShop = old }
}

// CheckoutArgs and PaymentArgs are the arguments the local environment
// starts sc's checkout and payment stand-in with: a test that starts a
// service for an external drill of sc configures it so, at the drill's
// time scale.
func CheckoutArgs(sc *scenarios.Scenario) []string            { return checkoutArgs(sc) }
func PaymentArgs(sc *scenarios.Scenario, seed int64) []string { return paymentArgs(sc, seed) }
