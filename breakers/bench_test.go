package breakers_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/gameday-dev/gameday/breakers"
)

// trivial stands for the cheapest possible dependency call.
//
//go:noinline
func trivial(context.Context) error { return nil }

func BenchmarkBareCall(b *testing.B) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := trivial(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGuardDo(b *testing.B) {
	g := breakers.New(breakers.Settings{Name: "bench"})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := g.Do(ctx, trivial); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGuardDoParallel(b *testing.B) {
	// Room for every parallel caller: the benchmark measures the guard, not
	// refusals.
	g := breakers.New(breakers.Settings{Name: "bench", MaxConcurrent: 4 * runtime.GOMAXPROCS(0)})
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := g.Do(ctx, trivial); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
