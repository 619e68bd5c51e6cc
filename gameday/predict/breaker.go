package predict

import "time"

// breaker is the payment guard's circuit breaker on the simulated clock:
// gobreaker's rules (sony/gobreaker/v2, as breakers.Guard sets it up) with
// Interval 0, re-written because gobreaker reads the wall clock.
//
//   - closed: Failures failures in a row open it; a success resets the run;
//   - open: refuses everything until OpenFor has passed (strictly), then
//     half-open at the next call;
//   - half-open: lets Probes calls through (an excluded result gives its
//     place back); that many successes in a row close it, one failure opens
//     it again.
//
// Every change of state starts a new generation with cleared counts, and a
// result from an older generation is ignored.
type breaker struct {
	failures int // 0: no breaker
	openFor  time.Duration
	probes   int

	state      breakerState
	gen        uint32
	openUntil  time.Duration
	consecFail int
	consecSucc int
	requests   int // calls let through in this generation
	excluded   int // of which excluded
}

type breakerState uint8

const (
	closed breakerState = iota
	open
	halfOpen
)

// result is how a call ended, for the breaker.
type result uint8

const (
	success  result = iota // the provider answered (approved or declined)
	failure                // the guard's deadline passed
	excluded               // the caller left first: not the provider's fault
)

func newBreaker(b Breaker) breaker {
	return breaker{failures: b.Failures, openFor: b.OpenFor, probes: max(b.Probes, 1)}
}

// allow asks to make a call at now: whether it may, whether it is a probe
// (made half-open), and the generation its result belongs to.
func (b *breaker) allow(now time.Duration) (ok, probe bool, gen uint32) {
	if b.failures == 0 {
		return true, false, 0
	}
	b.update(now)
	switch {
	case b.state == open:
		return false, false, b.gen
	case b.state == halfOpen && b.requests-b.excluded >= b.probes:
		return false, true, b.gen
	}
	b.requests++
	return true, b.state == halfOpen, b.gen
}

// report records the result of a call let through in generation gen.
func (b *breaker) report(now time.Duration, gen uint32, r result) {
	if b.failures == 0 {
		return
	}
	b.update(now)
	if gen != b.gen {
		return
	}
	switch r {
	case excluded:
		b.excluded++
	case success:
		b.consecSucc++
		b.consecFail = 0
		if b.state == halfOpen && b.consecSucc >= b.probes {
			b.set(closed, now)
		}
	case failure:
		b.consecFail++
		b.consecSucc = 0
		if b.state == halfOpen || b.state == closed && b.consecFail >= b.failures {
			b.set(open, now)
		}
	}
}

// update moves an open breaker whose time is up to half-open.
func (b *breaker) update(now time.Duration) {
	if b.state == open && b.openUntil < now {
		b.set(halfOpen, now)
	}
}

func (b *breaker) set(s breakerState, now time.Duration) {
	if b.state == s {
		return
	}
	b.state = s
	b.gen++
	b.consecFail, b.consecSucc, b.requests, b.excluded = 0, 0, 0, 0
	if s == open {
		b.openUntil = now + b.openFor
	}
}
