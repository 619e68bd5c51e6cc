package gameday

import (
	"testing"
	"time"
)

const sec = time.Second

// The guard aborts only when the bad share over the last second stays
// above the ratio for the whole hold time.
func TestAbortGuard(t *testing.T) {
	g := newAbortGuard(0.5, 2*sec, func() {})
	t0 := time.Now()
	tick := func(at time.Duration, bad, good int) bool {
		for range bad {
			g.observeAt(t0.Add(at), "unavailable")
		}
		for range good {
			g.observeAt(t0.Add(at), "confirmed")
		}
		return g.check(t0.Add(at))
	}
	if tick(0, 9, 1) || tick(sec, 9, 1) {
		t.Fatal("aborted before the condition held for 2s")
	}
	if tick(1500*time.Millisecond, 1, 9) {
		t.Fatal("aborted while the last second was mostly good")
	}
	// Bad again from 2.5 s: the hold restarts there.
	if tick(2500*time.Millisecond, 10, 0) || tick(3500*time.Millisecond, 10, 0) {
		t.Fatal("aborted before 2s of bad since the restart")
	}
	if !tick(4500*time.Millisecond, 10, 0) {
		t.Fatal("did not abort after 2s of bad")
	}
	if g.reason() == "" {
		t.Error("no reason given")
	}
}

// A checkout that hangs finishes nobody: the guard keeps holding through
// empty seconds and aborts.
func TestAbortGuardSeesAHang(t *testing.T) {
	g := newAbortGuard(0.5, 2*sec, func() {})
	t0 := time.Now()
	for range 10 {
		g.observeAt(t0, "gave_up")
	}
	if g.check(t0) {
		t.Fatal("aborted at once")
	}
	if g.check(t0.Add(1500 * time.Millisecond)) {
		t.Fatal("aborted before the hold")
	}
	if !g.check(t0.Add(2500 * time.Millisecond)) {
		t.Fatal("a hang (no shopper finishing) did not abort")
	}
}
