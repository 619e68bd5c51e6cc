package admission

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// line is a fair room's line of shoppers and its controller (see the
// package doc for the rule, and docs/admission.md for why). Room.mu guards
// it.
type line struct {
	lastStamp int64 // the greatest stamp issued or adopted
	serving   int64 // T, Unix nanoseconds; 0 before the first call
	// waiting holds the stamps above T, in increasing order; called the
	// stamps T passed whose shoppers are presumed present and have not
	// come back, in increasing order too (calls are made in stamp order,
	// and removals keep it).
	waiting, called []entry

	target   float64 // K
	lastTick int64   // when Tick last ran; 0 before the first

	// Estimates, as sums decayed with the time constant GoneAfter: the
	// called shoppers who came back and those presumed gone (what share
	// of a call comes back), and in progress × time and admissions (the
	// time a checkout takes, by Little's law).
	back, gone       float64
	busy, admissions float64
	admittedLastTick int64
}

// entry is one issued stamp and when its shopper was last seen: when its
// token was issued, or last presented.
type entry struct {
	stamp, seen int64 // Unix nanoseconds
}

// firstAttempt issues a token to a shopper without one. In a room with a
// free place and nobody ahead of it, the shopper is admitted at once: T
// moves onto its stamp, which keeps the order (every live stamp before it
// was called already) and spares it a Retry-After that nobody needed it
// to wait. "A free place" is both fewer than N in progress (the shopper
// is here and takes the place now, unlike a called shopper who is still
// on its way) and the controller's allowance (places kept for called
// shoppers on their way back are not given away).
func (r *Room) firstAttempt(checkoutID string) Decision {
	r.mu.Lock()
	f := &r.fair
	now := r.nowLocked()
	stamp := max(now, f.lastStamp+1)
	f.lastStamp = stamp
	r.tokensIssued++
	r.skipGone(now) // shoppers who left do not keep a newcomer out
	admit := len(f.waiting) == 0 && r.inProgress < r.cfg.InProgress && r.expected() < f.target
	if admit {
		f.serving = stamp
		r.admitLocked()
	} else {
		f.waiting = append(f.waiting, entry{stamp: stamp, seen: now})
		r.waitingAnswers++
	}
	r.mu.Unlock()
	// Signing needs no lock: the keys never change.
	d := Decision{Admitted: admit, Token: r.signers[0].sign(stamp, checkoutID)}
	if !admit {
		d.Refusal = RefusalWaitingRoom
	}
	return d
}

// admitToken admits a token at or before T, and otherwise notes that its
// shopper is still there.
func (r *Room) admitToken(checkoutID, token string) Decision {
	stamp, err := verifyWith(r.signers, token, checkoutID)
	r.mu.Lock()
	defer r.mu.Unlock()
	f := &r.fair
	now := r.nowLocked()
	switch {
	case err != nil:
		r.tokensRefused++
		return Decision{Refusal: RefusalTokenInvalid}
	case now-stamp > int64(r.cfg.TokenTTL):
		r.tokensRefused++
		return Decision{Refusal: RefusalTokenExpired}
	case stamp <= f.serving:
		// Called, or passed as gone, or admitted before: the threshold is
		// the promise.
		if i, ok := find(f.called, stamp); ok {
			f.called = slices.Delete(f.called, i, i+1)
			f.back++
		}
		r.admitLocked()
		return Decision{Admitted: true, Token: token}
	}
	if i, ok := find(f.waiting, stamp); ok {
		f.waiting[i].seen = now
	} else {
		// A valid stamp above T that this room did not issue (before a
		// restart, or by another instance with the same keys) joins the
		// line in its place, so that the controller calls it in its turn.
		f.waiting = slices.Insert(f.waiting, i, entry{stamp: stamp, seen: now})
		f.lastStamp = max(f.lastStamp, stamp)
	}
	r.waitingAnswers++
	return Decision{Token: token, Refusal: RefusalWaitingRoom}
}

// find looks for stamp among entries, which are in stamp order.
func find(entries []entry, stamp int64) (int, bool) {
	return slices.BinarySearchFunc(entries, stamp, func(e entry, s int64) int { return cmp.Compare(e.stamp, s) })
}

// Tick is one step of the fair controller (see the package doc), or of
// the paced room's estimates (paced.go); it does nothing in the other
// modes.
func (r *Room) Tick() {
	switch {
	case r.cfg.Mode == ModePaced:
		r.pacedTick()
		return
	case !r.cfg.Mode.Fair():
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	f := &r.fair
	now := r.nowLocked()
	dt := r.step(&f.lastTick, now)

	// Called shoppers presumed gone, or whose tokens have expired, stop
	// counting.
	before := len(f.called)
	f.called = slices.DeleteFunc(f.called, func(e entry) bool { return r.gone(e, now) })
	r.skipGone(now)

	// The estimates forget with the time constant GoneAfter: every call's
	// outcome (back, or presumed gone) is known within GoneAfter of it,
	// so that is the shortest memory that sees a whole round of calls.
	decay := math.Exp(-dt / float64(r.cfg.GoneAfter))
	f.back *= decay
	f.gone = f.gone*decay + float64(before-len(f.called))
	f.busy = f.busy*decay + float64(r.inProgress)*dt
	f.admissions = f.admissions*decay + float64(r.admitted-f.admittedLastTick)
	f.admittedLastTick = r.admitted

	r.steer(dt)

	// Call live stamps in order while the outstanding count expected is
	// under K; T passes the gone ones without counting them.
	for len(f.waiting) > 0 && r.expected() < f.target {
		e := f.waiting[0]
		f.waiting = f.waiting[1:]
		f.serving = e.stamp
		if !r.gone(e, now) {
			f.called = append(f.called, e)
		}
	}
}

// step is the time a Tick at now stands for, since *last (0 before the
// first), and moves *last to now. A late tick (a paused process) counts at
// most one RetryAfter, so that one stale reading of in progress cannot
// move the fair room's K by more than a factor e, nor weigh more than a
// second in the paced room's estimates.
func (r *Room) step(last *int64, now int64) float64 {
	var dt float64
	if *last > 0 {
		dt = float64(min(now-*last, int64(r.cfg.RetryAfter)))
	}
	*last = now
	return dt
}

// steer is the integral step on K: ln K moves by (N − in progress) / N
// per RetryAfter.
//
// Integral, because what K must be is unknown and changes: it is N plus
// the called shoppers on their way back, which depends on how long a
// checkout takes and how long a called shopper takes to come back, so the
// room finds it from the one thing it wants, N in progress. In the log,
// because K's right value spans a wide range (about 3N for a 250 ms
// checkout, over 20N for a 25 ms one, with 1 s Retry-After): steps in
// proportion to K make the loop's time constant one RetryAfter whatever
// K is, where a fixed step would be too slow to reach 20N or too quick
// around 2N. One RetryAfter is slow enough for the loop's delay, the
// half Retry-After or so a called shopper takes to come back.
//
// Anti-windup: K grows only while someone waits (with nobody to call,
// a shortfall says nothing about K, and a K grown on it would let a burst
// in when a line forms again), and never beyond N × (1 + GoneAfter / S),
// S the time a checkout takes: a live called shopper is back within
// GoneAfter, and N/S admissions a second keep N in progress, so no more
// than N/S × GoneAfter called shoppers on their way back are ever of use.
// Without an estimate of S (nothing admitted or in progress lately), K
// does not grow. K never goes below N.
func (r *Room) steer(dt float64) {
	f := &r.fair
	n := float64(r.cfg.InProgress)
	e := n - float64(r.inProgress)
	if e > 0 && (len(f.waiting) == 0 || f.busy == 0 || f.admissions == 0) {
		return
	}
	k := f.target * math.Exp(e/n*dt/float64(r.cfg.RetryAfter))
	if e > 0 {
		// busy/admissions is S, in nanoseconds.
		k = min(k, max(f.target, n*(1+float64(r.cfg.GoneAfter)*f.admissions/f.busy)))
	}
	f.target = max(k, n)
}

// expected is what the controller steers against K: in progress, plus the
// called shoppers expected back. Not every called shopper comes back: the
// ones at the head of a long line are the oldest, and in a sale that
// outlasts patience many of them left less than GoneAfter ago, which the
// room cannot tell from a shopper still between retries. Counting each of
// them as one would make K's right value swing with that share (from
// about 3N to 10N and back in the peak scenario, which the integral
// cannot follow: in progress collapses, then overshoots); counting each
// as the share of recent calls that came back keeps K where the checkout
// and the retry delay put it. The share starts at 1 (one imaginary
// shopper who came back), so a room with no history counts every call.
func (r *Room) expected() float64 {
	f := &r.fair
	share := (f.back + 1) / (f.back + f.gone + 1)
	return float64(r.inProgress) + share*float64(len(f.called))
}

// gone reports whether e's shopper is presumed gone at now: not seen for
// longer than GoneAfter, or holding an expired token.
func (r *Room) gone(e entry, now int64) bool {
	return now-e.seen > int64(r.cfg.GoneAfter) || now-e.stamp > int64(r.cfg.TokenTTL)
}

// skipGone moves T past the gone stamps at the head of the line, and
// forgets them: they do not keep a newcomer waiting, and one that does
// come back has its stamp at or before T and is admitted. Gone stamps
// further back are passed when T reaches them.
//
// Reslicing leaves the dropped head in the backing array until an append
// outgrows it and copies only the live entries.
func (r *Room) skipGone(now int64) {
	f := &r.fair
	for len(f.waiting) > 0 && r.gone(f.waiting[0], now) {
		f.serving = f.waiting[0].stamp
		f.waiting = f.waiting[1:]
	}
}

// fairStats fills the fair figures of s.
func (r *Room) fairStats(s *Stats) {
	f := &r.fair
	now := r.nowLocked()
	for _, e := range f.waiting {
		if !r.gone(e, now) {
			s.Waiting++
		}
	}
	for _, e := range f.called {
		if !r.gone(e, now) {
			s.Called++
		}
	}
	s.Target = int(math.Ceil(f.target))
	if f.serving > 0 {
		s.NowServing = time.Unix(0, f.serving).UTC()
	}
}
