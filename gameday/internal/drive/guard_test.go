package drive

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/fleet"
	"github.com/gameday-dev/gameday/gameday/judge"
	"github.com/gameday-dev/gameday/gameday/runrecord"
	"github.com/gameday-dev/gameday/scenarios"
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

// What the runner hands judging when the load stopped: the guard's reason
// reaches the verdict (it once arrived empty: "aborted by the guard: "),
// a fault's error and a lost worker are told apart, and nothing is said
// when nothing stopped the load.
func TestEndingCarriesWhyTheLoadStopped(t *testing.T) {
	g := newAbortGuard(0.5, 2*sec, func() {})
	t0 := time.Now()
	for _, at := range []time.Duration{0, sec, 2 * sec, 3 * sec} {
		for range 10 {
			g.observeAt(t0.Add(at), "unavailable")
		}
		g.check(t0.Add(at))
	}
	if g.reason() == "" {
		t.Fatal("the guard did not trip")
	}
	j := judge.Run(&scenarios.Scenario{Name: "s"}, &judge.Observations{Ending: ended(errAborted, nil, g)})
	if j.Verdict != runrecord.VerdictInconclusive || j.Reason != "aborted by the guard: "+g.reason() {
		t.Errorf("aborted by the guard: %s %q", j.Verdict, j.Reason)
	}
	faultErr := fmt.Errorf("%w: inject slow: refused", errFault)
	if e := ended(faultErr, nil, nil); e.Fault != faultErr.Error() || e.Aborted {
		t.Errorf("a fault's error: %+v", e)
	}
	shard := fmt.Errorf("%w: shard 2 stopped", fleet.ErrShard)
	if e := ended(nil, shard, nil); e.ShardLost != shard.Error() || e.Fault != "" || e.Aborted {
		t.Errorf("a lost worker: %+v", e)
	}
	if e := ended(nil, errors.New("the load's own error"), nil); e.Fault != "" || e.Aborted || e.ShardLost != "" || e.Guard != "" {
		t.Errorf("nothing stopped the load: %+v", e)
	}
}
