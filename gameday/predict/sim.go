package predict

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/gameday-dev/gameday/checkout"
	"github.com/gameday-dev/gameday/checkout/admission"
	"github.com/gameday-dev/gameday/gameday/flash"
	"github.com/gameday-dev/gameday/gameday/load"
)

// attemptGrace is gameday/load's: a shopper cuts a request still in flight
// that long after its deadline (the delivery of an answer sent in time).
const attemptGrace = load.AnswerGrace

// epoch is the simulated sale's start on the room's clock. Any fixed
// instant does; the room's token stamps must be positive.
var epoch = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// answer is one kind of answer of the checkout (or of its waiting room).
type answer uint8

const (
	ansConfirmed    answer = iota + 1 // 200
	ansDeclined                       // 402
	ansSoldOut                        // 409
	ansTooLate                        // 410: the shopper's deadline
	ansWaitingRoom                    // 503 from the waiting room
	ansTimeout                        // 503: the payment guard's deadline
	ansBulkheadFull                   // 503: the payment guard's bulkhead
	ansBreakerOpen                    // 503: the payment breaker
	ansTokenInvalid                   // 400: a waiting-room token refused
	ansTokenExpired                   // 400: a waiting-room token too old
	ansNotToday                       // 410: the paced room's "not today"
)

// answers are the code, status and reason fields of each answer, as the
// checkout writes them.
var answers = [...]struct {
	code           int
	status, reason string
}{
	ansConfirmed:    {200, string(checkout.OutcomeConfirmed), ""},
	ansDeclined:     {402, string(checkout.OutcomeDeclined), ""},
	ansSoldOut:      {409, string(checkout.OutcomeSoldOut), ""},
	ansTooLate:      {410, string(checkout.OutcomeTooLate), "deadline"},
	ansWaitingRoom:  {503, string(checkout.OutcomeUnavailable), admission.RefusalWaitingRoom},
	ansTimeout:      {503, string(checkout.OutcomeUnavailable), "timeout"},
	ansBulkheadFull: {503, string(checkout.OutcomeUnavailable), "bulkhead_full"},
	ansBreakerOpen:  {503, string(checkout.OutcomeUnavailable), "breaker_open"},
	ansTokenInvalid: {400, string(checkout.OutcomeInvalid), admission.RefusalTokenInvalid},
	ansTokenExpired: {400, string(checkout.OutcomeInvalid), admission.RefusalTokenExpired},
	ansNotToday:     {410, string(checkout.OutcomeTooLate), admission.RefusalNotToday},
}

// shopper is a shopper's state between events.
type shopper struct {
	deadline time.Duration
	sent     time.Duration // when the attempt in flight was sent
	req      int32         // the admitted request in flight; -1: none
	retries  int           // retries made so far
	token    string        // the waiting room's token, sent back on every retry
	inFlight bool
	done     bool
}

// chargeState is where a request's charge is in the payment stand-in.
type chargeState uint8

const (
	chargeNone       chargeState = iota // not asked for (yet)
	chargeQueued                        // waiting for a slot
	chargeProcessing                    // in a slot: it completes whoever waits for it
	chargeFinished                      // recorded (approved or declined)
	chargeDropped                       // its caller left while it waited: never made
)

// request is one admitted checkout, from admission to its answer (and its
// charge, which may outlive it).
type request struct {
	shopper  int32
	gen      uint32 // the breaker generation of its call
	charge   chargeState
	unit     bool // holds a reserved unit (reserve mode) or read stock (naive)
	soldOut  bool // the stock read or reservation found none
	calling  bool // the checkout waits for the payment call
	inLine   bool // waits in the checkout's payment line
	lineSlot bool // holds a slot of the checkout's payment line
	declined bool // the charge's drawn outcome
	answered bool // the checkout responded (the room's Done was called)
}

// attemptRec is one attempt, with its shopper, small and without
// pointers (the garbage collector need not look at them): attempts are
// recorded in time order and turned into the shoppers' records at the end.
type attemptRec struct {
	at, took time.Duration
	shopper  int32
	ans      answer // 0: cut by the shopper, no answer
}

// sim is one simulated run. Its slices are kept from one run to the next
// (Predict runs many), so that a run allocates little.
//
// Three streams of events make up a run, merged in time order: the
// arrivals (the schedule, in order), the shoppers' cuts at deadline plus
// grace (in the same order, as every shopper has the same patience), and a
// heap of everything else. At equal times an arrival comes first, then a
// cut, then the heap's events (in their order, see event).
type sim struct {
	m        Model
	schedule []time.Duration // load.Schedule(m.Stages), the same for every run

	// per run
	mode      admission.Mode
	room      *admission.Room
	choices   []load.Choice
	now       time.Duration
	q         events
	pending   int // events in q other than ticks
	nextIn    int // the next arrival
	nextCut   int // the next shopper to reach its deadline plus grace
	shoppers  []shopper
	recs      []flash.Shopper
	attempts  []attemptRec
	grouped   []flash.Attempt // the attempts by shopper, for the records
	offsets   []int32
	order     []int32
	reqs      []request
	slotQueue []int32 // requests waiting for a slot, FIFO from slotHead
	slotHead  int
	freeSlots int
	lineQueue []int32 // requests in the checkout's payment line, FIFO from lineHead
	lineHead  int
	lineFree  int
	calls     int // payment calls in flight (the guard's bulkhead count)
	br        breaker
	pay       rand.PCG
	available int64
	sold      int64
	active    int // shoppers started and not finished (the load's pool)

	// derived settings
	retryAfter     time.Duration // the checkout's own refusals
	roundTrip      time.Duration // this run's, in [m.RoundTrip, m.RoundTripMax]
	roomRetryAfter time.Duration // the waiting room's
	tick           time.Duration
	probeTimeout   time.Duration
	roomCfg        admission.Config
}

func newSim(m Model) (*sim, error) {
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("predict: %w", err)
	}
	s := &sim{m: m, schedule: load.Schedule(m.Stages), roomCfg: m.admission()}
	s.retryAfter = m.RetryAfter
	if s.retryAfter == 0 {
		s.retryAfter = defaultRetryAfter
	}
	s.probeTimeout = m.Breaker.ProbeTimeout
	if s.probeTimeout == 0 {
		s.probeTimeout = m.PaymentTimeout
	}
	return s, nil
}

// run simulates the run with the given seed and returns its figures.
func (s *sim) run(seed int64) (flash.Figures, error) { return s.runContext(context.Background(), seed) }

// runContext is run, giving up with ctx's error once ctx is done: it
// looks every checkEvery events, a millisecond or so of work.
func (s *sim) runContext(ctx context.Context, seed int64) (flash.Figures, error) {
	if err := ctx.Err(); err != nil {
		return flash.Figures{}, err
	}
	room, err := admission.New(s.roomCfg, func() time.Time { return epoch.Add(s.now) })
	if err != nil {
		return flash.Figures{}, fmt.Errorf("predict: %w", err)
	}
	s.reset(room, seed)
	for n := 1; s.step(); n++ {
		if n%checkEvery == 0 && ctx.Err() != nil {
			return flash.Figures{}, ctx.Err()
		}
	}
	return s.figures(), nil
}

// checkEvery is how many events the simulation runs between looks at its
// context.
const checkEvery = 4096

func (s *sim) reset(room *admission.Room, seed int64) {
	m := &s.m
	s.room = room
	cfg := room.Config()
	s.mode, s.roomRetryAfter, s.tick = cfg.Mode, cfg.RetryAfter, cfg.Tick
	s.choices = load.Shoppers(m.plan(seed))
	n := len(s.schedule)
	s.now, s.pending, s.nextIn, s.nextCut = 0, 0, 0, 0
	s.q = s.q[:0]
	s.shoppers = resize(s.shoppers, n)
	s.recs = resize(s.recs, n)
	for i, at := range s.schedule {
		s.shoppers[i] = shopper{deadline: at + m.Patience, req: -1}
		s.recs[i] = flash.Shopper{Index: i, Scheduled: at}
	}
	s.attempts = s.attempts[:0]
	s.reqs = s.reqs[:0]
	s.slotQueue, s.slotHead = s.slotQueue[:0], 0
	s.freeSlots, s.calls = m.Slots, 0
	s.lineQueue, s.lineHead, s.lineFree = s.lineQueue[:0], 0, m.LineSlots
	s.br = newBreaker(m.Breaker)
	// The payment draws have their own stream, apart from the shoppers'
	// (which load.Shoppers seeds with (seed, index)).
	s.pay.Seed(uint64(seed), 0x7061796d656e74) // "payment"
	// So has the run's round trip, drawn only when it may differ: a model
	// without a range draws nothing and is as it was.
	s.roundTrip = m.RoundTrip
	if m.RoundTripMax > m.RoundTrip {
		rt := rand.New(rand.NewPCG(uint64(seed), 0x726f756e64)) // "round"
		s.roundTrip += time.Duration(rt.Int64N(int64(m.RoundTripMax - m.RoundTrip + 1)))
	}
	s.available, s.sold, s.active = m.Stock, 0, 0
	if n > 0 {
		s.push(s.tick, evTick, 0)
	}
}

func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// push schedules an event on the heap.
func (s *sim) push(at time.Duration, k kind, id int32) {
	s.q.push(newEvent(at, k, id))
	if k != evTick {
		s.pending++
	}
}

// step handles the next event of the three streams; it reports whether
// there was one.
func (s *sim) step() bool {
	n := len(s.schedule)
	if s.nextIn < n && (s.nextCut >= n || s.schedule[s.nextIn] <= s.cutAt(s.nextCut)) &&
		(len(s.q) == 0 || s.schedule[s.nextIn] <= s.q[0].at) {
		i := s.nextIn
		s.nextIn++
		s.now = s.schedule[i]
		s.arrive(int32(i))
		return true
	}
	if s.nextCut < n && (len(s.q) == 0 || s.cutAt(s.nextCut) <= s.q[0].at) {
		i := s.nextCut
		s.nextCut++
		s.now = s.cutAt(i)
		s.cut(int32(i))
		return true
	}
	if len(s.q) == 0 {
		return false
	}
	e := s.q.pop()
	s.now = e.at
	switch id := e.id(); e.kind() {
	case evSend:
		s.pending--
		s.send(id)
	case evReady:
		s.pending--
		s.ready(id)
	case evChargeDone:
		s.pending--
		s.chargeDone(id)
	case evGuardEnd:
		s.pending--
		s.callEnded(id, failure)
	case evCallerEnd:
		s.pending--
		s.callEnded(id, excluded)
	case evLineLate:
		s.pending--
		s.lineLate(id)
	case evTick:
		s.room.Tick()
		// Tick while anything else is still to happen; the last events
		// need no controller.
		if s.pending > 0 || s.nextCut < n {
			s.push(s.now+s.tick, evTick, 0)
		}
	}
	return true
}

// cutAt is when shopper i cuts a request still in flight.
func (s *sim) cutAt(i int) time.Duration { return s.shoppers[i].deadline + attemptGrace }

// arrive starts shopper i, unless the load's pool is full.
func (s *sim) arrive(i int32) {
	rec := &s.recs[i]
	if s.m.MaxShoppers > 0 && s.active >= s.m.MaxShoppers {
		rec.Outcome, rec.Finished = load.OutcomeDropped, s.now
		s.shoppers[i].done = true
		return
	}
	s.active++
	rec.Started = s.now
	s.send(i)
}

// send is an attempt of shopper i reaching the checkout.
func (s *sim) send(i int32) {
	sh := &s.shoppers[i]
	sh.sent, sh.inFlight = s.now, true
	var deadline time.Time
	if s.mode.HonoursDeadline() {
		deadline = epoch.Add(sh.deadline)
	}
	d := s.room.AdmitBy(s.choices[i].ID, sh.token, deadline)
	if d.Token != "" {
		sh.token = d.Token
	}
	if !d.Admitted {
		switch d.Refusal {
		case admission.RefusalWaitingRoom:
			s.deliverWait(i, ansWaitingRoom, d.RetryAfter)
		case admission.RefusalNotToday:
			s.deliver(i, ansNotToday)
		case admission.RefusalTokenExpired:
			s.deliver(i, ansTokenExpired)
		default:
			s.deliver(i, ansTokenInvalid)
		}
		return
	}
	r := int32(len(s.reqs))
	req := request{shopper: i}
	// The stock is read (naive) or a unit reserved at admission.
	if s.available > 0 {
		req.unit = true
		if !s.m.Naive {
			s.available--
		}
	} else {
		req.soldOut = true
	}
	s.reqs = append(s.reqs, req)
	sh.req = r
	s.push(s.now+s.m.Overhead, evReady, r)
}

// ready: the checkout's own work is done; it charges, or answers.
func (s *sim) ready(r int32) {
	req := &s.reqs[r]
	if req.soldOut {
		s.respond(r, ansSoldOut)
		return
	}
	deadline := s.shoppers[req.shopper].deadline
	honours := s.mode.HonoursDeadline()
	if honours && deadline-s.now <= s.m.MinPaymentTime {
		s.release(req)
		s.respond(r, ansTooLate)
		return
	}
	if s.m.LineSlots > 0 {
		if s.lineFree == 0 {
			// Its turn comes when a slot is freed for it; in the modes
			// that honour the deadline it leaves the line too_late the
			// moment it could no longer finish.
			req.inLine = true
			s.lineQueue = append(s.lineQueue, r)
			if honours {
				s.push(deadline-s.m.MinPaymentTime, evLineLate, r)
			}
			return
		}
		s.lineFree--
		req.lineSlot = true
	}
	s.call(r)
}

// call is the checkout's payment call for request r, through the payment
// guard: bulkhead, then breaker, then the stand-in's slots. It reports
// whether the call started (false: refused, and answered).
func (s *sim) call(r int32) bool {
	req := &s.reqs[r]
	deadline := s.shoppers[req.shopper].deadline
	honours := s.mode.HonoursDeadline()
	if s.m.PaymentBulkhead > 0 && s.calls >= s.m.PaymentBulkhead {
		s.refuse(r, ansBulkheadFull)
		return false
	}
	ok, probe, gen := s.br.allow(s.now)
	if !ok {
		s.refuse(r, ansBreakerOpen)
		return false
	}
	s.calls++
	req.calling, req.gen = true, gen
	timeout := s.m.PaymentTimeout
	if probe {
		timeout = s.probeTimeout
	}
	// The call ends at the guard's deadline or the shopper's (honoured),
	// whichever comes first, unless the charge answers before.
	switch {
	case honours && (timeout == 0 || deadline < s.now+timeout):
		s.push(deadline, evCallerEnd, r)
	case timeout > 0:
		s.push(s.now+timeout, evGuardEnd, r)
	}
	if s.m.Slots == 0 || s.freeSlots > 0 {
		if s.m.Slots > 0 {
			s.freeSlots--
		}
		s.process(r)
		return true
	}
	req.charge = chargeQueued
	s.slotQueue = append(s.slotQueue, r)
	return true
}

// refuse answers request r without a charge: its line slot, if any, and
// its unit go back.
func (s *sim) refuse(r int32, a answer) {
	req := &s.reqs[r]
	s.release(req)
	s.respond(r, a)
	if req.lineSlot {
		req.lineSlot = false
		s.nextInLine()
	}
}

// callOver: request r's payment call returned; its line slot, if any, goes
// to the next in line.
func (s *sim) callOver(r int32) {
	if req := &s.reqs[r]; req.lineSlot {
		req.lineSlot = false
		s.nextInLine()
	}
}

// nextInLine gives a freed slot of the checkout's payment line to the
// first waiter that can still finish before its deadline, answering the
// ones before it too_late, or frees it. A waiter whose call is refused at
// once (bulkhead, breaker) gives the slot on at once, as in the checkout:
// the loop goes on to the next (the slot is marked held only once a call
// has started, so that the refusal does not pass it on a second time).
func (s *sim) nextInLine() {
	honours := s.mode.HonoursDeadline()
	for s.lineHead < len(s.lineQueue) {
		w := s.lineQueue[s.lineHead]
		s.lineHead++
		req := &s.reqs[w]
		if !req.inLine {
			continue // left too_late already
		}
		req.inLine = false
		if honours && s.shoppers[req.shopper].deadline-s.now <= s.m.MinPaymentTime {
			s.release(req)
			s.respond(w, ansTooLate)
			continue
		}
		if s.call(w) {
			s.reqs[w].lineSlot = true
			return
		}
	}
	s.lineFree++
}

// lineLate: request r, if still in the payment line, can no longer finish
// before its shopper's deadline, and leaves it too_late.
func (s *sim) lineLate(r int32) {
	req := &s.reqs[r]
	if !req.inLine {
		return
	}
	req.inLine = false
	s.release(req)
	s.respond(r, ansTooLate)
}

// process starts request r's charge in a slot: the stand-in draws its
// latency and outcome now, and completes it whoever still waits for it.
func (s *sim) process(r int32) {
	req := &s.reqs[r]
	req.charge = chargeProcessing
	lat := s.m.PaymentMin
	if span := s.m.PaymentMax - s.m.PaymentMin; span > 0 {
		lat += time.Duration(s.float() * float64(span))
	}
	req.declined = s.float() < s.m.DeclineRate
	s.push(s.now+lat, evChargeDone, r)
}

// float is uniform in [0, 1) from the payment stream.
func (s *sim) float() float64 { return float64(s.pay.Uint64()>>11) / (1 << 53) }

// chargeDone: request r's charge is recorded. Its slot goes to the first
// charge still waiting; the checkout, if it still waits, sells or not.
func (s *sim) chargeDone(r int32) {
	req := &s.reqs[r]
	req.charge = chargeFinished
	if s.m.Slots > 0 {
		s.nextInSlot()
	}
	if !req.calling {
		// The checkout gave up on it (guard or shopper deadline) and voided
		// it: no sale, no money.
		return
	}
	req.calling = false
	s.calls--
	s.br.report(s.now, req.gen, success)
	s.callOver(r)
	if req.declined {
		s.release(req)
		s.respond(r, ansDeclined)
		return
	}
	// Approved and kept: the order is made, whether or not the shopper is
	// still there to hear of it.
	if s.m.Naive {
		s.available-- // may go below 0: the oversell
	}
	s.sold++
	s.recs[req.shopper].Charged = true
	s.respond(r, ansConfirmed)
}

// nextInSlot gives a freed slot to the first waiter whose caller is still
// there, or frees it.
func (s *sim) nextInSlot() {
	for s.slotHead < len(s.slotQueue) {
		w := s.slotQueue[s.slotHead]
		s.slotHead++
		if s.reqs[w].charge == chargeQueued {
			s.process(w)
			return
		}
	}
	s.freeSlots++
}

// callEnded: the guard's deadline (failure) or the shopper's (excluded)
// came before request r's charge answered. A charge still waiting for a
// slot is dropped, one in a slot completes and is voided; the unit goes
// back, and the shopper is told to come back (timeout) or too_late.
func (s *sim) callEnded(r int32, res result) {
	req := &s.reqs[r]
	if !req.calling {
		return // answered in time
	}
	req.calling = false
	s.calls--
	s.br.report(s.now, req.gen, res)
	s.callOver(r)
	if req.charge == chargeQueued {
		req.charge = chargeDropped
	}
	s.release(req)
	if res == failure {
		s.respond(r, ansTimeout)
		return
	}
	s.respond(r, ansTooLate)
}

// release gives back a reserved unit.
func (s *sim) release(req *request) {
	if req.unit && !s.m.Naive {
		s.available++
	}
	req.unit = false
}

// respond is the checkout answering request r: it leaves the room, and
// its shopper hears it, unless it has cut the request already.
func (s *sim) respond(r int32, a answer) {
	req := &s.reqs[r]
	req.answered = true
	s.room.Done()
	sh := &s.shoppers[req.shopper]
	if sh.req != r || !sh.inFlight {
		return
	}
	s.deliver(req.shopper, a)
}

// deliver is shopper i getting answer a, and acting on it as
// gameday/load's shopper does.
func (s *sim) deliver(i int32, a answer) { s.deliverWait(i, a, 0) }

// deliverWait is deliver for an answer that asks for a wait of its own
// (the paced room's); 0 means the answer's usual wait.
func (s *sim) deliverWait(i int32, a answer, asked time.Duration) {
	sh := &s.shoppers[i]
	sh.inFlight, sh.req = false, -1
	s.attempts = append(s.attempts, attemptRec{at: sh.sent, took: s.now - sh.sent, shopper: i, ans: a})
	var retryAfter time.Duration
	switch a {
	case ansConfirmed:
		s.finish(i, load.OutcomeConfirmed)
		return
	case ansDeclined:
		s.finish(i, load.OutcomeDeclined)
		return
	case ansSoldOut:
		s.finish(i, load.OutcomeSoldOut)
		return
	case ansTooLate, ansNotToday:
		s.finish(i, load.OutcomeTooLate)
		return
	case ansWaitingRoom:
		retryAfter = s.roomRetryAfter
	case ansTimeout, ansBulkheadFull, ansBreakerOpen:
		retryAfter = s.retryAfter
	default: // 400
		s.finish(i, load.OutcomeError)
		return
	}
	if asked > 0 {
		retryAfter = asked
	}
	if sh.retries >= s.m.MaxRetries || retryAfter <= 0 {
		s.finish(i, load.OutcomeUnavailable)
		return
	}
	// The shopper's draws are taken in turn, one per retry, as the load
	// generator takes them.
	wait := s.roundTrip + time.Duration(float64(retryAfter)*s.choices[i].NextJitter())
	if s.now+wait >= sh.deadline {
		s.finish(i, load.OutcomeGaveUp) // it would come back too late
		return
	}
	sh.retries++
	s.push(s.now+wait, evSend, i)
}

// cut: shopper i's deadline plus the grace; a request still in flight is
// abandoned by the shopper (the checkout may carry on with it).
func (s *sim) cut(i int32) {
	sh := &s.shoppers[i]
	if !sh.inFlight || sh.done {
		return
	}
	sh.inFlight, sh.req = false, -1
	s.attempts = append(s.attempts, attemptRec{at: sh.sent, took: s.now - sh.sent, shopper: i})
	s.finish(i, load.OutcomeGaveUp)
}

func (s *sim) finish(i int32, outcome string) {
	s.shoppers[i].done = true
	s.active--
	rec := &s.recs[i]
	rec.Outcome, rec.Finished = outcome, s.now
}

// figures turns the attempts into the shoppers' records (grouped by
// shopper in one backing array, in time order within each shopper) and
// computes the run's figures.
//
// The grouping is a counting sort in two steps: first the attempts'
// indexes are placed by shopper (4 bytes each, so the places being written
// at once, the attempts of the shoppers active at the same time, stay in
// the cache), then the records are written in order. Placing the 64-byte
// records directly was a cache miss per attempt, and a fifth of the run.
func (s *sim) figures() flash.Figures {
	n := len(s.recs)
	s.offsets = resize(s.offsets, n+1)
	clear(s.offsets)
	for _, a := range s.attempts {
		s.offsets[a.shopper+1]++
	}
	for i := range n {
		s.offsets[i+1] += s.offsets[i]
	}
	s.order = resize(s.order, len(s.attempts))
	for k, a := range s.attempts {
		s.order[s.offsets[a.shopper]] = int32(k)
		s.offsets[a.shopper]++
	}
	// offsets[i] is now the end of shopper i's attempts, which is where
	// shopper i+1's start.
	s.grouped = resize(s.grouped, len(s.attempts))
	for j, k := range s.order {
		a := &s.attempts[k]
		fa := flash.Attempt{At: a.at, Took: a.took, Err: a.ans == 0}
		if a.ans != 0 {
			ans := &answers[a.ans]
			fa.Code, fa.Status, fa.Reason = ans.code, ans.status, ans.reason
		}
		s.grouped[j] = fa
	}
	from := int32(0)
	for i := range s.recs {
		to := s.offsets[i]
		s.recs[i].Attempts = s.grouped[from:to:to]
		from = to
	}
	oversold := max(0, s.sold-s.m.Stock)
	return flash.Compute(s.recs, s.room.Stats().MaxInProgress, int(oversold))
}
