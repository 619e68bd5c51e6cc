package payment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// maxBodyBytes bounds a request body.
const maxBodyBytes = 1 << 20

var _ http.Handler = (*Server)(nil)

// Server is the payment-gateway stand-in, an http.Handler. See the package
// documentation for its HTTP API. It is safe for concurrent use.
type Server struct {
	cfg    Config
	now    func() time.Time
	logger *slog.Logger
	sem    chan struct{} // one token per charge in processing; nil: no limit

	// sleep waits out a charge's processing time; tests replace it.
	sleep func(time.Duration)
	// hooks observe the life of a charge; tests set them.
	hooks hooks

	// journal keeps the books on disk; nil: in memory only. Set by
	// NewServer; written to with mu held.
	journal *journal

	mu          sync.Mutex
	byKey       map[string]*entry    // every key waiting, processing or recorded
	tombstones  map[string]time.Time // keys voided before a charge was recorded
	charges     []*Charge            // recorded charges, in completion order
	seq         uint64               // last charge number handed out
	inFlight    int                  // charges holding a slot
	maxInFlight int                  // the most charges that held a slot at once
}

// hooks are called, when set, as a charge goes through the server. They are
// for tests only and must be set before the server handles a request.
type hooks struct {
	waiting   func(key string) // the charge starts waiting for a slot
	started   func(key string) // the charge holds a slot and starts processing
	abandoned func(key string) // the client left while the charge waited for a slot
	joined    func(key string) // a request waits for the first charge with its key
	recorded  func(c Charge)   // the charge was recorded
}

// entry is the state of one idempotency key.
type entry struct {
	req    ChargeRequest
	done   chan struct{} // closed when the charge is recorded or abandoned
	charge *Charge       // set, under Server.mu, once recorded
}

// NewServer returns a Server that behaves as cfg says. With cfg.DataDir it
// first replays the journal there, so that it starts with the books a
// server before it left; a line it cannot replay is a *JournalError. A nil
// logger discards logs. The server logs at Debug level, except about its
// journal: the replay at Info, a torn last line at Warn, a failed write at
// Error.
func NewServer(cfg Config, logger *slog.Logger) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("create payment server: %w", err)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{
		cfg:        cfg,
		now:        cfg.Now,
		logger:     logger,
		sleep:      time.Sleep,
		byKey:      make(map[string]*entry),
		tombstones: make(map[string]time.Time),
	}
	if s.now == nil {
		s.now = time.Now
	}
	if cfg.Slots > 0 {
		s.sem = make(chan struct{}, cfg.Slots)
	}
	if cfg.DataDir != "" {
		if err := s.openJournal(cfg.DataDir, cfg.Sync); err != nil {
			return nil, fmt.Errorf("create payment server: %w", err)
		}
	}
	return s, nil
}

// Close closes the journal, if the server has one; from then on a change to
// the books answers 500 and is not made. A server that keeps its books in
// memory has nothing to close. Close does not wait for requests in flight.
func (s *Server) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.journal == nil {
		return nil
	}
	return s.journal.close()
}

// Charges returns a copy of every recorded charge, ordered by creation
// (created_at, then id).
func (s *Server) Charges() []Charge {
	s.mu.Lock()
	out := make([]Charge, len(s.charges))
	for i, c := range s.charges {
		out[i] = c.clone()
	}
	s.mu.Unlock()
	// Charges are appended in id order; a stable sort by time keeps id
	// order among equal times, even with a clock that goes backwards.
	slices.SortStableFunc(out, func(a, b Charge) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/charges":
		switch r.Method {
		case http.MethodPost:
			s.handleCharge(w, r)
		case http.MethodGet, http.MethodHead:
			writeJSON(w, http.StatusOK, listBody{Charges: s.Charges()})
		default:
			methodNotAllowed(w, r, "GET, HEAD, POST")
		}
	case "/charges/void":
		if r.Method != http.MethodPost {
			methodNotAllowed(w, r, "POST")
			return
		}
		s.handleVoid(w, r)
	case "/healthz":
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			methodNotAllowed(w, r, "GET, HEAD")
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	default:
		writeError(w, http.StatusNotFound, fmt.Sprintf("no such path %q", r.URL.Path))
	}
}

// listBody is the answer to GET /charges.
type listBody struct {
	Charges []Charge `json:"charges"`
}

// voidBody is the body of POST /charges/void.
type voidBody struct {
	Key string `json:"key"`
}

// tombstoneBody is the answer to a void for a key with no recorded charge.
type tombstoneBody struct {
	Key      string    `json:"key"`
	Status   Status    `json:"status"`
	VoidedAt time.Time `json:"voided_at"`
}

// handleCharge serves POST /charges.
func (s *Server) handleCharge(w http.ResponseWriter, r *http.Request) {
	var req ChargeRequest
	if err := decodeBody(w, r, &req); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if err := checkChargeRequest(req); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	ctx := r.Context()
	for {
		s.mu.Lock()
		e, ok := s.byKey[req.Key]
		if !ok {
			e = &entry{req: req, done: make(chan struct{})}
			s.byKey[req.Key] = e
			s.mu.Unlock()
			s.process(ctx, w, e)
			return
		}
		if msg := conflict(e.req, req); msg != "" {
			s.mu.Unlock()
			s.logger.Debug("payment key conflict", "key", req.Key, "reason", msg)
			writeError(w, http.StatusConflict, msg)
			return
		}
		if e.charge != nil {
			c := e.charge.clone()
			s.mu.Unlock()
			writeJSON(w, http.StatusOK, c)
			return
		}
		// The first charge with this key is waiting or processing: wait for
		// its outcome. If its client left before it started, try again, and
		// perhaps become the charge that goes ahead.
		done := e.done
		s.mu.Unlock()
		if s.hooks.joined != nil {
			s.hooks.joined(req.Key)
		}
		select {
		case <-done:
		case <-ctx.Done():
			return
		}
	}
}

// process waits for a slot, processes and records the charge of e, which this
// request created, and answers 201 with it.
func (s *Server) process(ctx context.Context, w http.ResponseWriter, e *entry) {
	key := e.req.Key
	if s.sem != nil {
		if s.hooks.waiting != nil {
			s.hooks.waiting(key)
		}
		acquired := false
		select {
		case s.sem <- struct{}{}:
			acquired = true
		case <-ctx.Done():
		}
		// Both cases may have been ready: a client that has gone is never
		// charged, even when a slot was free.
		if ctx.Err() != nil {
			if acquired {
				<-s.sem
			}
			s.abandon(e)
			return
		}
	} else if ctx.Err() != nil {
		s.abandon(e)
		return
	}

	s.mu.Lock()
	s.inFlight++
	s.maxInFlight = max(s.maxInFlight, s.inFlight)
	s.mu.Unlock()
	if s.hooks.started != nil {
		s.hooks.started(key)
	}

	// From here on the charge completes whether or not the client stays.
	o := s.cfg.draw(key)
	if o.latency > 0 {
		s.sleep(o.latency)
	}

	s.mu.Lock()
	c := &Charge{
		ID:          fmt.Sprintf("ch_%08d", s.seq+1),
		Key:         key,
		AmountCents: e.req.AmountCents,
		Shopper:     e.req.Shopper,
		SKU:         e.req.SKU,
		Status:      StatusApproved,
		CreatedAt:   s.now().UTC(),
	}
	if o.declined {
		c.Status = StatusDeclined
	}
	at, voided := s.tombstones[key]
	if voided && c.Status == StatusApproved {
		c.Status = StatusVoided
		c.VoidedAt = &at
	}
	if s.journal != nil {
		if err := s.journal.append(record{Op: opCharge, Charge: c}); err != nil {
			s.unrecorded(e, err)
			writeError(w, http.StatusInternalServerError, "record charge: "+err.Error())
			return
		}
	}
	// Only now that it is written down may anyone see the charge.
	s.seq++
	if voided {
		delete(s.tombstones, key)
	}
	e.charge = c
	s.charges = append(s.charges, c)
	s.inFlight--
	close(e.done)
	out := c.clone()
	s.mu.Unlock()
	if s.sem != nil {
		<-s.sem // free the slot before answering: a slow reader holds none
	}

	s.logger.Debug("payment charge recorded", "id", out.ID, "key", key, "status", out.Status,
		"amount_cents", out.AmountCents, "latency", o.latency)
	if s.hooks.recorded != nil {
		s.hooks.recorded(out)
	}
	writeJSON(w, http.StatusCreated, out)
}

// unrecorded forgets the charge of e, which was processed but could not be
// written down, and frees its slot. s.mu is held and unrecorded releases it.
// Like a provider that failed before committing, nothing was charged: the
// requests waiting on the key try again, and one of them takes its place.
func (s *Server) unrecorded(e *entry, err error) {
	delete(s.byKey, e.req.Key)
	s.inFlight--
	close(e.done)
	s.mu.Unlock()
	if s.sem != nil {
		<-s.sem
	}
	s.logger.Error("payment charge not recorded", "key", e.req.Key, "err", err)
}

// abandon forgets the charge of e, whose client left before it started, and
// wakes the requests waiting on the same key.
func (s *Server) abandon(e *entry) {
	s.mu.Lock()
	delete(s.byKey, e.req.Key)
	close(e.done)
	s.mu.Unlock()
	s.logger.Debug("payment charge abandoned before processing", "key", e.req.Key)
	if s.hooks.abandoned != nil {
		s.hooks.abandoned(e.req.Key)
	}
}

// handleVoid serves POST /charges/void.
func (s *Server) handleVoid(w http.ResponseWriter, r *http.Request) {
	var body voidBody
	if err := decodeBody(w, r, &body); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if body.Key == "" {
		writeError(w, http.StatusBadRequest, "key is required")
		return
	}
	s.mu.Lock()
	now := s.now().UTC()
	if e, ok := s.byKey[body.Key]; ok && e.charge != nil {
		if e.charge.Status == StatusApproved {
			if err := s.journalVoid(body.Key, now); err != nil {
				s.mu.Unlock()
				writeError(w, http.StatusInternalServerError, "record void: "+err.Error())
				return
			}
			e.charge.Status = StatusVoided
			e.charge.VoidedAt = &now
		}
		c := e.charge.clone()
		s.mu.Unlock()
		s.logger.Debug("payment charge void", "id", c.ID, "key", c.Key, "status", c.Status)
		writeJSON(w, http.StatusOK, c)
		return
	}
	at, ok := s.tombstones[body.Key]
	if !ok {
		at = now
		if err := s.journalVoid(body.Key, at); err != nil {
			s.mu.Unlock()
			writeError(w, http.StatusInternalServerError, "record void: "+err.Error())
			return
		}
		s.tombstones[body.Key] = at
	}
	s.mu.Unlock()
	s.logger.Debug("payment void before charge", "key", body.Key)
	writeJSON(w, http.StatusOK, tombstoneBody{Key: body.Key, Status: StatusVoided, VoidedAt: at})
}

// journalVoid writes down a void that changes the books, if they are kept on
// disk. s.mu is held.
func (s *Server) journalVoid(key string, at time.Time) error {
	if s.journal == nil {
		return nil
	}
	if err := s.journal.append(record{Op: opVoid, Key: key, At: at}); err != nil {
		s.logger.Error("payment void not recorded", "key", key, "err", err)
		return err
	}
	return nil
}

// checkChargeRequest reports the first required field that req misses.
func checkChargeRequest(req ChargeRequest) error {
	switch {
	case req.Key == "":
		return errors.New("key is required")
	case req.Shopper == "":
		return errors.New("shopper is required")
	case req.AmountCents <= 0:
		return fmt.Errorf("amount_cents must be above 0, got %d", req.AmountCents)
	}
	return nil
}

// conflict describes how req differs from first, the request that first used
// its key, or returns "" if they agree.
func conflict(first, req ChargeRequest) string {
	var diffs []string
	if req.AmountCents != first.AmountCents {
		diffs = append(diffs, fmt.Sprintf("amount_cents %d (was %d)", req.AmountCents, first.AmountCents))
	}
	if req.Shopper != first.Shopper {
		diffs = append(diffs, fmt.Sprintf("shopper %q (was %q)", req.Shopper, first.Shopper))
	}
	if req.SKU != first.SKU {
		diffs = append(diffs, fmt.Sprintf("sku %q (was %q)", req.SKU, first.SKU))
	}
	if len(diffs) == 0 {
		return ""
	}
	return fmt.Sprintf("key %q was already used with other details: %s", req.Key, strings.Join(diffs, ", "))
}

// decodeBody decodes a request body holding exactly one JSON object with no
// unknown fields into v.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return describeJSONError(err)
	}
	// Reading up to EOF also matters for a charge that waits: net/http only
	// notices that a client went away once the body was read to its end.
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("decode body: more data after the JSON object")
	}
	return nil
}

// describeJSONError turns a decoding error into a message that names the
// offending field where there is one.
func describeJSONError(err error) error {
	var (
		typeErr *json.UnmarshalTypeError
		syntax  *json.SyntaxError
		tooBig  *http.MaxBytesError
	)
	switch {
	case errors.As(err, &typeErr) && typeErr.Field != "":
		return fmt.Errorf("decode body: field %s must be a JSON %s, got %s", typeErr.Field, jsonKind(typeErr.Type.Kind().String()), typeErr.Value)
	case errors.As(err, &typeErr):
		return fmt.Errorf("decode body: body must be a JSON object, got %s", typeErr.Value)
	case errors.As(err, &syntax):
		return fmt.Errorf("decode body: invalid JSON at byte %d: %w", syntax.Offset, err)
	case errors.As(err, &tooBig):
		return fmt.Errorf("decode body: body exceeds %d bytes", tooBig.Limit)
	case errors.Is(err, io.EOF):
		return errors.New("decode body: body is empty")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("decode body: body ends in the middle of the JSON")
	}
	// Unknown fields and other problems: encoding/json names the field.
	return fmt.Errorf("decode body: %s", strings.TrimPrefix(err.Error(), "json: "))
}

// jsonKind names the JSON type that decodes into a Go kind.
func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "string"
	case "struct", "map":
		return "object"
	default:
		return "number"
	}
}

// methodNotAllowed answers 405, listing the allowed methods.
func methodNotAllowed(w http.ResponseWriter, r *http.Request, allow string) {
	w.Header().Set("Allow", allow)
	writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("method %s not allowed on %s; use %s", r.Method, r.URL.Path, allow))
}

// errorBody is every error answer.
type errorBody struct {
	Error string `json:"error"`
}

// writeError answers code with {"error": msg}.
func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, errorBody{Error: msg})
}

// writeJSON answers code with v as JSON.
func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil { // only plain structs are written: cannot happen
		code = http.StatusInternalServerError
		b = []byte(`{"error":"encode answer"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(append(b, '\n')) // the client may have gone; nothing to do
}
