package load

import (
	"math/rand/v2"
	"strconv"
	"time"
)

// The outcomes of a shopper: every shopper of a finished run has exactly
// one. A shopper never reached because the run was aborted has none ("").
const (
	OutcomeConfirmed   = "confirmed"   // the shopper bought
	OutcomeDeclined    = "declined"    // the payment was declined
	OutcomeSoldOut     = "sold_out"    // nothing left
	OutcomeTooLate     = "too_late"    // the system saw the shopper's deadline pass
	OutcomeGaveUp      = "gave_up"     // the shopper left: its deadline passed, or would have before the next attempt, or the run was aborted
	OutcomeUnavailable = "unavailable" // refused with no retry left, or told to come back without a Retry-After
	OutcomeError       = "error"       // an answer meaning error or not understood, or a transport error before the deadline
	OutcomeDropped     = "dropped"     // no shopper of the pool was free when it arrived: never started
	OutcomeOK          = "ok"          // a journey that does not buy went through (Report.Visits only)
)

// Attempt is one request of a shopper to the system under test.
type Attempt struct {
	At   time.Duration // when it was sent, from Report.Start
	Took time.Duration // until the answer or the error
	// Step is the purchase's step, from 0.
	Step int
	// Code is the HTTP status, 0 when there was no answer.
	Code int
	// Status is what the answer meant (Meaning's name: "confirmed",
	// "unavailable", "retry_later", "next", ...); "" without an answer.
	Status string
	// Reason is why it refused, as the target read it ("waiting_room",
	// "breaker_open", ...); "" when none.
	Reason string
	// RetryAfter is the wait the checkout asked for, before jitter.
	RetryAfter time.Duration
	// Degraded is true when the answer said the checkout degraded (a guest
	// checkout because the session store failed).
	Degraded bool
	// Err is the transport error, or why the answer was not understood.
	Err string
}

// Shopper is one arrival of the plan and what became of it. The times are
// offsets from Report.Start.
type Shopper struct {
	Index int
	Shop  string // the shop the arrival is for (Plan.Shops); "" without shops
	// Journey is the journey the arrival makes ("" for the purchase), and
	// Stream the stream it came from (Arrival.Stream).
	Journey string
	Stream  int
	// Visitor is, for a funnel's purchase, its visitor's index + 1 (0:
	// none): the purchase takes the visitor's name and session.
	Visitor int
	ID      string // the checkout id, the same for every attempt
	Name    string // the shopper field of the request
	Session string // the session token; "" for a guest

	Scheduled time.Duration // planned arrival
	Started   time.Duration // first attempt sent (>= Scheduled); 0 if never started
	Deadline  time.Duration // Scheduled + Patience, sent to the checkout as an absolute time

	// Outcome is one of the Outcome constants, or "" when the run was
	// aborted before this arrival was due.
	Outcome  string
	Finished time.Duration // when the outcome was reached
	// Latency is the final answer's time (or the time the shopper left)
	// minus Scheduled: latency from the scheduled start, so lateness of the
	// generator counts against the checkout's figures, never for them.
	Latency  time.Duration
	Attempts []Attempt
	Degraded bool // any answer was degraded
	// Cut: the run was aborted while this shopper was in flight or waiting
	// to retry, and that is why it gave up; it did not leave of its own
	// accord.
	Cut bool
}

// Late is how much later than planned the shopper started; 0 for a shopper
// that never started.
func (s *Shopper) Late() time.Duration {
	if s.Outcome == "" || s.Outcome == OutcomeDropped {
		return 0
	}
	return s.Started - s.Scheduled
}

// Choice is one shopper's seeded decisions: the same plan gives the same
// choices, whatever the timing of the run.
type Choice struct {
	ID      string
	Name    string
	Session string // "" for a guest

	// The shopper's own generator, past its session draw: the retries'
	// jitter is drawn from it when asked for, not kept (a shopper of a
	// hundred retries would otherwise carry 800 bytes of draws it mostly
	// never uses, and a simulation of many shoppers, megabytes).
	draws draws
}

// NextJitter draws the multiplier of the shopper's next Retry-After wait:
// the first call the one before retry 1, the next before retry 2, and so on,
// each in [1-RetryJitter, 1+RetryJitter] — the draws the load generator's
// shopper makes, in the same order.
func (c *Choice) NextJitter() float64 { return c.draws.jitter() }

// Jitter is the multiplier of the wait before retry k+1 (k from 0), drawn
// on a copy: it leaves NextJitter's turn where it was, and costs k+1
// draws.
func (c Choice) Jitter(k int) float64 {
	var j float64
	for range k + 1 {
		j = c.NextJitter()
	}
	return j
}

// Shoppers returns the choices of every arrival of plan, in schedule order.
// Run makes the same choices, one shopper at a time. It expects a plan that
// passed Validate.
func Shoppers(plan Plan) []Choice {
	n := len(plan.Arrivals())
	out := make([]Choice, n)
	for i := range out {
		c := newChooser(plan, i)
		out[i] = Choice{ID: c.id, Name: c.name, Session: c.session, draws: c.draws}
	}
	return out
}

// chooser draws one shopper's choices from its own generator, seeded by the
// plan's seed and the shopper's index: first the session, then one draw per
// retry, in order.
type chooser struct {
	draws
	id, name, session string
}

// draws is a shopper's own generator: its session draw first, then one
// jitter draw per retry, in order.
type draws struct {
	src    rand.PCG
	spread float64
}

func newChooser(plan Plan, index int) chooser {
	c := chooser{draws: draws{spread: plan.RetryJitter}}
	c.src.Seed(uint64(plan.Seed), uint64(index))
	session := c.float() < plan.SessionShare
	// One allocation for the three names: they are slices of one string.
	prefix := plan.prefix()
	var a [512]byte // room for three names with a 100-byte prefix
	b := strconv.AppendInt(append(append(a[:0], prefix...), '-'), int64(index), 10)
	idEnd := len(b)
	b = strconv.AppendInt(append(append(b, prefix...), "-shopper-"...), int64(index), 10)
	nameEnd := len(b)
	if session {
		b = strconv.AppendInt(append(append(b, prefix...), "-session-"...), int64(index), 10)
	}
	all := string(b)
	c.id, c.name, c.session = all[:idEnd], all[idEnd:nameEnd], all[nameEnd:]
	return c
}

// float is uniform in [0, 1).
func (d *draws) float() float64 { return float64(d.src.Uint64()>>11) / (1 << 53) }

// jitter is the next retry's multiplier, uniform in [1-spread, 1+spread].
func (d *draws) jitter() float64 { return 1 - d.spread + 2*d.spread*d.float() }
