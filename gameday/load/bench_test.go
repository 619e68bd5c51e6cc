package load_test

import (
	"context"
	"sync/atomic"
	"testing"

	. "github.com/gameday-dev/gameday/gameday/load"
	"github.com/gameday-dev/gameday/internal/testenv"
)

// The generator's own memory: a waiting shopper holds its pool goroutine,
// its record and the report's. The HTTP side (a described system's
// requests, beside vegeta's, and a shopper waiting on a connection) is
// measured in gameday/system, where requests are built:
//
//	go test -run '^$' -bench . -benchtime 1x ./gameday/load/ ./gameday/system/

// BenchmarkMemoryPerWaitingShopper holds 20,000 shoppers waiting on a
// Target that blocks and measures the heap in use (after a GC) per waiting
// shopper. Goroutine stacks are not heap; they are reported apart.
func BenchmarkMemoryPerWaitingShopper(b *testing.B) {
	const n = 20_000
	for range b.N {
		var held atomic.Int64
		all, release := make(chan struct{}), make(chan struct{})
		t := TargetFunc(func(ctx context.Context, _ *Call) (Answer, error) {
			if held.Add(1) == n {
				close(all)
			}
			select {
			case <-release:
				return Answer{Code: 200, Means: MeansConfirmed}, nil
			case <-ctx.Done():
				return Answer{}, ctx.Err()
			}
		})
		testenv.MeasureWaiting(b, n, t, func() { <-all }, func() { close(release) })
	}
}
