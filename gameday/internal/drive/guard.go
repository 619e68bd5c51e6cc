package drive

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/gameday-dev/gameday/gameday/load"
)

// abortGuard stops a drill that hurts longer than planned: when the share
// of shoppers ending badly over the last second stays above a ratio for a
// time, it calls abort.
type abortGuard struct {
	ratio float64
	hold  time.Duration
	abort func()

	mu     sync.Mutex
	events []guardEvent // the last second
	since  time.Time    // when the condition started to hold
	why    string
}

type guardEvent struct {
	at  time.Time
	bad bool
}

func newAbortGuard(ratio float64, hold time.Duration, abort func()) *abortGuard {
	return &abortGuard{ratio: ratio, hold: hold, abort: abort}
}

func (g *abortGuard) observe(outcome string) { g.observeAt(time.Now(), outcome) }

func (g *abortGuard) observeAt(at time.Time, outcome string) {
	if outcome == "" {
		return
	}
	bad := outcome == load.OutcomeUnavailable || outcome == load.OutcomeError || outcome == load.OutcomeGaveUp || outcome == load.OutcomeDropped
	g.mu.Lock()
	g.events = append(g.events, guardEvent{at: at, bad: bad})
	g.mu.Unlock()
}

// watch checks the condition every 100ms until ctx ends or it aborts.
func (g *abortGuard) watch(ctx context.Context) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			if g.check(now) {
				g.abort()
				return
			}
		}
	}
}

func (g *abortGuard) check(now time.Time) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	cut := 0
	for cut < len(g.events) && now.Sub(g.events[cut].at) > time.Second {
		cut++
	}
	g.events = g.events[cut:]
	bad := 0
	for _, e := range g.events {
		if e.bad {
			bad++
		}
	}
	if len(g.events) == 0 {
		// Nobody finished in the last second: a hang, or a lull. Neither
		// starts the hold nor ends one already running.
		if g.since.IsZero() {
			return false
		}
	} else if float64(bad)/float64(len(g.events)) <= g.ratio {
		g.since = time.Time{}
		return false
	}
	if g.since.IsZero() {
		g.since = now
	}
	if now.Sub(g.since) >= g.hold {
		g.why = fmt.Sprintf("for %s, more than %.0f%% of the shoppers finishing each second ended badly, or none finished (last second: %d of %d)", g.hold, g.ratio*100, bad, len(g.events))
		return true
	}
	return false
}

func (g *abortGuard) reason() string {
	if g == nil {
		return ""
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.why
}
