// Package podmove moves a shop from one pod to another in the middle of
// its sale, as a Pod Mover does (docs/pods.md): it makes the shop
// read-only at the router, waits for the purchases in flight on the old
// pod to finish, moves the shop's available stock to the new pod, and
// switches the router, or, when a step fails, rolls back: the stock goes
// home and the router with it. Every step is bounded in time, every stock
// step is idempotent (a move id), and the books balance whichever way the
// move ends.
//
// It speaks to the pods through the reference checkout's admin protocol
// (POST /admin/stock/move-out and move-in) and to the router through its
// routing table (internal/routetable) and GET /router/routes.
package podmove

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gameday-dev/gameday/internal/noredirect"
	"github.com/gameday-dev/gameday/internal/redact"
	"github.com/gameday-dev/gameday/internal/routetable"
	"github.com/gameday-dev/gameday/internal/wait"
)

// Pod is one pod's checkout as the mover reaches it: its name, base URL,
// and the headers its admin API wants (a bearer token).
type Pod struct {
	Name   string
	URL    string
	Header http.Header
}

// Move is one move of a shop from one pod to another.
type Move struct {
	// ID names the move; each stock step carries it, so repeating a step
	// does nothing more. Unique per move.
	ID string
	// Shop is the shop moved, SKU what it sells.
	Shop, SKU string
	From, To  Pod
	// Router is the router's base URL: GET /router/routes says which
	// version of the table it routes by.
	Router string
	// Store is the routing table's Redis, Keys its keys.
	Store redis.Cmdable
	Keys  routetable.Keys
	// Drain bounds the wait for the purchases in flight on From to finish
	// (no lease held) once the shop is read-only; default 5s.
	Drain time.Duration
	// Switch bounds the wait for the router to route by a table just
	// written; default 2s.
	Switch time.Duration
	// Transfer bounds the retries of putting the stock in on To (and, on
	// rollback, of each step back); default 10s.
	Transfer time.Duration
	// HTTP sends the admin and router requests; nil: a client with a 6s
	// timeout a request, longer than a checkout takes to answer a stock
	// step (it bounds each to 5s), so that a slow answer is waited for
	// rather than lost. No redirect is followed, whatever this client's
	// policy (package noredirect): a 3xx fails the step it answers.
	HTTP *http.Client
}

// The outcomes of a move.
const (
	Completed  = "completed"   // the shop and its stock are on To
	RolledBack = "rolled_back" // the shop and its stock are back on From
	// Failed: the move could not be completed nor rolled back whole;
	// Result.Err says what is left (units in transit show in the books as
	// lost units, the surest sign).
	Failed = "failed"
)

// Result is what a move did.
type Result struct {
	Outcome string
	// Units is the stock moved out of From.
	Units int64
	// ReadOnly is how long the shop's writes were refused: from the
	// moment the mover began to make it read-only to the moment the router
	// routed by the final table (To, or From after a rollback), or the
	// move gave up.
	ReadOnly time.Duration
	// Began and Ended are when the move began and ended.
	Began, Ended time.Time
	// Steps say what happened, in order.
	Steps []string
	// Err is why the move did not complete; "" when it did.
	Err string
}

func (m *Move) defaults() {
	if m.Drain <= 0 {
		m.Drain = 5 * time.Second
	}
	if m.Switch <= 0 {
		m.Switch = 2 * time.Second
	}
	if m.Transfer <= 0 {
		m.Transfer = 10 * time.Second
	}
	if m.HTTP == nil {
		m.HTTP = noredirect.Client(6 * time.Second)
	} else {
		m.HTTP = noredirect.Refuse(m.HTTP)
	}
}

// Run carries out the move. When ctx ends, the move stops where it is and
// rolls back, with bounds of its own: a drill interrupted in the middle of
// a move must not leave a shop read-only or its stock in transit.
func (m *Move) Run(ctx context.Context) (r Result) {
	m.defaults()
	r.Began = time.Now()
	step := func(format string, args ...any) {
		r.Steps = append(r.Steps, fmt.Sprintf("%s: ", time.Since(r.Began).Round(time.Millisecond))+fmt.Sprintf(format, args...))
	}
	defer func() { r.Ended = time.Now(); r.ReadOnly = r.Ended.Sub(r.Began) }()
	// movedIn: a move-in asked of To may have landed (an answer was lost,
	// or came back not saying it was never applied).
	movedIn := false

	// routedTo: the table may send the shop to To already.
	routedTo := false
	var base int64 // From's attempt base, for To's numbering

	// rollback sends the shop and its stock home, whatever ctx says. An
	// answer the mover did not get may hide a step that was done: each
	// step back is one the checkout does whether or not the step forward
	// happened (and refuses the step forward for ever after).
	rollback := func(why error) Result {
		r.Err = why.Error()
		step("rolling back: %v", why)
		bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), m.Switch*4+m.Transfer*3)
		defer cancel()
		r.Outcome = RolledBack
		fail := func(format string, args ...any) {
			r.Outcome = Failed
			msg := fmt.Sprintf(format, args...)
			r.Err += "; " + msg
			step("%s", msg)
		}
		if routedTo {
			// Stop the shop's writes on To before its stock leaves it.
			if err := m.retry(bg, m.Switch*2, func(c context.Context) error { return m.route(c, routetable.Moving(m.From.Name)) }); err != nil {
				fail("could not stop %s's writes: %v", m.Shop, err)
				return r
			}
		}
		if movedIn {
			// Take back what may have landed on To, and make sure a
			// move-in still on its way never lands. Units of the move
			// sold on To already: the shop follows its stock there.
			spent := false
			err := m.retry(bg, m.Transfer, func(c context.Context) error {
				err := m.cancelIn(c)
				if se := (*StatusError)(nil); errors.As(err, &se) && se.Code == http.StatusConflict {
					spent = true // the checkout refused: units of the move were sold there
					return nil
				}
				return err
			})
			switch {
			case err != nil:
				fail("could not take the stock back from %s, so %s stays read-only: %v", m.To.Name, m.Shop, err)
				return r
			case spent:
				step("units of the move were sold on %s already: %s follows its stock there", m.To.Name, m.Shop)
				if err := m.retry(bg, m.Switch*2, func(c context.Context) error { return m.route(c, m.To.Name) }); err != nil {
					fail("could not route %s to %s: %v", m.Shop, m.To.Name, err)
					return r
				}
				r.Outcome, r.Err = Completed, ""
				step("%s routed to %s: moved", m.Shop, m.To.Name)
				return r
			default:
				step("the move-in on %s cancelled", m.To.Name)
			}
		}
		// The units back on From in one step, or a move-out still on its
		// way refused when it arrives.
		err := m.retry(bg, m.Transfer, func(c context.Context) error {
			n, err := m.cancelOut(c)
			if err == nil {
				r.Units = n
			}
			return err
		})
		if err != nil {
			fail("could not give the stock back to %s (it may be in neither pod): %v", m.From.Name, err)
		} else {
			step("%d units back on %s", r.Units, m.From.Name)
		}
		if err := m.retry(bg, m.Switch*2, func(c context.Context) error { return m.route(c, m.From.Name) }); err != nil {
			fail("the router may still hold %s read-only: %v", m.Shop, err)
		} else {
			step("%s routed to %s again", m.Shop, m.From.Name)
		}
		return r
	}

	step("making %s read-only on %s", m.Shop, m.From.Name)
	if err := m.route(ctx, routetable.Moving(m.From.Name)); err != nil {
		return rollback(fmt.Errorf("make %s read-only: %w", m.Shop, err))
	}
	step("router refuses %s's writes; waiting for its purchases in flight on %s", m.Shop, m.From.Name)
	err := m.retry(ctx, m.Drain, func(c context.Context) error {
		n, b, err := m.moveOut(c)
		r.Units, base = n, b
		return err
	})
	if err != nil {
		return rollback(fmt.Errorf("move the stock out of %s: %w", m.From.Name, err))
	}
	step("%d units out of %s", r.Units, m.From.Name)
	if err := m.retry(ctx, m.Transfer, func(c context.Context) error {
		err := m.moveIn(c, m.To, m.ID, r.Units, base)
		if err != nil && !notApplied(err) {
			movedIn = true
		}
		return err
	}); err != nil {
		return rollback(fmt.Errorf("put the stock in on %s: %w", m.To.Name, err))
	}
	movedIn = true
	step("%d units in on %s", r.Units, m.To.Name)
	routedTo = true
	if err := m.retry(ctx, m.Switch*2, func(c context.Context) error { return m.route(c, m.To.Name) }); err != nil {
		return rollback(fmt.Errorf("route %s to %s: %w", m.Shop, m.To.Name, err))
	}
	r.Outcome = Completed
	step("%s routed to %s: moved", m.Shop, m.To.Name)
	return r
}

// route writes the shop's route and waits until the router routes by it.
func (m *Move) route(ctx context.Context, route string) error {
	wctx, cancel := context.WithTimeout(ctx, m.Switch)
	defer cancel()
	v, err := routetable.SetRoute(wctx, m.Store, m.Keys, m.Shop, route)
	if err != nil {
		return err
	}
	if err := routetable.WaitServed(wctx, m.HTTP, m.Router, func(t *routetable.Table) bool { return t.Version >= v }); err != nil {
		return fmt.Errorf("version %d, within %s: %w", v, m.Switch, err)
	}
	return nil
}

// moveOut takes the shop's available stock out of From, and answers
// From's attempt base.
func (m *Move) moveOut(ctx context.Context) (int64, int64, error) {
	var out moveRequest
	err := m.call(ctx, http.MethodPost, m.From.URL+"/admin/stock/move-out", m.From.Header, moveRequest{SKU: m.SKU, Move: m.ID}, http.StatusOK, &out)
	return out.Units, out.Base, err
}

// cancelOut gives the move's units back to From, or makes sure its
// move-out never happens, and answers the units given back.
func (m *Move) cancelOut(ctx context.Context) (int64, error) {
	var out moveRequest
	err := m.call(ctx, http.MethodPost, m.From.URL+"/admin/stock/move-out/cancel", m.From.Header, moveRequest{SKU: m.SKU, Move: m.ID}, http.StatusOK, &out)
	return out.Units, err
}

// cancelIn undoes the move-in on To, or makes sure a late one never
// lands there.
func (m *Move) cancelIn(ctx context.Context) error {
	return m.call(ctx, http.MethodPost, m.To.URL+"/admin/stock/move-in/cancel", m.To.Header, moveRequest{SKU: m.SKU, Move: m.ID}, http.StatusOK, nil)
}

func (m *Move) moveIn(ctx context.Context, pod Pod, id string, units, base int64) error {
	return m.call(ctx, http.MethodPost, pod.URL+"/admin/stock/move-in", pod.Header, moveRequest{SKU: m.SKU, Move: id, Units: units, Base: base}, http.StatusOK, nil)
}

// notApplied reports whether a failed move-in certainly did nothing: the
// checkout could not be reached at all, or said it could not reach its
// store ("not_applied").
func notApplied(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var se *StatusError
	return errors.As(err, &se) && se.Code == http.StatusServiceUnavailable && strings.Contains(se.Body, `"not_applied":true`)
}

// moveRequest is the admin protocol's move step (checkout.MoveRequest).
type moveRequest struct {
	SKU   string `json:"sku"`
	Move  string `json:"move"`
	Units int64  `json:"units"`
	Base  int64  `json:"base"`
}

// retry calls f until it succeeds, for at most within, 50ms apart.
func (m *Move) retry(ctx context.Context, within time.Duration, f func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	var last error
	for {
		err := f(ctx)
		if err == nil {
			return nil
		}
		last = wait.Last(ctx, last, err)
		if !wait.For(ctx, 50*time.Millisecond) {
			return last
		}
	}
}

// call sends one request and decodes a JSON answer of status want into
// out (when not nil). Another status is an error carrying the answer.
func (m *Move) call(ctx context.Context, method, url string, h http.Header, body any, want int, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return err
	}
	for k, v := range h {
		req.Header[k] = v
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := m.HTTP.Do(req)
	if err != nil {
		return redact.Error(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != want {
		return &StatusError{URL: url, Code: resp.StatusCode, Body: string(bytes.TrimSpace(b)), Location: resp.Header.Get("Location")}
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("%s: %w", url, err)
		}
	}
	return nil
}

// StatusError is an answer of a status the mover did not want. A
// redirect is one (package noredirect): its Location is not followed.
type StatusError struct {
	URL      string
	Code     int
	Body     string
	Location string
}

func (e *StatusError) Error() string {
	if e.Location != "" && e.Code/100 == 3 {
		return fmt.Sprintf("%s answered %d, a redirect (to %s), which gameday does not follow", redact.URL(e.URL), e.Code, redact.URL(e.Location))
	}
	if len(e.Body) > 200 {
		return fmt.Sprintf("%s answered %d: %s...", redact.URL(e.URL), e.Code, e.Body[:200])
	}
	return fmt.Sprintf("%s answered %d: %s", redact.URL(e.URL), e.Code, e.Body)
}
