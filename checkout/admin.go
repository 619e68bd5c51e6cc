package checkout

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/gameday-dev/gameday/breakers"
)

func (s *Server) routes() {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /checkout", s.handleCheckout)
	mux.HandleFunc("GET /products/{sku}", s.handleProduct)
	mux.HandleFunc("POST /cart", s.handleCartAdd)
	mux.HandleFunc("GET /cart", s.handleCartView)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", s.handleReady)
	// Every /admin path, those not served included, is behind the guard:
	// an unknown admin path answers 401 or 403 like a known one, and a
	// peer without the token learns nothing of what exists.
	admin := http.NewServeMux()
	admin.HandleFunc("GET /admin/breakers", s.handleBreakers)
	admin.HandleFunc("GET /admin/ledger", s.handleLedger)
	admin.HandleFunc("PUT /admin/stock", s.handleStock)
	admin.HandleFunc("POST /admin/stock/move-out", moveStep(s.handleMoveOut))
	admin.HandleFunc("POST /admin/stock/move-in", moveStep(s.handleMoveIn))
	admin.HandleFunc("POST /admin/stock/move-in/cancel", moveStep(s.handleCancelMoveIn))
	admin.HandleFunc("POST /admin/stock/move-out/cancel", moveStep(s.handleCancelMoveOut))
	admin.HandleFunc("GET /admin/admission", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.room.Stats())
	})
	// A runner resets the high-water mark before a drill, so that the most
	// checkouts in progress it reads afterwards are the drill's own.
	admin.HandleFunc("POST /admin/admission/reset-max", func(w http.ResponseWriter, r *http.Request) {
		s.room.ResetMax()
		writeJSON(w, http.StatusOK, s.room.Stats())
	})
	mux.Handle("/admin/", s.adminGuard(admin))
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{}))
	s.mux = mux
}

// adminGuard lets an admin request through when it carries the admin token
// (Config.AdminToken), or, on a checkout configured without one, when it
// comes from loopback. The refusal says what is missing and nothing else.
func (s *Server) adminGuard(next http.Handler) http.Handler {
	// Compared as hashes, so that neither the time taken nor anything else
	// tells a caller the token's length.
	want := sha256.Sum256([]byte(s.cfg.AdminToken))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.AdminToken == "" {
			if !fromLoopback(r) {
				writeJSON(w, http.StatusForbidden, map[string]string{"error": "admin API: this checkout has no admin token and answers admin requests from loopback only (set GAMEDAY_ADMIN_TOKEN)"})
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		scheme, cred, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		got := sha256.Sum256([]byte(strings.TrimSpace(cred)))
		if subtle.ConstantTimeCompare(got[:], want[:]) != 1 || !strings.EqualFold(scheme, "Bearer") {
			w.Header().Set("WWW-Authenticate", `Bearer realm="gameday admin"`)
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "admin API: missing or wrong token (Authorization: Bearer <the checkout's GAMEDAY_ADMIN_TOKEN>)"})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// fromLoopback reports whether the request's peer is on loopback.
func fromLoopback(r *http.Request) bool {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	return err == nil && ap.Addr().Unmap().IsLoopback()
}

// BreakerView is one dependency's breaker as GET /admin/breakers shows it.
type BreakerView struct {
	State       breakers.State        `json:"state"`
	InFlight    int                   `json:"in_flight"`
	Transitions []breakers.Transition `json:"transitions"`
	// TransitionCount includes transitions dropped from the kept history.
	TransitionCount uint64 `json:"transition_count"`
}

// Breakers returns every dependency's breaker by name.
func (s *Server) Breakers() map[string]BreakerView {
	out := make(map[string]BreakerView, len(s.guards))
	for _, g := range s.guards {
		out[g.Name()] = BreakerView{State: g.State(), InFlight: g.InFlight(), Transitions: g.Transitions(), TransitionCount: g.TransitionCount()}
	}
	return out
}

func (s *Server) handleBreakers(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"at": time.Now().UTC(), "breakers": s.Breakers()})
}

// handleLedger answers the books of one SKU (?sku=) or of every SKU. It
// reads Redis directly, not through the inventory breaker: the runner
// reconciles after the faults are gone, and must not be refused by a
// breaker still open from the drill.
func (s *Server) handleLedger(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	q := r.URL.Query()
	// summary=true leaves out the orders and voids: the counts and
	// settled, at a cost that does not grow with the sale.
	read := s.inv.Ledger
	if v := q.Get("summary"); v != "" {
		summary, err := strconv.ParseBool(v)
		if err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": fmt.Sprintf("summary=%q: want true or false", v)})
			return
		}
		if summary {
			read = s.inv.LedgerSummary
		}
	}
	skus := q["sku"]
	if len(skus) == 0 {
		var err error
		if skus, err = s.inv.SKUs(ctx); err != nil {
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": err.Error()})
			return
		}
	}
	ledgers := make([]Ledger, 0, len(skus))
	for _, sku := range skus {
		l, err := read(ctx, sku)
		if err != nil {
			code := http.StatusServiceUnavailable
			if errors.Is(err, ErrUnknownSKU) {
				code = http.StatusNotFound
			}
			writeJSON(w, code, map[string]string{"error": err.Error()})
			return
		}
		ledgers = append(ledgers, l)
	}
	sortLedgers(ledgers)
	writeJSON(w, http.StatusOK, map[string]any{"ledgers": ledgers})
}

// StockRequest is the body of PUT /admin/stock.
type StockRequest struct {
	SKU   string `json:"sku"`
	Units int64  `json:"units"`
}

func (s *Server) handleStock(w http.ResponseWriter, r *http.Request) {
	var req StockRequest
	if err := decodeJSON(r, &req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	if req.SKU == "" || req.Units < 0 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "sku: required; units: must not be negative"})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	if err := s.inv.SetStock(ctx, req.SKU, req.Units); err != nil {
		// 409 while money work is open: ask again once it settled.
		code := http.StatusServiceUnavailable
		if u := (*UnsettledError)(nil); errors.As(err, &u) {
			code = http.StatusConflict
		}
		writeJSON(w, code, map[string]string{"error": err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, req)
}

// MoveRequest asks a checkout to move a SKU's units out of its stock or
// into it: one step of a Pod Mover's move of the SKU's shop
// (docs/pods.md). Move names the move; a step repeated with the same name
// does nothing more.
type MoveRequest struct {
	SKU   string `json:"sku"`
	Move  string `json:"move"`
	Units int64  `json:"units"` // move-in only; the answer's, for move-out
	// Base is the attempt base of the pod the units leave: move-out
	// answers it, move-in numbers the attempts made here above it.
	Base int64 `json:"base"`
}

// decodeMove reads a move step's request, or answers 400 and says so.
func decodeMove(w http.ResponseWriter, r *http.Request) (MoveRequest, bool) {
	var req MoveRequest
	if err := decodeJSON(r, &req); err != nil || req.SKU == "" || req.Move == "" || req.Units < 0 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "want {\"sku\", \"move\"} (move-in: and \"units\" >= 0)"})
		return req, false
	}
	return req, true
}

// moveStep serves one of the four move steps: the request decoded, and
// the step given 5 s.
func moveStep(step func(ctx context.Context, w http.ResponseWriter, req MoveRequest)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		req, ok := decodeMove(w, r)
		if !ok {
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
		defer cancel()
		step(ctx, w, req)
	}
}

// handleMoveOut takes every available unit out: 200 with the units, 409
// with held while leases are held (ask again), 404 for a SKU with no stock.
func (s *Server) handleMoveOut(ctx context.Context, w http.ResponseWriter, req MoveRequest) {
	n, base, err := s.inv.MoveOut(ctx, req.SKU, req.Move)
	var held *HeldError
	switch {
	case errors.Is(err, ErrMoveCancelled):
		writeJSON(w, http.StatusGone, map[string]string{"error": err.Error()})
	case errors.As(err, &held):
		writeJSON(w, http.StatusConflict, map[string]any{"error": err.Error(), "held": held.Held, "awaiting_sweep": held.AwaitingSweep, "pending_voids": held.PendingVoids})
	case errors.Is(err, ErrUnknownSKU):
		writeJSON(w, http.StatusNotFound, map[string]string{"error": err.Error()})
	case err != nil:
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": err.Error()})
	default:
		req.Units, req.Base = n, base
		writeJSON(w, http.StatusOK, req)
	}
}

// handleCancelMoveOut undoes a move-out (the units come back, the SKU
// sells here again), or makes sure a late one never happens: 200 with the
// units given back.
func (s *Server) handleCancelMoveOut(ctx context.Context, w http.ResponseWriter, req MoveRequest) {
	n, err := s.inv.CancelMoveOut(ctx, req.SKU, req.Move)
	if err != nil {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": err.Error()})
		return
	}
	req.Units = n
	writeJSON(w, http.StatusOK, req)
}

// handleMoveIn adds units moved from another pod.
func (s *Server) handleMoveIn(ctx context.Context, w http.ResponseWriter, req MoveRequest) {
	if err := s.inv.MoveIn(ctx, req.SKU, req.Move, req.Units, req.Base); err != nil {
		if errors.Is(err, ErrMoveCancelled) {
			writeJSON(w, http.StatusGone, map[string]string{"error": err.Error()})
			return
		}
		// Redis could not even be reached: the step was never sent, and
		// the mover need not wonder whether it landed.
		var op *net.OpError
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"error": err.Error(), "not_applied": errors.As(err, &op) && op.Op == "dial"})
		return
	}
	writeJSON(w, http.StatusOK, req)
}

// handleCancelMoveIn undoes a move-in, or makes sure a late one never
// lands: 200 with the units taken back, 409 once units of the move were
// sold here.
func (s *Server) handleCancelMoveIn(ctx context.Context, w http.ResponseWriter, req MoveRequest) {
	n, err := s.inv.CancelMoveIn(ctx, req.SKU, req.Move)
	switch {
	case errors.Is(err, ErrMoveSpent):
		writeJSON(w, http.StatusConflict, map[string]string{"error": err.Error()})
	case err != nil:
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": err.Error()})
	default:
		req.Units = n
		writeJSON(w, http.StatusOK, req)
	}
}

func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), time.Second)
	defer cancel()
	if err := s.invRedis.Ping(ctx).Err(); err != nil {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "inventory unavailable", "error": err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}
