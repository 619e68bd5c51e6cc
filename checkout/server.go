package checkout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/gameday-dev/gameday/breakers"
	"github.com/gameday-dev/gameday/checkout/admission"
	"github.com/gameday-dev/gameday/checkout/payment"
)

// Server is the reference checkout: an http.Handler plus the clients and
// guards of its three dependencies.
type Server struct {
	cfg       Config
	log       *slog.Logger
	invRedis  *redis.Client
	sessRedis *redis.Client
	inv       *Inventory
	sessions  *Sessions
	pay       *payment.Client
	guards    []*breakers.Guard // payment, inventory, sessions
	payG      *breakers.Guard
	invG      *breakers.Guard
	sessG     *breakers.Guard
	voids     *voider
	line      *paymentLine // nil without Config.PaymentSlots
	room      *admission.Room
	metrics   *metrics
	mux       *http.ServeMux
	products  *productCache // nil without a catalogue

	stopTick  chan struct{} // closed by Close; nil without a fair room
	tickDone  chan struct{}
	closeOnce sync.Once

	mu       sync.Mutex
	inFlight map[string]struct{} // checkout ids being processed here
	// pending holds the checkout ids this instance answered pending (paid,
	// the order not confirmed), each with its shopper and SKU, until its
	// lease expires: the sweeper may void the charge from then on, and
	// pending is no longer the truth.
	pending  map[string]pendingPurchase
	prunedAt time.Time // when pending last lost its expired ids
	// pendingN is len(pending), stored under mu: a checkout whose Redis
	// answered forgets its id's pending purchase without taking mu when
	// none is pending, as is the rule (ids of one purchase are one at a
	// time here: begin, under mu, orders them).
	pendingN atomic.Int64
}

var _ http.Handler = (*Server)(nil)

// New builds a checkout from cfg. It does not contact the dependencies: a
// checkout starts even when they are down, and says so when asked.
func New(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("configure checkout: %w", err)
	}
	cfg.normalise()
	pay := payment.NewClient(cfg.PaymentURL, nil)
	// When the payment breaker opens, its idle connections go: a provider
	// whose container was killed leaves them silent rather than reset, and
	// each half-open probe would take one and time out, keeping the breaker
	// open long after the provider is back.
	cfg.Payment.OnOpen = pay.CloseIdleConnections
	// Every guarded call returns when its context ends (go-redis with
	// ContextTimeoutEnabled, the payment client's requests carry theirs):
	// the calls run on the handler's goroutine, not one of their own.
	cfg.Payment.Inline, cfg.Inventory.Inline, cfg.Sessions.Inline = true, true, true
	s := &Server{
		cfg:      cfg,
		log:      cfg.Logger,
		invRedis: newRedisClient(cfg.InventoryRedis, cfg.RedisPassword, cfg.Inventory.Timeout),
		pay:      pay,
		payG:     breakers.New(cfg.Payment),
		invG:     breakers.New(cfg.Inventory),
		sessG:    breakers.New(cfg.Sessions),
		inFlight: map[string]struct{}{},
		pending:  map[string]pendingPurchase{},
	}
	s.inv = NewInventory(s.invRedis)
	if cfg.SessionRedis != "" {
		s.sessRedis = newRedisClient(cfg.SessionRedis, cfg.RedisPassword, cfg.Sessions.Timeout)
		s.sessions = NewSessions(s.sessRedis, cfg.SessionTTL)
	}
	s.guards = []*breakers.Guard{s.payG, s.invG, s.sessG}
	room, err := admission.New(cfg.Admission, time.Now)
	if err != nil {
		return nil, fmt.Errorf("configure checkout: %w", err)
	}
	s.room = room
	if cfg.PaymentSlots > 0 {
		s.line = newPaymentLine(cfg.PaymentSlots, cfg.MinPaymentTime, time.Now)
	}
	s.metrics = newMetrics(s.guards, s.room, s.line)
	if cfg.CatalogURL != "" {
		s.products = newProductCache(cfg, s.sessRedis, s.sessG, s.metrics)
	}
	s.voids = newVoider(s.inv, s.pay, cfg.Payment.Timeout, cfg.lateClaimGrace(), cfg.SweepInterval, s.log, s.metrics)
	if cfg.Admission.Mode.Fair() {
		s.stopTick, s.tickDone = make(chan struct{}), make(chan struct{})
		go s.tick(room.Config().Tick)
	}
	s.routes()
	return s, nil
}

// tick runs the fair room's controller until Close.
func (s *Server) tick(every time.Duration) {
	defer close(s.tickDone)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.stopTick:
			return
		case <-t.C:
			s.room.Tick()
		}
	}
}

// Close stops the sweeper, gives voids in flight a few seconds, and closes
// connections. Voids not yet confirmed stay pending in Redis for the next
// checkout's sweeper.
func (s *Server) Close() error {
	if s.stopTick != nil {
		s.closeOnce.Do(func() { close(s.stopTick) })
		<-s.tickDone
	}
	s.voids.close()
	errs := []error{s.invRedis.Close()}
	if s.sessRedis != nil {
		errs = append(errs, s.sessRedis.Close())
	}
	return errors.Join(errs...)
}

// Registry is the Prometheus registry behind /metrics.
func (s *Server) Registry() *prometheus.Registry { return s.metrics.reg }

// Guard returns the guard of a dependency: "payment", "inventory" or
// "sessions".
func (s *Server) Guard(name string) *breakers.Guard {
	for _, g := range s.guards {
		if g.Name() == name {
			return g
		}
	}
	return nil
}

// Inventory is the checkout's stock store.
func (s *Server) Inventory() *Inventory { return s.inv }

// Admission is the checkout's admission room (GET /admin/admission).
func (s *Server) Admission() *admission.Room { return s.room }

// ServeHTTP serves the checkout and admin API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Request is the body of POST /checkout.
type Request struct {
	// CheckoutID identifies this purchase attempt and is its idempotency
	// key: retries of the same attempt carry the same id.
	CheckoutID string `json:"checkout_id"`
	Shopper    string `json:"shopper"`
	SKU        string `json:"sku"`
	// Session is the shopper's session token; "" checks out as a guest.
	Session string `json:"session,omitempty"`
	// Deadline is when the shopper gives up (RFC 3339). Past it the checkout
	// charges nothing. Zero means no deadline. The admission modes that
	// detach the charge (queue, lottery, fair) ignore it.
	Deadline time.Time `json:"deadline,omitzero"`
	// Token is the waiting-room token, which travels in the
	// Waiting-Room-Token header (admission.TokenHeader), never in the body.
	Token string `json:"-"`
}

// Outcome is the status field of every answer to POST /checkout.
type Outcome string

// The outcomes of a checkout and their HTTP status codes.
const (
	OutcomeConfirmed  Outcome = "confirmed"   // 200
	OutcomeDeclined   Outcome = "declined"    // 402
	OutcomeSoldOut    Outcome = "sold_out"    // 409
	OutcomeInProgress Outcome = "in_progress" // 409, Retry-After
	// OutcomePending: the payment went through but the order could not be
	// confirmed yet (the inventory Redis did not answer the claim). The
	// same checkout id, asked again, learns the outcome: the order if it
	// was written, or the purchase completed under the same charge. Never
	// a refusal: the shopper must not start a new purchase.
	OutcomePending     Outcome = "pending"     // 202, Retry-After
	OutcomeTooLate     Outcome = "too_late"    // 410
	OutcomeUnavailable Outcome = "unavailable" // 503, Retry-After
	OutcomeInvalid     Outcome = "invalid"     // 400
)

// Response is the body of every answer to POST /checkout.
type Response struct {
	Status     Outcome `json:"status"`
	CheckoutID string  `json:"checkout_id,omitempty"`
	Order      *Order  `json:"order,omitempty"`
	// Replayed is true when the answer repeats an earlier purchase with the
	// same checkout id.
	Replayed bool `json:"replayed,omitempty"`
	// Guest and Degraded: the shopper checked out without a session because
	// the session store failed (Degraded) or because it had none (Guest only).
	Guest           bool     `json:"guest,omitempty"`
	Degraded        bool     `json:"degraded,omitempty"`
	DegradedReasons []string `json:"degraded_reasons,omitempty"`
	// Dependency and Reason say why a checkout was refused: the dependency
	// ("inventory", "payment") and "breaker_open", "bulkhead_full",
	// "timeout", "error", "deadline", "voided"; or, without a dependency,
	// the admission room's "waiting_room" (503), "not_today" (410, the
	// paced room), "token_invalid" or "token_expired" (400).
	Dependency   string `json:"dependency,omitempty"`
	Reason       string `json:"reason,omitempty"`
	RetryAfterMS int64  `json:"retry_after_ms,omitempty"`
	Error        string `json:"error,omitempty"`

	// retryAfter is the paced room's wait for this shopper (0: the
	// checkout's RetryAfter, or the room's).
	retryAfter time.Duration
}

var statusCodes = map[Outcome]int{
	OutcomeConfirmed:   http.StatusOK,
	OutcomeDeclined:    http.StatusPaymentRequired,
	OutcomeSoldOut:     http.StatusConflict,
	OutcomeInProgress:  http.StatusConflict,
	OutcomePending:     http.StatusAccepted,
	OutcomeTooLate:     http.StatusGone,
	OutcomeUnavailable: http.StatusServiceUnavailable,
	OutcomeInvalid:     http.StatusBadRequest,
}

// StatusCode is the HTTP status the checkout answers with for an outcome.
func StatusCode(o Outcome) int { return statusCodes[o] }

func (s *Server) handleCheckout(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	resp := s.checkout(w, r)
	s.metrics.observe(resp, time.Since(start))
	if resp.Status == OutcomeUnavailable || resp.Status == OutcomeInProgress || resp.Status == OutcomePending {
		ra := s.cfg.RetryAfter
		switch {
		case resp.retryAfter > 0:
			ra = resp.retryAfter
		case resp.Reason == admission.RefusalWaitingRoom:
			ra = s.cfg.Admission.RetryAfter
		}
		w.Header().Set("Retry-After", strconv.Itoa(int(max(1, (ra+time.Second-1)/time.Second))))
		resp.RetryAfterMS = ra.Milliseconds()
	}
	writeJSON(w, StatusCode(resp.Status), resp)
}

// checkout serves one POST /checkout; it sets the waiting-room token
// header on w, the rest of the answer is the caller's.
func (s *Server) checkout(w http.ResponseWriter, r *http.Request) Response {
	var req Request
	if err := decodeJSON(r, &req); err != nil {
		return Response{Status: OutcomeInvalid, Error: err.Error()}
	}
	if err := req.validate(); err != nil {
		return Response{Status: OutcomeInvalid, CheckoutID: req.CheckoutID, Error: err.Error()}
	}
	ctx := r.Context()
	switch {
	case !s.cfg.Admission.Mode.HonoursDeadline():
		// The deadline is ignored and the shopper leaving stops nothing:
		// the purchase, charge included, runs to its end, bounded only by
		// each dependency guard's own timeout.
		ctx = context.WithoutCancel(ctx)
	case !req.Deadline.IsZero():
		if !time.Now().Before(req.Deadline) {
			return Response{Status: OutcomeTooLate, CheckoutID: req.CheckoutID, Reason: "deadline"}
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, req.Deadline)
		defer cancel()
	}
	req.Token = r.Header.Get(admission.TokenHeader)
	// The token is signed over the checkout id and the shopper (neither
	// holds a space): another shopper cannot use one handed to someone.
	var deadline time.Time
	if s.cfg.Admission.Mode.HonoursDeadline() {
		deadline = req.Deadline
	}
	d := s.room.AdmitBy(req.CheckoutID+" "+req.Shopper, req.Token, deadline)
	if d.Token != "" {
		w.Header().Set(admission.TokenHeader, d.Token)
	}
	switch d.Refusal {
	case "":
	case admission.RefusalWaitingRoom:
		return Response{Status: OutcomeUnavailable, CheckoutID: req.CheckoutID, Reason: d.Refusal, retryAfter: d.RetryAfter}
	case admission.RefusalNotToday:
		return Response{Status: OutcomeTooLate, CheckoutID: req.CheckoutID, Reason: d.Refusal}
	case admission.RefusalTokenExpired:
		return Response{Status: OutcomeInvalid, CheckoutID: req.CheckoutID, Reason: d.Refusal,
			Error: admission.TokenHeader + ": expired; start again without it"}
	default:
		return Response{Status: OutcomeInvalid, CheckoutID: req.CheckoutID, Reason: d.Refusal,
			Error: admission.TokenHeader + ": not valid for this checkout_id and shopper (forged, altered, someone else's, or signed with a key no longer configured)"}
	}
	defer s.room.Done()
	if !s.begin(req.CheckoutID) {
		return Response{Status: OutcomeInProgress, CheckoutID: req.CheckoutID}
	}
	defer s.end(req.CheckoutID)

	resp := Response{CheckoutID: req.CheckoutID}
	if s.cfg.Mode == ModeNaive {
		return s.naive(ctx, req, resp)
	}
	return s.reserve(ctx, req, resp)
}

const idChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:-"

func (req Request) validate() error {
	switch {
	case req.CheckoutID == "":
		return errors.New("checkout_id: required")
	case req.Shopper == "":
		return errors.New("shopper: required")
	case req.SKU == "":
		return errors.New("sku: required")
	}
	for _, f := range []struct{ name, v string }{{"checkout_id", req.CheckoutID}, {"shopper", req.Shopper}, {"sku", req.SKU}, {"session", req.Session}} {
		if len(f.v) > 128 || strings.Trim(f.v, idChars) != "" {
			return fmt.Errorf("%s: at most 128 of A-Z a-z 0-9 . _ : -", f.name)
		}
	}
	return nil
}

// begin marks a checkout id as in progress on this instance, so that two
// concurrent requests for the same purchase cannot race each other's
// release and void.
func (s *Server) begin(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.inFlight[id]; ok {
		return false
	}
	s.inFlight[id] = struct{}{}
	return true
}

// pendingPurchase is a purchase answered pending: whose, and until when
// that stays the truth.
type pendingPurchase struct {
	shopper, sku string
	until        time.Time
}

// markPending remembers that req's purchase was answered pending, until
// its lease expires at until. Expired ids go at most once a second, so the
// map holds no more than the pending answers of one lease's time.
func (s *Server) markPending(req Request, until time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if now := time.Now(); now.Sub(s.prunedAt) >= time.Second {
		s.prunedAt = now
		for k, p := range s.pending {
			if !now.Before(p.until) {
				delete(s.pending, k)
			}
		}
	}
	s.pending[req.CheckoutID] = pendingPurchase{shopper: req.Shopper, sku: req.SKU, until: until}
	s.pendingN.Store(int64(len(s.pending)))
}

// pendingFor says whether req's checkout id was answered pending and its
// lease has not yet expired (held), and whether that purchase is req's
// own: the same shopper, the same SKU (mine).
func (s *Server) pendingFor(req Request) (held, mine bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pending[req.CheckoutID]
	if !ok || !time.Now().Before(p.until) {
		return false, false
	}
	return true, p.shopper == req.Shopper && p.sku == req.SKU
}

// forgetPending forgets req's pending purchase, if it is req's own.
func (s *Server) forgetPending(req Request) {
	if s.pendingN.Load() == 0 {
		return // the common case: nothing of this instance is pending
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.pending[req.CheckoutID]; ok && p.shopper == req.Shopper && p.sku == req.SKU {
		delete(s.pending, req.CheckoutID)
		s.pendingN.Store(int64(len(s.pending)))
	}
}

func (s *Server) end(id string) {
	s.mu.Lock()
	delete(s.inFlight, id)
	s.mu.Unlock()
}

// touchSession degrades open: when the session store fails, the shopper
// carries on as a guest and the answer says so. With GuestFallback off it
// returns the store's error instead, for the purchase to be refused.
func (s *Server) touchSession(ctx context.Context, req Request, resp *Response) error {
	if req.Session == "" || s.sessions == nil {
		resp.Guest = true
		return nil
	}
	err := s.sessG.Do(ctx, func(ctx context.Context) error {
		_, err := s.sessions.Touch(ctx, req.Session, req.Shopper)
		return err
	})
	if err != nil && s.cfg.GuestFallback == Off {
		return err
	}
	if err != nil {
		resp.Guest, resp.Degraded = true, true
		resp.DegradedReasons = append(resp.DegradedReasons, "session_store_unavailable")
		s.metrics.degraded.WithLabelValues("session_store_unavailable").Inc()
		s.log.Debug("session store failed; checking out as guest", "checkout_id", req.CheckoutID, "err", err)
	}
	return nil
}

// reserve is the correct flow: reserve, pay, claim; release on anything
// but success; void a charge that may have been made but cannot be
// confirmed.
func (s *Server) reserve(ctx context.Context, req Request, resp Response) Response {
	// The lease, if this reserves one, expires no sooner than this.
	leased := time.Now()
	res, err := breakers.Call(ctx, s.invG, func(ctx context.Context) (reservation, error) {
		return s.inv.Reserve(ctx, req.SKU, req.CheckoutID, s.cfg.LeaseTTL)
	})
	switch {
	case errors.Is(err, ErrUnknownSKU):
		return invalid(resp, "sku: no stock set for "+req.SKU)
	case err != nil:
		// The reply may have been lost after the unit was reserved: give it
		// back if we can; otherwise the lease expires on its own. The lease
		// may be an earlier attempt's, whose charge went through: the
		// sweeper settles it (voids that charge unless an order was made).
		switch held, mine := s.pendingFor(req); {
		case mine:
			// This purchase was paid and answered pending, and Redis still
			// cannot say whether its order was made: that is still the
			// truth, and its lease stays for the next ask. A refusal would
			// tell a shopper who may hold an order to start a new purchase.
			resp.Status, resp.Reason = OutcomePending, "order_unconfirmed"
			return resp
		case held:
			// Someone else's purchase, paid and pending, under this id: it
			// is refused like any other, and its lease is left alone (a
			// release would hand that charge to the sweeper).
			return s.refused(ctx, resp, "inventory", err)
		}
		go s.release(req, true)
		return s.refused(ctx, resp, "inventory", err)
	}
	// Redis answered: what follows is definite, or pending afresh.
	s.forgetPending(req)
	switch {
	case res.status == resSold && res.order.Shopper != req.Shopper:
		// Someone else's order: the same answer as for any id used by
		// another shopper, and nothing of the order.
		return invalid(resp, errIDUsedElsewhere)
	case res.status == resSold:
		resp.Status, resp.Order, resp.Replayed = OutcomeConfirmed, res.order, true
		return resp
	case res.status == resSoldOut:
		resp.Status = OutcomeSoldOut
		return resp
	case res.status == resMoved:
		// The shop moved to another pod after the router sent this here:
		// come back, and the router sends it there.
		resp.Status, resp.Dependency, resp.Reason = OutcomeUnavailable, "inventory", "shop_moved"
		return resp
	}

	// The session is touched once a unit is held, not before: in a drop
	// most shoppers are told sold out, and their answer needs nothing of
	// the session store (one Redis round trip fewer for each of them).
	if err := s.touchSession(ctx, req, &resp); err != nil {
		s.release(req, res.refreshed)
		return s.refused(ctx, resp, "sessions", err)
	}
	key := ChargeKey(req.CheckoutID, res.attempt)
	ch, sent, err := s.charge(ctx, req, key)
	switch {
	case err != nil && !sent:
		// Nothing was sent now; a lease refreshed by this retry may hold an
		// earlier attempt's charge, which the sweeper then settles.
		s.release(req, res.refreshed)
		return s.refusedPayment(ctx, resp, err)
	case err != nil:
		// The provider may have charged before the reply was lost or the
		// shopper left: record the void, give the unit back, then void.
		s.abandon(req, key, "payment_outcome_unknown", true)
		return s.refusedPayment(ctx, resp, err)
	case ch.Status != payment.StatusApproved:
		// Declined (or voided) under this attempt's key: the provider's
		// idempotency means no approved charge can exist for it.
		s.release(req, false)
		resp.Status = OutcomeDeclined
		if ch.Status == payment.StatusVoided {
			resp.Reason = "voided"
		}
		return resp
	}

	// The order costs the checkout's price, written from the price and not
	// from the charge: the books compare the two (wrong_amounts).
	o := Order{CheckoutID: req.CheckoutID, Shopper: req.Shopper, SKU: req.SKU, ChargeKey: key, ChargeID: ch.ID, AmountCents: s.cfg.PriceCents, At: time.Now().UTC()}
	res, err = s.claim(o)
	switch {
	case err != nil:
		// Paid, and the order may or may not be written: the claim's
		// reply was lost, or Redis did not answer at all. Tell the shopper
		// the truth, pending, and keep the lease: the same checkout id,
		// asked again, replays the order if it was written, or completes
		// the purchase under the same charge key (the provider returns the
		// same charge). A shopper who never asks again leaves the lease to
		// expire, and the sweeper voids the charge unless an order was made
		// with it. Answering 503 here told a paying shopper to start a new
		// purchase.
		s.log.Warn("claim failed after payment; answering pending", "checkout_id", req.CheckoutID, "charge_key", key, "err", err)
		s.markPending(req, leased.Add(s.cfg.LeaseTTL))
		resp.Status, resp.Reason = OutcomePending, "order_unconfirmed"
		return resp
	case res.status == resLost:
		s.voids.now(req.SKU, key) // recorded by the claim
		resp.Status, resp.Reason = OutcomeSoldOut, "voided"
		return resp
	case res.status == resSold && res.order.ChargeKey != key:
		// Another attempt with the same id bought first: ours is extra.
		s.abandon(req, key, "duplicate_attempt", false)
		resp.Status, resp.Order, resp.Replayed = OutcomeConfirmed, res.order, true
		return resp
	}
	resp.Status, resp.Order = OutcomeConfirmed, res.order
	return resp
}

// invCtx is the context of a write that must not depend on the shopper: it
// leaves the guard's own deadline room to fire first, so a slow Redis is
// counted as a timeout, not as a caller leaving.
func (s *Server) invCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 2*s.cfg.Inventory.Timeout)
}

// claimAttempts bounds the tries of one claim.
const claimAttempts = 3

// claim records the order. The money is taken, so it must survive the
// shopper leaving (it runs on contexts of its own) and it does not ask the
// inventory breaker: the breaker keeps shoppers from waiting on a sick
// Redis, and refusing this one write would leave a paid shopper without
// an answer. Each try has its own deadline and the script is idempotent,
// so a try whose reply was lost is safely tried again.
func (s *Server) claim(o Order) (reservation, error) {
	var res reservation
	var err error
	for attempt := 0; attempt < claimAttempts; attempt++ {
		ctx, cancel := s.invCtx()
		res, err = s.inv.Claim(ctx, o)
		cancel()
		if err == nil {
			return res, nil
		}
	}
	return res, err
}

// release gives the unit of req's lease back. settle is for a lease that
// may hold an earlier attempt's charge: the checkout id then waits for the
// sweeper, which voids that charge unless an order was made with it.
func (s *Server) release(req Request, settle bool) {
	ctx, cancel := s.invCtx()
	defer cancel()
	err := s.invG.Do(ctx, func(ctx context.Context) error {
		_, err := s.inv.Release(ctx, req.SKU, req.CheckoutID, settle)
		return err
	})
	if err != nil {
		s.log.Debug("release failed; the lease will expire", "checkout_id", req.CheckoutID, "err", err)
	}
}

// abandon records that the charge with key must be voided (unless the order
// was made with it), optionally releasing the unit, and asks the provider at
// once. When Redis cannot be reached the lease expires and the sweeper
// finds the charge instead.
func (s *Server) abandon(req Request, key, reason string, release bool) {
	s.metrics.voids.WithLabelValues("requested").Inc()
	ctx, cancel := s.invCtx()
	defer cancel()
	ok, err := breakers.Call(ctx, s.invG, func(ctx context.Context) (bool, error) {
		return s.inv.Abandon(ctx, req.SKU, req.CheckoutID, key, reason, release)
	})
	switch {
	case err != nil:
		s.log.Warn("could not record a void; the sweeper will void the charge when the lease expires", "charge_key", key, "err", err)
	case ok:
		s.voids.now(req.SKU, key)
	default:
		s.metrics.voids.WithLabelValues("called_off").Inc()
	}
}

// charge sends the charge through the payment line, if any, and the
// payment guard. It never starts a charge that could not finish before the
// shopper's deadline, and it resends only after the connection failed,
// with the same idempotency key. sent reports whether any attempt may have
// reached the provider.
func (s *Server) charge(ctx context.Context, req Request, key string) (ch payment.Charge, sent bool, err error) {
	for attempt := 0; attempt < s.cfg.PaymentAttempts; attempt++ {
		if dl, ok := ctx.Deadline(); ctx.Err() != nil || ok && time.Until(dl) <= s.cfg.MinPaymentTime {
			return ch, sent, errTooLate
		}
		ch, err = s.callPayment(ctx, req, key)
		if errors.Is(err, errTooLate) {
			return ch, sent, err
		}
		// Refused by the guard, the charge never left; refused by the
		// provider (a bad request, a key reused elsewhere), nothing was
		// charged for it. Anything else may have reached the provider, the
		// shopper leaving mid-call included.
		if !errors.Is(err, breakers.ErrOpen) && !errors.Is(err, breakers.ErrBulkheadFull) && !errors.Is(err, payment.ErrRejected) {
			sent = true
		}
		if err == nil || !retriable(err) {
			return ch, sent, err
		}
		// A gateway that asks to be left alone a while (429 or 503 with
		// Retry-After) is: the next attempt waits that long, and a wait
		// the shopper's deadline cannot hold ends the charge now.
		if wait := payment.RetryAfter(err); wait > 0 && attempt+1 < s.cfg.PaymentAttempts {
			if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= wait+s.cfg.MinPaymentTime {
				return ch, sent, err
			}
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return ch, sent, err
			}
		}
	}
	return ch, sent, err
}

var errTooLate = errors.New("shopper's deadline reached")

// callPayment is one charge attempt: a slot of the payment line, if any,
// then the guarded call. errTooLate: the line could not give a slot in
// time for the charge to finish before the shopper's deadline.
func (s *Server) callPayment(ctx context.Context, req Request, key string) (payment.Charge, error) {
	if s.line != nil {
		if !s.line.acquire(ctx) {
			return payment.Charge{}, errTooLate
		}
		defer s.line.release()
	}
	return breakers.Call(ctx, s.payG, func(ctx context.Context) (payment.Charge, error) {
		return s.pay.Charge(ctx, payment.ChargeRequest{Key: key, AmountCents: s.cfg.PriceCents, Shopper: req.Shopper, SKU: req.SKU})
	})
}

// retriable: only a failed connection is worth an immediate resend; a
// timeout means the provider is slow, and a refusal by the guard or the
// provider will not change in a millisecond.
func retriable(err error) bool {
	switch {
	case errors.Is(err, breakers.ErrOpen), errors.Is(err, breakers.ErrBulkheadFull),
		errors.Is(err, breakers.ErrTimeout), errors.Is(err, context.Canceled),
		errors.Is(err, context.DeadlineExceeded), errors.Is(err, payment.ErrRejected):
		return false
	}
	return true
}

func (s *Server) refusedPayment(ctx context.Context, resp Response, err error) Response {
	switch {
	case errors.Is(err, errTooLate):
		resp.Status, resp.Reason = OutcomeTooLate, "deadline"
		return resp
	case errors.Is(err, payment.ErrKeyConflict):
		return invalid(resp, errIDUsedElsewhere)
	case errors.Is(err, payment.ErrRejected):
		return invalid(resp, "payment provider rejected the charge: "+err.Error())
	}
	return s.refused(ctx, resp, "payment", err)
}

// refused is the fail-closed answer: 503 with Retry-After, or too_late when
// the shopper's own deadline is what ended the call.
func (s *Server) refused(ctx context.Context, resp Response, dep string, err error) Response {
	if ctx.Err() != nil && !errors.Is(err, breakers.ErrTimeout) && !errors.Is(err, breakers.ErrOpen) && !errors.Is(err, breakers.ErrBulkheadFull) {
		resp.Status, resp.Reason = OutcomeTooLate, "deadline"
		return resp
	}
	resp.Status, resp.Dependency = OutcomeUnavailable, dep
	switch {
	case errors.Is(err, breakers.ErrOpen):
		resp.Reason = "breaker_open"
	case errors.Is(err, breakers.ErrBulkheadFull):
		resp.Reason = "bulkhead_full"
	case errors.Is(err, breakers.ErrTimeout):
		resp.Reason = "timeout"
	default:
		resp.Reason = "error"
	}
	s.log.Debug("checkout refused", "checkout_id", resp.CheckoutID, "dependency", dep, "reason", resp.Reason, "err", err)
	return resp
}

// errIDUsedElsewhere answers a checkout id that belongs to another
// shopper's purchase (or another SKU's), whatever that purchase's state.
const errIDUsedElsewhere = "checkout_id: already used by another shopper or for another sku"

func invalid(resp Response, msg string) Response {
	resp.Status, resp.Error = OutcomeInvalid, msg
	return resp
}

// naive reads the stock, pays, then decrements: the flow that oversells.
func (s *Server) naive(ctx context.Context, req Request, resp Response) Response {
	avail, err := breakers.Call(ctx, s.invG, func(ctx context.Context) (int64, error) {
		return s.inv.Available(ctx, req.SKU)
	})
	switch {
	case errors.Is(err, ErrUnknownSKU):
		return invalid(resp, "sku: no stock set for "+req.SKU)
	case err != nil:
		return s.refused(ctx, resp, "inventory", err)
	case avail <= 0:
		resp.Status = OutcomeSoldOut
		return resp
	}
	if err := s.touchSession(ctx, req, &resp); err != nil {
		return s.refused(ctx, resp, "sessions", err)
	}
	key := ChargeKey(req.CheckoutID, "1")
	ch, sent, err := s.charge(ctx, req, key)
	if err != nil {
		if sent {
			s.abandon(req, key, "payment_outcome_unknown", false)
		}
		return s.refusedPayment(ctx, resp, err)
	}
	if ch.Status != payment.StatusApproved {
		resp.Status = OutcomeDeclined
		return resp
	}
	o := Order{CheckoutID: req.CheckoutID, Shopper: req.Shopper, SKU: req.SKU, ChargeKey: key, ChargeID: ch.ID, AmountCents: s.cfg.PriceCents, At: time.Now().UTC()}
	wctx, cancel := s.invCtx()
	defer cancel()
	if err := s.invG.Do(wctx, func(ctx context.Context) error { return s.inv.NaiveSell(ctx, o) }); err != nil {
		s.abandon(req, key, "sale_not_recorded", false)
		return s.refused(ctx, resp, "inventory", err)
	}
	resp.Status, resp.Order = OutcomeConfirmed, &o
	return resp
}

func decodeJSON(r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 16<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("body: %w", err)
	}
	return nil
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
