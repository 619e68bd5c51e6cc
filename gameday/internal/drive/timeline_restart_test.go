package drive

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/env"
	"github.com/gameday-dev/gameday/gameday/faults"
	"github.com/gameday-dev/gameday/gameday/judge"
	"github.com/gameday-dev/gameday/gameday/runrecord"
	"github.com/gameday-dev/gameday/gameday/system"
	"github.com/gameday-dev/gameday/internal/testenv"
	"github.com/gameday-dev/gameday/scenarios"
)

// restartTimeline runs one restart of dependency db, whose command
// handle's start is start, with the given for, on a timeline started now.
// It returns the fault's record, its spans, and how long the timeline ran:
// nothing the timeline records can be later than that.
func restartTimeline(t *testing.T, start string, window time.Duration) (runrecord.FaultRecord, judge.FaultTimes, []scenarios.Fault, time.Duration) {
	t.Helper()
	// The dependency answers throughout: its ready check (tcp://UPSTREAM)
	// passes as soon as the start program is done.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	sys, err := system.Parse("d.yaml", []byte(fmt.Sprintf(`
name: d
base_url: http://127.0.0.1:1
sku: s
purchase: {steps: [{url: /, answers: [{outcome: confirmed}]}]}
dependencies:
  db:
    listen: %s
    upstream: %s
    process: {command: {kill: ["true"], start: %s}}
`, testenv.FreeAddr(t), ln.Addr(), start)), nil)
	if err != nil {
		t.Fatal(err)
	}
	e, err := env.StartDescribed(context.Background(), sys, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	fs := []scenarios.Fault{{Name: "bounce", Target: "db", For: scenarios.Duration(window), Process: "restart"}}
	t0 := time.Now()
	tl := newTimeline(faults.NewInjector(e, nil, "run1"), fs, t0, 1)
	tl.onError = func(name string, err error) { t.Errorf("fault %s: %v", name, err) }
	tl.start(context.Background())
	tl.wait()
	ran := time.Since(t0)
	// The load's end is far off: a record must not be cut to it.
	end := ran + time.Hour
	recs := tl.records(end)
	if len(recs) != 1 || recs[0].Error != "" {
		t.Fatalf("records %+v, want the restart, done", recs)
	}
	return recs[0], tl.spans(end), fs, ran
}

// A restart ends when the dependency is back, not at its start plus its
// for: its start and ready check can take longer. It once ended at start +
// for, so the after window and breaker_closes counted from a moment the
// dependency was still down. Here the start takes at least 400 ms and for
// is 100 ms.
func TestRestartEndsWhenTheDependencyIsBack(t *testing.T) {
	r, ft, fs, ran := restartTimeline(t, `[sleep, "0.4"]`, 100*time.Millisecond)
	if r.EndMS < r.StartMS+400 {
		t.Errorf("the restart ended at %d ms, %d ms after it began: before its 400 ms start was done", r.EndMS, r.EndMS-r.StartMS)
	}
	if r.EndMS > ran.Milliseconds() {
		t.Errorf("the restart ended at %d ms, after the timeline was done (%d ms)", r.EndMS, ran.Milliseconds())
	}
	if r.BackMS == nil || *r.BackMS != r.EndMS {
		t.Errorf("back_ms %s, want the end, %d ms: the restart outlasted its for", ptrText(r.BackMS), r.EndMS)
	}
	if r.LiftedMS == nil || *r.LiftedMS != r.StartMS {
		t.Errorf("lifted_ms %s, want the start, %d ms: the start follows the kill at once", ptrText(r.LiftedMS), r.StartMS)
	}

	// The after window begins, and the breaker's recovery is measured,
	// from the dependency's return.
	w := judge.NewWindows(fs, ft, ran+time.Hour)
	if from, _ := w.Bounds("after"); from < time.Duration(r.StartMS+400)*time.Millisecond {
		t.Errorf("the after window begins at %s, while the dependency was still down", from)
	}
	// The breaker closes 300 ms after the timeline was done: at most that
	// long after the restart began plus its 400 ms start, and at least
	// 300 ms after the dependency was back.
	closed := ran.Milliseconds() + 300
	trans := map[string][]judge.Transition{"db": {{State: "open", AtMS: r.StartMS + 50}, {State: "closed", AtMS: closed}}}
	br := judge.Breakers(trans, fs, ft)["db"]
	if most := closed - r.StartMS - 400; br.ClosedAfterMS == nil || *br.ClosedAfterMS < 300 || *br.ClosedAfterMS > most {
		t.Errorf("closed after %s ms, want from 300 to %d: measured from the dependency's return", ptrText(br.ClosedAfterMS), most)
	}
}

// A restart quicker than its for keeps the window its for says, and a
// breaker that closed within it, once the dependency was back, closed with
// the dependency's return (0). It was once looked for only after the
// window's end, and reported as never closed.
func TestQuickRestartKeepsItsWindow(t *testing.T) {
	r, ft, fs, ran := restartTimeline(t, `["true"]`, 10*time.Second)
	if r.EndMS != r.StartMS+10_000 {
		t.Errorf("the restart's window is %d ms, want its for, 10000 ms", r.EndMS-r.StartMS)
	}
	if r.BackMS == nil || *r.BackMS < r.StartMS || *r.BackMS > ran.Milliseconds() {
		t.Errorf("back_ms %s, want when the restart was done, from %d to %d ms", ptrText(r.BackMS), r.StartMS, ran.Milliseconds())
	}
	trans := map[string][]judge.Transition{"db": {{State: "open", AtMS: r.StartMS + 50}, {State: "closed", AtMS: r.StartMS + 2000}}}
	br := judge.Breakers(trans, fs, ft)["db"]
	if br.ClosedAfterMS == nil || *br.ClosedAfterMS != 0 {
		t.Errorf("closed after %s ms, want 0: it closed within the restart's window", ptrText(br.ClosedAfterMS))
	}
}

// ptrText is a record's optional time, "none" when it is absent.
func ptrText(p *int64) string {
	if p == nil {
		return "none"
	}
	return fmt.Sprint(*p)
}
