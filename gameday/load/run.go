package load

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/gameday-dev/gameday/internal/wait"
)

// AnswerGrace is how long after its deadline a shopper still takes an
// answer that is already on its way. A shopper leaves at its deadline: the
// grace covers only the delivery of an answer sent at or before it — a
// checkout that honours the deadline answers too_late at that instant —
// and the runner's own scheduling on a busy machine. Delivery on loopback,
// through the generator's client with 64 shoppers asking back to back and
// both cores of a 2-core machine busy, measured 0.8 ms at the median, 4 ms
// at p99, 7 ms at p99.9 and 11 ms at most (BenchmarkAnswerDelivery,
// docs/flash-sale.md): 20 ms covers the worst seen, and is still nothing
// beside a patience of seconds. An answer later than this is not taken:
// the shopper gave up, and a charge behind it is a charge after leaving.
// The predictor cuts its shoppers at the same instant.
const AnswerGrace = 20 * time.Millisecond

// Options are the parts of a run that are not the plan.
type Options struct {
	// Clock reads the time; nil means time.Now. It sets Report.Start, the
	// absolute deadlines sent to the checkout and every measured offset.
	// Waits use real timers for the difference between two readings, so a
	// test clock must advance at the real rate (time.Now shifted, for
	// example).
	Clock func() time.Time
	// OnResult, when not nil, is called once for every shopper as soon as
	// it has its outcome, dropped shoppers included: from the shopper's
	// goroutine, or from the scheduler for a drop. It is called
	// concurrently, so it must be safe for that, and it must be quick
	// (a slow call delays the scheduler or holds a shopper of the pool).
	// Run does not change the shopper after the call.
	OnResult func(*Shopper)
	// Shard is the part of the plan this run sends (the zero Shard: all of
	// it). The report then holds the shard's shoppers only, with their
	// indexes in the whole plan; Merge joins the shards' reports.
	Shard Shard
	// Start is the sale's start instant, when not zero: the run waits for
	// it, and every shard of a sale is given the same one, so that their
	// offsets agree. Zero: the sale starts when Run is called.
	Start time.Time
}

// Report is what a run did: one record per arrival of the plan and the
// figures a drill's verdict reads.
type Report struct {
	// Start is the sale's start, offset 0 of every Shopper time.
	Start time.Time
	// Scheduled is the number of arrivals in the plan, or in the run's
	// shard of it (len(Shoppers)).
	// Started and Dropped count the arrivals that were due before the run
	// ended; when it was aborted, the rest were neither (their Outcome is
	// ""), so Started + Dropped < Scheduled.
	Scheduled, Started, Dropped int
	// Lateness of the started shoppers' first attempts against the plan.
	LateP50, LateP99, LateMax time.Duration
	// Shoppers has one record per purchase arrival, in schedule order,
	// dropped ones included; Visits one per arrival of another journey
	// (a plan's streams). Scheduled, Started, Dropped and the lateness
	// count both: they are the generator's.
	Shoppers []*Shopper
	Visits   []*Shopper
}

// Outcomes counts the shoppers by outcome; arrivals not reached because the
// run was aborted are not counted.
func (r *Report) Outcomes() map[string]int {
	m := map[string]int{}
	for _, s := range r.Shoppers {
		if s.Outcome != "" {
			m[s.Outcome]++
		}
	}
	return m
}

// Run drives plan's load at t and returns what every shopper saw.
//
// A scheduler (the calling goroutine) sleeps until each arrival's absolute
// due time and hands it to a shopper goroutine of a pool bounded by
// plan.MaxShoppers. The shopper records are allocated before the sale; the
// goroutines are made as the sale needs them and end after a second idle,
// because thousands of idle goroutines made up front slow every garbage
// collection and so make arrivals late. An arrival that finds MaxShoppers
// shoppers busy is dropped at once, never queued. Run returns when every
// started shopper has its outcome.
//
// When ctx ends, the run is aborted: no arrival is scheduled any more,
// shoppers in flight have their attempt's context cancelled and end as
// gave_up (as they would, had they closed the page), shoppers waiting to
// retry end as gave_up at once (as does a shopper handed over at that very
// moment, without an attempt), and arrivals not yet due keep Outcome "".
// Run then returns the partial report and ctx.Err(). Run needs a Target that
// honours its context: it waits for every started shopper.
func Run(ctx context.Context, plan Plan, t Target, opt Options) (*Report, error) {
	if err := plan.Validate(); err != nil {
		return nil, fmt.Errorf("run load: %w", err)
	}
	if t == nil {
		return nil, errors.New("run load: no target")
	}
	if err := opt.Shard.Validate(); err != nil {
		return nil, fmt.Errorf("run load: %w", err)
	}
	r := &run{ctx: ctx, plan: plan, target: t, clock: opt.Clock, onResult: opt.OnResult}
	if k, ok := t.(Keeper); ok {
		r.keeps = k.Keeps()
	}
	if r.clock == nil {
		r.clock = time.Now
	} else {
		// This machine's clock minus the run's, read once: a context's
		// deadline is on this machine's clock.
		r.shift = time.Now().Sub(r.clock())
	}

	// The records are allocated before the sale starts: the shard's
	// arrivals, with their indexes in the whole plan.
	sched := plan.Arrivals()
	shoppers := make([]Shopper, 0, len(sched)/max(opt.Shard.Of, 1)+1)
	for i, a := range sched {
		if opt.Shard.Has(i) {
			shoppers = append(shoppers, plan.shopper(i, a))
		}
	}
	rep := &Report{Scheduled: len(shoppers)}
	all := make([]*Shopper, len(shoppers))
	for i := range shoppers {
		all[i] = &shoppers[i]
	}
	p := newPool(min(opt.Shard.pool(plan.MaxShoppers), len(shoppers)), func(i int) { r.shop(&shoppers[i]) })

	r.start = r.clock()
	if !opt.Start.IsZero() {
		r.start = opt.Start
	}
	rep.Start = r.start
	timer := time.NewTimer(time.Hour)
	timer.Stop()
schedule:
	for i := range shoppers {
		s := &shoppers[i]
		if d := r.start.Add(s.Scheduled).Sub(r.clock()); d > 0 {
			timer.Reset(d)
			select {
			case <-ctx.Done():
				break schedule
			case <-timer.C:
			}
		} else if ctx.Err() != nil {
			break schedule
		}
		if p.start(i) {
			rep.Started++
		} else {
			rep.Dropped++
			r.name(s)
			r.finish(s, OutcomeDropped, r.clock())
		}
	}
	timer.Stop()
	p.close()

	for i := range shoppers {
		if s := &shoppers[i]; s.ID == "" {
			r.name(s) // never reached: the run was aborted
		}
	}
	rep.LateP50, rep.LateP99, rep.LateMax = Lateness(all)
	rep.Shoppers, rep.Visits = split(all)
	return rep, ctx.Err()
}

// shopper is the record of arrival i, before it is sent.
func (p Plan) shopper(i int, a Arrival) Shopper {
	return Shopper{Index: i, Shop: a.Shop, Journey: a.Journey, Stream: a.Stream, Visitor: a.Visitor, Scheduled: a.At, Deadline: a.At + p.patience(a.Stream)}
}

// split parts shoppers, in order, into the purchases and the visits; a
// plan without other journeys keeps its one slice.
func split(all []*Shopper) (purchases, visits []*Shopper) {
	n := 0
	for _, s := range all {
		if s.Journey != "" {
			n++
		}
	}
	if n == 0 {
		return all, nil
	}
	purchases = make([]*Shopper, 0, len(all)-n)
	visits = make([]*Shopper, 0, n)
	for _, s := range all {
		if s.Journey != "" {
			visits = append(visits, s)
		} else {
			purchases = append(purchases, s)
		}
	}
	return purchases, visits
}

type run struct {
	ctx      context.Context
	plan     Plan
	target   Target
	clock    func() time.Time
	onResult func(*Shopper)
	start    time.Time
	keeps    int           // Call.Kept's length (see Keeper)
	shift    time.Duration // this machine's clock minus the run's
}

func (r *run) name(s *Shopper) {
	c := newChooser(r.plan, s.Index)
	s.ID, s.Name, s.Session = c.id, c.name, c.session
	r.asVisitor(s)
}

// asVisitor gives a funnel's purchase its visitor's name and session: the
// shopper who filled the cart is the one who buys (its checkout id stays
// its own).
func (r *run) asVisitor(s *Shopper) {
	if s.Visitor > 0 {
		v := newChooser(r.plan, s.Visitor-1)
		s.Name, s.Session = v.name, v.session
	}
}

// maxPolls bounds the retry_later answers one shopper acts on without
// spending a retry (see shop).
const maxPolls = 1000

// maxSteps bounds the steps of one purchase: a target that says "next"
// for ever must not keep a shopper for ever.
const maxSteps = 32

// shop is one shopper, from its first request to its outcome.
func (r *run) shop(s *Shopper) {
	s.Started = r.clock().Sub(r.start)
	c := newChooser(r.plan, s.Index)
	s.ID, s.Name, s.Session = c.id, c.name, c.session
	r.asVisitor(s)
	deadline := r.start.Add(s.Deadline)
	if r.ctx.Err() != nil {
		// Handed over just as the run was aborted: it never sends.
		r.finish(s, OutcomeGaveUp, r.clock())
		return
	}
	call := Call{CheckoutID: s.ID, Shopper: s.Name, Number: s.Index, Shop: s.Shop, Journey: s.Journey, Session: s.Session, Deadline: deadline, Attempt: 1}
	maxRetries := r.plan.retries(s.Stream)
	if r.keeps > 0 {
		call.Kept = make([]string, r.keeps)
	}
	for retries, polls := 0, 0; ; {
		sent := r.clock()
		// The deadline is on the run's clock (a worker's is the
		// coordinator's), the context's on this machine's.
		actx, cancel := context.WithDeadline(r.ctx, deadline.Add(AnswerGrace).Add(r.shift))
		ans, err := r.target.Do(actx, &call)
		cancel()
		got := r.clock()
		a := Attempt{
			At:         sent.Sub(r.start),
			Took:       got.Sub(sent),
			Step:       call.Step,
			Code:       ans.Code,
			Reason:     intern(ans.Reason),
			RetryAfter: ans.RetryAfter,
			Degraded:   ans.Degraded,
		}
		s.Degraded = s.Degraded || a.Degraded
		if err != nil {
			a.Err = err.Error()
			s.Attempts = append(s.Attempts, a)
			switch {
			case r.ctx.Err() != nil: // the run was aborted under it
				r.finish(s, OutcomeGaveUp, got)
			case !got.Before(deadline):
				r.finish(s, OutcomeGaveUp, got)
			default:
				r.finish(s, OutcomeError, got)
			}
			return
		}
		a.Status = ans.Means.String()
		if ans.Unmatched {
			a.Err = "unexpected answer: " + strconv.Itoa(ans.Code)
		}
		if got.After(deadline.Add(AnswerGrace)) {
			// A target that did not stop at the attempt's deadline: its
			// answer came after the shopper left, whatever it says, and
			// the shopper saw none (no code, no status).
			a.Err = "answered " + strconv.Itoa(ans.Code) + " after the shopper left"
			a.Code, a.Status, a.Reason = 0, "", ""
			s.Attempts = append(s.Attempts, a)
			r.finish(s, OutcomeGaveUp, got)
			return
		}
		s.Attempts = append(s.Attempts, a)
		switch ans.Means {
		case MeansNext:
			if call.Step+1 >= maxSteps {
				r.finish(s, OutcomeError, got)
				return
			}
			call.Step++
			call.Attempt = 1
			if ans.Think > 0 {
				// A journey's visitor reads the page before the next.
				if !got.Add(ans.Think).Before(deadline) {
					r.finish(s, OutcomeGaveUp, got)
					return
				}
				if !r.sleep(ans.Think) {
					r.finish(s, OutcomeGaveUp, r.clock())
					return
				}
			}
			continue
		case MeansUnavailable, MeansRetryLater:
		default:
			r.finish(s, finalOutcomes[ans.Means], got)
			return
		}
		// A purchase in progress or pending (retry_later) is asked after
		// again while the shopper's patience lasts, as a storefront polls
		// an order's status: those polls do not spend the retries, which
		// are for coming back after a refusal (a shop whose purchase is
		// asynchronous answers "pending" several times to every shopper).
		// maxPolls bounds them where a wait is tiny.
		poll := ans.Means == MeansRetryLater && polls < maxPolls
		if (!poll && retries >= maxRetries) || ans.RetryAfter <= 0 {
			r.finish(s, OutcomeUnavailable, got)
			return
		}
		wait := time.Duration(float64(ans.RetryAfter) * c.jitter())
		if !got.Add(wait).Before(deadline) {
			r.finish(s, OutcomeGaveUp, got) // it would come back too late
			return
		}
		if !r.sleep(wait) {
			r.finish(s, OutcomeGaveUp, r.clock()) // aborted while waiting
			return
		}
		if poll {
			polls++
		} else {
			retries++
		}
		call.Attempt++
	}
}

// finalOutcomes are the shopper outcomes of the final meanings.
var finalOutcomes = map[Meaning]string{
	MeansError: OutcomeError, MeansConfirmed: OutcomeConfirmed, MeansDeclined: OutcomeDeclined,
	MeansSoldOut: OutcomeSoldOut, MeansTooLate: OutcomeTooLate, MeansOK: OutcomeOK,
}

// interned keeps one copy of each reason a target gives, so that a sale's
// worth of attempts does not hold one string each; bounded, since the
// reasons come from the system under test.
var interned = struct {
	sync.Mutex
	m map[string]string
}{m: map[string]string{}}

func intern(r string) string {
	if r == "" {
		return ""
	}
	r = r[:min(len(r), 64)]
	interned.Lock()
	defer interned.Unlock()
	if s, ok := interned.m[r]; ok {
		return s
	}
	if len(interned.m) < 256 {
		interned.m[r] = r
	}
	return r
}

func (r *run) finish(s *Shopper, outcome string, at time.Time) {
	s.Outcome = outcome
	s.Cut = outcome == OutcomeGaveUp && r.ctx.Err() != nil
	s.Finished = at.Sub(r.start)
	if outcome != OutcomeDropped {
		s.Latency = s.Finished - s.Scheduled
	}
	if r.onResult != nil {
		r.onResult(s)
	}
}

// sleep waits d, or less if the run is aborted; it reports whether it
// waited the whole time.
func (r *run) sleep(d time.Duration) bool { return wait.For(r.ctx, d) }
