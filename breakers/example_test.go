package breakers_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gameday-dev/gameday/breakers"
)

func Example() {
	payment := breakers.New(breakers.Settings{
		Name:                "payment",
		MaxConcurrent:       32,
		Timeout:             300 * time.Millisecond,
		ConsecutiveFailures: 2,
		OpenFor:             time.Minute,
	})
	down := errors.New("connection refused")
	charge := func(ctx context.Context) error { return down } // the provider is down

	for range 3 {
		err := payment.Do(context.Background(), charge)
		fmt.Printf("%v (open: %t)\n", err, errors.Is(err, breakers.ErrOpen))
	}
	fmt.Println(payment.State())
	for _, t := range payment.Transitions() {
		fmt.Println(t.From, "→", t.To)
	}
	// Output:
	// connection refused (open: false)
	// connection refused (open: false)
	// payment: breaker open (open: true)
	// open
	// closed → open
}

func ExampleGuard_Do_callerLeft() {
	payment := breakers.New(breakers.Settings{Name: "payment", ConsecutiveFailures: 1})
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the shopper gave up

	err := payment.Do(ctx, func(ctx context.Context) error { return nil })
	fmt.Println(err)
	fmt.Println(errors.Is(err, context.Canceled), payment.State())
	// Output:
	// payment: caller left: context canceled
	// true closed
}
