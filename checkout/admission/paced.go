package admission

import (
	"crypto/subtle"
	"math"
	"slices"
	"strings"
	"time"
)

// pace is the paced room's line and estimates (see docs/admission.md, "The
// paced room"). Room.mu guards it.
//
// The line holds every shopper presumed present, in stamp order (the
// order of first attempts, as in the fair room). The first N of it (N =
// Config.InProgress) are the door: when a place is free, whichever of them
// asks first takes it. Everyone else is told when to come back, from its
// place in line and the rate the checkout serves at, or, when its turn
// would come too late for its deadline, "not today" at once.
type pace struct {
	lastStamp int64 // the greatest stamp issued or adopted
	// stamps and line are the line, one entry each per shopper, in stamp
	// order: the stamps apart, so that the search of every request reads
	// 8 bytes a shopper, not a whole seat.
	stamps    []int64
	line      []seat
	lastPurge int64 // when pacedTick last looked through the whole line

	// The time a checkout takes, S, by Little's law: in progress × time
	// over admissions, both sums decayed with the time constant
	// paceMemory. The checkout serves at most N per S.
	busy, admissions float64
	// What it does serve while shoppers wait: admissions over the time
	// the line was not empty, decayed alike. Below N per S by the moments
	// a freed place waits for a shopper at the door to ask.
	lined, linedAdmissions float64
	lastTick               int64
	admittedLastTick       int64

	notToday int64
}

// seat is one shopper in the paced line; its stamp (its first attempt,
// Unix nanoseconds) is in pace.stamps.
type seat struct {
	due      int64 // it is presumed gone if not back by then
	deadline int64 // when it leaves; 0: unknown
	// token and id are the token the room issued (or verified) for this
	// seat and its checkout id: the same token presented again for the
	// same id needs no HMAC (a shopper asks a dozen times or more).
	token, id string
}

// paceMemory is the time constant of the paced room's estimates: ten
// seconds of checkouts, hundreds of them under a peak. Its promises reach
// as far as a shopper's patience, so the rate they rest on must not swing
// with the last second's luck (with 2 s, its few per cent of noise turned
// a third more shoppers away after they had waited); a provider that
// slows for good is followed within seconds all the same.
const paceMemory = 10 * time.Second

// pacedAdmit is the paced room's answer to one request. See pace.
func (r *Room) pacedAdmit(checkoutID, token string, deadline time.Time) Decision {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := &r.pace
	stamp, known := p.seated(token, checkoutID)
	if token != "" && !known {
		// Not a seat's own token: the HMAC decides, without the lock.
		r.mu.Unlock()
		var err error
		stamp, err = verifyWith(r.signers, token, checkoutID)
		r.mu.Lock()
		if err != nil {
			r.tokensRefused++
			return Decision{Refusal: RefusalTokenInvalid}
		}
	}
	now := r.nowLocked()
	switch {
	case token == "":
		stamp = max(now, p.lastStamp+1)
		p.lastStamp = stamp
		r.tokensIssued++
		// Signing under the lock costs a microsecond; it keeps the stamp
		// and its token one step.
		token = r.signers[0].sign(stamp, checkoutID)
	case now-stamp > int64(r.cfg.TokenTTL):
		r.tokensRefused++
		return Decision{Refusal: RefusalTokenExpired}
	default:
		// A valid stamp this room did not issue (a restart, another
		// instance) takes its place in the line all the same.
		p.lastStamp = max(p.lastStamp, stamp)
	}
	var dl int64
	if !deadline.IsZero() {
		dl = deadline.UnixNano()
	}
	r.dropGoneHead(now)
	i, ok := p.find(stamp)
	if !ok {
		// New, or back after an answer that sent it away (a refusal of the
		// checkout's own): it keeps the place of its first attempt.
		p.stamps = slices.Insert(p.stamps, i, stamp)
		p.line = slices.Insert(p.line, i, seat{token: token, id: checkoutID})
	}
	n := r.cfg.InProgress
	free := n - r.inProgress
	if free > 0 && i < n {
		p.remove(i)
		r.admitLocked()
		return Decision{Admitted: true, Token: token}
	}

	wait := r.cfg.RetryAfter
	if every := p.every(n); every > 0 { // a place frees this often, in nanoseconds
		// Its turn: once the places of everyone ahead of it, beyond the
		// free ones, have freed.
		turn := now + int64(float64(max(0, i+1-free))*every)
		poll := time.Duration(min(max(every/2, float64(minPoll)), float64(r.cfg.Tick)))
		// A newcomer is let into the line only with a twentieth of its
		// wait to spare, so that the measured rate may drift that much
		// without the room breaking its word; one already in line is told
		// "not today" only once it cannot make it at all. Without the
		// margin the line settles where every newcomer is borderline, a
		// few per cent of drift in the rate turns hundreds of them away
		// after seconds of waiting, and their leaving makes the estimate
		// of everyone behind them too long.
		var margin int64
		if !ok {
			margin = (turn - now) / 20
		}
		if dl > 0 && turn+margin+int64(poll)+int64(r.cfg.Need) > dl {
			p.remove(i)
			p.notToday++
			return Decision{Token: token, Refusal: RefusalNotToday}
		}
		if i < n {
			wait = poll // at the door: ask again soon
		} else {
			// Back when it reaches the door, however late its jitter
			// (gameday/load waits up to 1.5 × the answer's wait); it is
			// told again, with less to wait, until it is there.
			door := float64(i-n+1) * every
			wait = time.Duration(min(max(door/1.5, float64(poll)), float64(r.cfg.RetryAfter)))
		}
	}
	// The checkout tells it in whole milliseconds (retry_after_ms).
	wait = wait.Truncate(time.Millisecond)
	p.line[i].due = now + int64(wait)*3/2 + int64(r.cfg.Tick)
	p.line[i].deadline = dl
	r.waitingAnswers++
	return Decision{Token: token, Refusal: RefusalWaitingRoom, RetryAfter: wait}
}

// find looks for stamp in the line.
func (p *pace) find(stamp int64) (int, bool) { return slices.BinarySearch(p.stamps, stamp) }

// remove takes the shopper at i out of the line, moving whichever side of
// it is shorter: admissions are at the door, near the head, and a long
// line must not be moved for each of them.
func (p *pace) remove(i int) {
	if i < len(p.line)/2 {
		copy(p.stamps[1:i+1], p.stamps[:i])
		copy(p.line[1:i+1], p.line[:i])
		p.line[0] = seat{} // let go of its token
		p.stamps, p.line = p.stamps[1:], p.line[1:]
		return
	}
	p.stamps = slices.Delete(p.stamps, i, i+1)
	p.line = slices.Delete(p.line, i, i+1)
}

// seated reports the stamp of token when it is exactly the token of a
// seat in the line, for the same checkout id: a token the room signed or
// verified already, which needs no HMAC (a shopper asks a dozen times or
// more). Anything else (a seat given up, an adopted or forged token) is
// for the HMAC.
func (p *pace) seated(token, checkoutID string) (int64, bool) {
	_, rest, _ := strings.Cut(token, ".")
	stampS, _, _ := strings.Cut(rest, ".")
	stamp, ok := parseStamp(stampS)
	if !ok {
		return 0, false
	}
	i, ok := p.find(stamp)
	if !ok {
		return 0, false
	}
	s := &p.line[i]
	same := subtle.ConstantTimeCompare([]byte(s.token), []byte(token)) == 1
	return stamp, same && s.id == checkoutID
}

// minPoll is the shortest wait the paced room asks for: below it the asking
// costs more than the place it finds sooner.
const minPoll = 5 * time.Millisecond

// every is how often a place is taken while shoppers wait, in
// nanoseconds: measured when the line has lasted long enough to say, else
// S/N, what N places serving S each could do; 0 while there is no
// estimate.
func (p *pace) every(n int) float64 {
	if p.linedAdmissions >= float64(n) && p.lined > 0 {
		return p.lined / p.linedAdmissions
	}
	if s := p.serviceTime(); s > 0 {
		return s / float64(n)
	}
	return 0
}

// serviceTime is S in nanoseconds, or 0 while there is no estimate.
func (p *pace) serviceTime() float64 {
	if p.admissions < 1 || p.busy <= 0 {
		return 0
	}
	return p.busy / p.admissions
}

// gone: the shopper left (its deadline passed) or did not come back when
// it was told to, with slack.
func (s seat) gone(now int64) bool {
	return now > s.due || s.deadline > 0 && now >= s.deadline
}

// dropGoneHead forgets the shoppers presumed gone at the head of the line,
// so that they do not hold the door.
func (r *Room) dropGoneHead(now int64) {
	p := &r.pace
	k := 0
	for k < len(p.line) && p.line[k].gone(now) {
		k++
	}
	clear(p.line[:k]) // let go of their tokens
	p.stamps, p.line = p.stamps[k:], p.line[k:]
}

// pacedTick updates the estimate of S and forgets the shoppers presumed
// gone anywhere in the line, or whose tokens have expired.
func (r *Room) pacedTick() {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := &r.pace
	now := r.nowLocked()
	dt := r.step(&p.lastTick, now)
	decay := math.Exp(-dt / float64(paceMemory))
	admitted := float64(r.admitted - p.admittedLastTick)
	p.busy = p.busy*decay + float64(r.inProgress)*dt
	p.admissions = p.admissions*decay + admitted
	p.admittedLastTick = r.admitted
	if len(p.line) > 0 {
		p.lined = p.lined*decay + dt
		p.linedAdmissions = p.linedAdmissions*decay + admitted
	}
	// The whole line is looked through twice a Retry-After (the head at
	// every request): a shopper who left from the middle of it inflates
	// the places behind it for half a second at most.
	if now-p.lastPurge < int64(r.cfg.RetryAfter)/2 {
		return
	}
	p.lastPurge = now
	k := 0
	for i, st := range p.line {
		if st.gone(now) || now-p.stamps[i] > int64(r.cfg.TokenTTL) {
			continue
		}
		p.stamps[k], p.line[k] = p.stamps[i], st
		k++
	}
	clear(p.line[k:]) // let go of the tokens
	p.stamps, p.line = p.stamps[:k], p.line[:k]
}

// pacedStats fills the paced figures of s.
func (r *Room) pacedStats(s *Stats) {
	p := &r.pace
	now := r.nowLocked()
	for _, st := range p.line {
		if !st.gone(now) {
			s.Waiting++
		}
	}
	s.NotToday = p.notToday
	s.ServiceMS = math.Round(p.serviceTime()/1e4) / 100
}
