package checkout

import (
	"container/list"
	"context"
	"sync"
	"time"
)

// paymentLine is the checkout's own line for the payment provider's
// capacity (Config.PaymentSlots): at most that many charges are at the
// provider at once, and the others wait here, first come, first served.
//
// The line is where the deadline can be honoured at the moment it
// matters. A charge waiting in the provider's own queue cannot be
// skipped: whoever reaches a slot there is charged, even with 50 ms of
// patience left, and a charge the shopper does not wait for is voided,
// its slot spent on nobody. Here a freed slot goes to the first waiter
// that can still finish: one with more than need (Config.MinPaymentTime)
// left before its deadline. A waiter that can no longer finish leaves
// the line the moment that becomes true (its timer), answered too_late at
// once rather than at its deadline, and is skipped if the slot is given
// first. Waiters without a deadline (the modes that ignore it) wait their
// turn as long as it takes.
type paymentLine struct {
	need time.Duration
	now  func() time.Time

	mu      sync.Mutex
	free    int
	waiters list.List // of *lineWaiter, in arrival order
	skipped int64     // waiters answered too_late because they could not finish
}

// lineWaiter is one charge waiting for a slot. settled and granted are
// set under paymentLine.mu, and ready is closed when settled is set.
type lineWaiter struct {
	deadline time.Time // zero: none
	ready    chan struct{}
	settled  bool // granted a slot or skipped; no longer in the line
	granted  bool
}

func newPaymentLine(slots int, need time.Duration, now func() time.Time) *paymentLine {
	return &paymentLine{free: slots, need: need, now: now}
}

// canFinish reports whether a charge started at now, with a deadline of
// dl (zero: none), can finish before it.
func (l *paymentLine) canFinish(dl, now time.Time) bool {
	return dl.IsZero() || dl.Sub(now) > l.need
}

// acquire waits for a slot. It reports false, holding none, when ctx's
// deadline comes too close for a charge to finish (or ctx ends) first.
// A true must be followed by exactly one release.
func (l *paymentLine) acquire(ctx context.Context) bool {
	dl, _ := ctx.Deadline()
	l.mu.Lock()
	now := l.now()
	switch {
	case ctx.Err() != nil || !l.canFinish(dl, now):
		l.mu.Unlock()
		return false
	case l.free > 0 && l.waiters.Len() == 0:
		l.free--
		l.mu.Unlock()
		return true
	}
	w := &lineWaiter{deadline: dl, ready: make(chan struct{})}
	e := l.waiters.PushBack(w)
	l.mu.Unlock()

	var late <-chan time.Time
	if !dl.IsZero() {
		t := time.NewTimer(dl.Add(-l.need).Sub(now))
		defer t.Stop()
		late = t.C
	}
	select {
	case <-w.ready:
		return w.granted
	case <-late:
	case <-ctx.Done():
	}
	l.mu.Lock()
	if w.settled {
		// Settled as the timer fired or the shopper left: a slot given
		// to a waiter that is leaving goes to the next one.
		l.mu.Unlock()
		if w.granted {
			l.release()
		}
		return false
	}
	w.settled = true
	l.waiters.Remove(e)
	// Counted as too late when it is; a shopper who closed the page
	// earlier just left.
	if !l.canFinish(dl, l.now()) {
		l.skipped++
	}
	l.mu.Unlock()
	return false
}

// release gives the slot to the first waiter that can still finish,
// settling the ones before it as too late, or frees it.
func (l *paymentLine) release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	for e := l.waiters.Front(); e != nil; e = l.waiters.Front() {
		w := l.waiters.Remove(e).(*lineWaiter)
		w.settled = true
		if w.granted = l.canFinish(w.deadline, now); !w.granted {
			l.skipped++
		}
		close(w.ready)
		if w.granted {
			return
		}
	}
	l.free++
}

// counts returns the waiters in the line now and those answered too_late
// so far because they could not finish.
func (l *paymentLine) counts() (waiting int, skipped int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.waiters.Len(), l.skipped
}
