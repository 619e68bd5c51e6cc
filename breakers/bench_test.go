package breakers_test

import (
	"context"
	"fmt"
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

// BenchmarkGuardDo: a call on a goroutine of its own (the default), and
// on the caller's (Settings.Inline), side by side.
func BenchmarkGuardDo(b *testing.B) {
	for _, inline := range []bool{false, true} {
		b.Run(fmt.Sprintf("inline=%v", inline), func(b *testing.B) {
			g := breakers.New(breakers.Settings{Name: "bench", Inline: inline})
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if err := g.Do(ctx, trivial); err != nil {
					b.Fatal(err)
				}
			}
		})
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
