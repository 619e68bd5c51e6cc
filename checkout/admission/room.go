package admission

import (
	"fmt"
	"sync"
	"time"
)

// Why a request was not admitted (Decision.Refusal).
const (
	// RefusalWaitingRoom: come back later (503 with Retry-After).
	RefusalWaitingRoom = "waiting_room"
	// RefusalTokenInvalid: the token does not parse, is signed with a key
	// the room does not have, does not verify, or belongs to another
	// checkout id (400, not retried).
	RefusalTokenInvalid = "token_invalid"
	// RefusalTokenExpired: the token is older than Config.TokenTTL (400).
	RefusalTokenExpired = "token_expired"
	// RefusalNotToday: the paced room's honest no. At the rate the
	// checkout serves, the shopper's turn would come too close to its
	// deadline for a purchase to finish (410 too_late, not retried).
	RefusalNotToday = "not_today"
)

// Decision is the room's answer to one request.
type Decision struct {
	Admitted bool
	// Token is, in the fair modes, the token the shopper must send back in
	// the TokenHeader header: the one just issued, or the one it presented.
	// "" otherwise.
	Token string
	// Refusal is "" when admitted, else one of the Refusal constants.
	Refusal string
	// RetryAfter is, with RefusalWaitingRoom in the paced room, when this
	// shopper should come back: from its place in line and the rate the
	// checkout serves at. 0: the room's Config.RetryAfter.
	RetryAfter time.Duration
}

// Stats is what the room has done, as GET /admin/admission shows it.
type Stats struct {
	Mode Mode `json:"mode"`
	// InProgress is the admitted requests not answered yet;
	// MaxInProgress the most at once since the start or ResetMax.
	InProgress    int `json:"in_progress"`
	MaxInProgress int `json:"max_in_progress"`
	// Admitted counts admissions, WaitingRoomAnswers refusals with
	// RefusalWaitingRoom, TokensIssued the fair tokens signed and
	// TokensRefused those refused as invalid or expired.
	Admitted           int64 `json:"admitted"`
	WaitingRoomAnswers int64 `json:"waiting_room_answers"`
	TokensIssued       int64 `json:"tokens_issued"`
	TokensRefused      int64 `json:"tokens_refused"`
	// Fair modes: Waiting is the issued tokens not called yet whose
	// shoppers are presumed present, Called those called whose shoppers
	// are presumed present and have not come back yet, Target the
	// controller's K (the most it lets be in progress or called), and
	// NowServing the threshold T (zero until the first call).
	Waiting    int       `json:"waiting"`
	Called     int       `json:"called"`
	Target     int       `json:"target,omitempty"`
	NowServing time.Time `json:"now_serving,omitzero"`
	// Paced room: NotToday counts the shoppers told RefusalNotToday, and
	// ServiceMS is the room's estimate of the time a checkout takes (0
	// until it has one); the checkout serves InProgress per ServiceMS.
	NotToday  int64   `json:"not_today,omitempty"`
	ServiceMS float64 `json:"service_ms,omitempty"`
}

// Room admits requests according to its mode and counts those in
// progress. It is safe for concurrent use.
type Room struct {
	cfg     Config
	clock   func() time.Time
	signers []*signer // one per key, in order: the first signs

	mu                          sync.Mutex
	lastNow                     int64 // the latest clock reading: time never goes back in the room
	inProgress, maxInProgress   int
	admitted, waitingAnswers    int64
	tokensIssued, tokensRefused int64

	// The fair modes' line and controller (fair.go), and the paced room's
	// (paced.go).
	fair line
	pace pace
}

// New returns a room for cfg, reading the time from now (nil means
// time.Now). It reports every setting of cfg that cannot work. It does not
// read the clock.
func New(cfg Config, now func() time.Time) (*Room, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("configure admission: %w", err)
	}
	cfg.normalise()
	if now == nil {
		now = time.Now
	}
	return &Room{cfg: cfg, clock: now, signers: signers(cfg.Keys), fair: line{target: float64(cfg.InProgress)}}, nil
}

// Config is the room's configuration with its defaults filled in; its
// keys are copies, so changing them changes nothing in the room.
func (r *Room) Config() Config {
	c := r.cfg
	c.copyKeys()
	return c
}

// Admit decides whether the request of checkoutID, carrying token (""
// for none), may proceed. An admitted request must be followed by exactly
// one Done when it is answered. Modes without a waiting room admit every
// request, and ignore the token, but count it in progress.
func (r *Room) Admit(checkoutID, token string) Decision {
	return r.AdmitBy(checkoutID, token, time.Time{})
}

// AdmitBy is Admit for a shopper who leaves at deadline (zero: unknown).
// Only the paced room reads it.
func (r *Room) AdmitBy(checkoutID, token string, deadline time.Time) Decision {
	switch {
	case r.cfg.Mode == ModePaced:
		return r.pacedAdmit(checkoutID, token, deadline)
	case r.cfg.Mode.Fair():
		if token == "" {
			return r.firstAttempt(checkoutID)
		}
		return r.admitToken(checkoutID, token)
	case r.cfg.Mode.WaitingRoom(): // the lottery
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.inProgress >= r.cfg.InProgress {
			r.waitingAnswers++
			return Decision{Refusal: RefusalWaitingRoom}
		}
	default:
		r.mu.Lock()
		defer r.mu.Unlock()
	}
	r.admitLocked()
	return Decision{Admitted: true}
}

func (r *Room) admitLocked() {
	r.admitted++
	r.inProgress++
	r.maxInProgress = max(r.maxInProgress, r.inProgress)
}

// Done records that an admitted request was answered.
func (r *Room) Done() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.inProgress > 0 { // a Done without Admit must not make room
		r.inProgress--
	}
}

// nowLocked reads the clock, never going back from the last reading, so
// that a wall clock stepped back cannot make a call younger or a stamp
// earlier than one already issued.
func (r *Room) nowLocked() int64 {
	r.lastNow = max(r.lastNow, r.clock().UnixNano())
	return r.lastNow
}

// Stats returns what the room has done so far.
func (r *Room) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := Stats{
		Mode: r.cfg.Mode, InProgress: r.inProgress, MaxInProgress: r.maxInProgress,
		Admitted: r.admitted, WaitingRoomAnswers: r.waitingAnswers,
		TokensIssued: r.tokensIssued, TokensRefused: r.tokensRefused,
	}
	switch {
	case r.cfg.Mode == ModePaced:
		r.pacedStats(&s)
	case r.cfg.Mode.Fair():
		r.fairStats(&s)
	}
	return s
}

// ResetMax starts a new high-water mark from the requests in progress now,
// so that a runner can measure one drill on a long-lived checkout.
func (r *Room) ResetMax() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.maxInProgress = r.inProgress
}
