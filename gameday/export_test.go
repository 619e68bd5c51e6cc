package gameday

import (
	"context"

	"github.com/gameday-dev/gameday/gameday/internal/drive"
	"github.com/gameday-dev/gameday/gameday/internal/prepare"
	"github.com/gameday-dev/gameday/gameday/podmove"
	"github.com/gameday-dev/gameday/scenarios"
)

// SetBeforeRemovingFaults makes f run just before the faults are removed
// at the end of the load, and returns what undoes it.
func SetBeforeRemovingFaults(f func()) (undo func()) {
	old := drive.BeforeRemovingFaults
	drive.BeforeRemovingFaults = f
	return func() { drive.BeforeRemovingFaults = old }
}

// SetMisroute makes f change every routing table the runner writes for
// pods, and returns what undoes it.
func SetMisroute(f func(routes map[string]string)) (undo func()) {
	old := prepare.Misroute
	prepare.Misroute = f
	return func() { prepare.Misroute = old }
}

// SetMoveShop makes f carry out every move of a shop between pods, and
// returns what undoes it.
func SetMoveShop(f func(ctx context.Context, m *podmove.Move) podmove.Result) (undo func()) {
	old := drive.MoveShop
	drive.MoveShop = f
	return func() { drive.MoveShop = old }
}

// CheckoutArgs and PaymentArgs are the arguments the local environment
// starts sc's checkout and payment stand-in with: a test that starts a
// service for an external drill of sc configures it so, at the drill's
// time scale.
func CheckoutArgs(sc *scenarios.Scenario) []string { return prepare.CheckoutArgs(sc) }
func PaymentArgs(sc *scenarios.Scenario, seed int64) []string {
	return prepare.PaymentArgs(sc, seed)
}
