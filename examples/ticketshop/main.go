// Command ticketshop is a small ticket shop that is not gameday's shape,
// for gameday to drill through examples/ticketshop/gameday.yaml: a purchase
// takes two calls (hold a ticket, then pay for the hold), answers use their
// own codes and a JSON error object, and the payment gateway is guarded by
// a circuit breaker (sony/gobreaker) that it does not expose. Tickets,
// holds and sales live in Redis.
//
//	POST /v1/holds {"event": E, "buyer": B, "ref": R}
//	  201 {"hold": {"id": R}}            (again: the same hold)
//	  409 {"error": {"code": "sold_out"}}
//	  503 {"error": {"code": "busy"}}     Retry-After: 1
//	POST /v1/holds/{id}/purchase {"event": E, "buyer": B}    (pays with key "R/GEN")
//	  201 {"ticket": {"id": "T-R", "charge": C, "price_cents": 4500}}   (again: the same ticket)
//	  422 {"error": {"code": "payment_declined"}}
//	  409 {"error": {"code": "sold_out"}}   (a hold given back, none left to hold again)
//	  503 {"error": {"code": "payments_unavailable"}}  Retry-After: 1   (the hold given back)
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/sony/gobreaker/v2"
)

var (
	// KEYS: left, holds, gens, held; ARGV: now (ms), ref. A ticket
	// taken for ref with no look at a hold ref may already have: the
	// -unkeyed-hold-retry bug's retry.
	takeScript = redis.NewScript(`
if tonumber(redis.call('GET', KEYS[1]) or '0') <= 0 then return 0 end
redis.call('DECR', KEYS[1])
local g = redis.call('HINCRBY', KEYS[3], ARGV[2], 1)
redis.call('HSET', KEYS[2], ARGV[2], g)
redis.call('ZADD', KEYS[4], ARGV[1], ARGV[2])
return g`)
	// KEYS: left, holds, gens, held; ARGV: ref, now (ms). The hold's
	// generation (held, or already held), 0 sold out; held keeps when
	// each hold was made. A hold pays with the key "REF/GEN"; a
	// payment given up on is voided and the hold given back, and a retry
	// holds again with a new generation, so that it does not meet that
	// void.
	holdScript = redis.NewScript(`
local g = redis.call('HGET', KEYS[2], ARGV[1])
if g then return tonumber(g) end
if tonumber(redis.call('GET', KEYS[1]) or '0') <= 0 then return 0 end
redis.call('DECR', KEYS[1])
g = redis.call('HINCRBY', KEYS[3], ARGV[1], 1)
redis.call('HSET', KEYS[2], ARGV[1], g)
redis.call('ZADD', KEYS[4], ARGV[2], ARGV[1])
return g`)
	// KEYS: holds, sold, held; ARGV: ref, ticket json, trust. 1 sold, 0
	// no such hold (with trust "1", sold all the same: the -hold-ttl bug).
	sellScript = redis.NewScript(`
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then return 1 end
redis.call('ZREM', KEYS[3], ARGV[1])
if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 and ARGV[3] ~= '1' then return 0 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return 1`)
	// KEYS: holds, gens; ARGV: ref. A hold kept (-give-back=false), if it
	// is still held, pays with a new key from now.
	keepScript = redis.NewScript(`
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], redis.call('HINCRBY', KEYS[2], ARGV[1], 1))
return 1`)
	// KEYS: left, holds, held; ARGV: ref.
	releaseScript = redis.NewScript(`
redis.call('ZREM', KEYS[3], ARGV[1])
if redis.call('HDEL', KEYS[2], ARGV[1]) == 1 then redis.call('INCR', KEYS[1]) end
return 1`)
	// KEYS: left, holds, held; ARGV: made before (ms). Gives back every
	// hold made before then; how many.
	expireScript = redis.NewScript(`
local old = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', '(' .. ARGV[1])
for _, ref in ipairs(old) do
  redis.call('ZREM', KEYS[3], ref)
  if redis.call('HDEL', KEYS[2], ref) == 1 then redis.call('INCR', KEYS[1]) end
end
return #old`)
)

// priceCents is what a ticket costs: the sale's record of it and what the
// gateway is asked for. -price-cents sets it, as a deploy with the wrong
// price would (the sale's price is 4500, which the books hold it to).
var priceCents = 4500

type shop struct {
	breaker  bool
	giveBack bool
	freshKey bool
	// unkeyedHold: a hold whose answer never came is taken again at once,
	// without looking for the one the first call may have made.
	unkeyedHold bool
	// voidOnSellError: a sale whose record's answer never came is
	// undone: the charge voided, the hold given back.
	voidOnSellError bool
	// holdTTL > 0: holds older than it go back on sale (expire).
	holdTTL time.Duration
	events  sync.Map // the events held, for expire
	rdb     *redis.Client
	gateway string
	hc      *http.Client
	cb      *gobreaker.CircuitBreaker[charge]
}

type charge struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

var errDeclined = errors.New("declined")

func main() {
	listen := flag.String("listen", "127.0.0.1:8095", "address to serve on")
	redisAddr := flag.String("redis", "127.0.0.1:6379", "Redis host:port (the proxy's)")
	gateway := flag.String("gateway", "http://127.0.0.1:8081", "the payment gateway's base URL (the proxy's)")
	withBreaker := flag.Bool("breaker", true, "guard the gateway with a circuit breaker (false: every buyer waits for the gateway's timeout)")
	flag.IntVar(&priceCents, "price-cents", priceCents, "what a ticket costs, recorded on the ticket and charged (the sale's is 4500: another is the bug of a wrong price deployed)")
	giveBack := flag.Bool("give-back", true, "give a hold back when its payment fails or is refused (false: the bug of a hold kept for a retry that never comes)")
	freshKey := flag.Bool("fresh-key-retry", false, "send a charge whose answer never came again at once, with a new idempotency key (the bug of a key made per call, not per order: the first charge stands too)")
	payTimeout := flag.Duration("pay-timeout", time.Second, "how long a charge may take before the shop gives up on it (voids it, gives the hold back)")
	unkeyedHold := flag.Bool("unkeyed-hold-retry", false, "take a hold whose answer never came again at once, without its key (the bug of a reservation retried without its idempotency key: when the first call's hold was made and only its answer lost, a second ticket is taken and the first is lost for good)")
	voidOnSellError := flag.Bool("void-on-sell-error", false, "void the charge and give the hold back when recording the sale fails (the bug of compensating for a write whose answer was lost: the ticket stays sold, its money is given back)")
	holdTTL := flag.Duration("hold-ttl", 0, "give a hold back on sale once it is this old, and sell a ticket whose charge went through whether or not its hold still stands (the bug of a hold that expires while its charge is in flight: the ticket is sold to its buyer and to the next; 0: holds do not expire)")
	flag.Parse()
	s := &shop{
		breaker: *withBreaker, giveBack: *giveBack, freshKey: *freshKey, holdTTL: *holdTTL,
		unkeyedHold: *unkeyedHold, voidOnSellError: *voidOnSellError,
		rdb:     redis.NewClient(&redis.Options{Addr: *redisAddr, MaxRetries: -1, ContextTimeoutEnabled: true, ReadTimeout: 500 * time.Millisecond, WriteTimeout: 500 * time.Millisecond, DialTimeout: 500 * time.Millisecond}),
		gateway: strings.TrimRight(*gateway, "/"),
		hc:      &http.Client{Timeout: *payTimeout},
	}
	s.cb = gobreaker.NewCircuitBreaker[charge](gobreaker.Settings{
		Name:        "gateway",
		MaxRequests: 1,
		Timeout:     2 * time.Second, // open for 2s, then one probe
		ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= 3 },
		IsSuccessful: func(err error) bool {
			return err == nil || errors.Is(err, errDeclined) || errors.Is(err, context.Canceled)
		},
	})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/events/{event}", s.event)
	mux.HandleFunc("POST /v1/holds", s.hold)
	mux.HandleFunc("POST /v1/holds/{id}/purchase", s.purchase)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if s.holdTTL > 0 {
		go s.expire(ctx)
	}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	log.Printf("ticketshop listening on %s", ln.Addr())
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}

type request struct {
	Event string `json:"event"`
	Buyer string `json:"buyer"`
	Ref   string `json:"ref"`
}

func fail(w http.ResponseWriter, code int, what string) {
	if code == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	reply(w, code, map[string]any{"error": map[string]string{"code": what}})
}

func reply(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func read(r *http.Request) (request, bool) {
	var req request
	err := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 16<<10)).Decode(&req)
	return req, err == nil && req.Event != "" && req.Buyer != ""
}

// event is the event's page: the tickets left, read from Redis.
func (s *shop) event(w http.ResponseWriter, r *http.Request) {
	left, err := s.rdb.Get(r.Context(), "left:"+r.PathValue("event")).Int()
	switch {
	case errors.Is(err, redis.Nil):
		http.Error(w, "no such event", http.StatusNotFound)
	case err != nil:
		http.Error(w, "try again", http.StatusServiceUnavailable)
	default:
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, "{\"event\": %q, \"left\": %d}\n", r.PathValue("event"), left)
	}
}

func (s *shop) hold(w http.ResponseWriter, r *http.Request) {
	req, ok := read(r)
	if !ok || req.Ref == "" {
		fail(w, http.StatusBadRequest, "bad_request")
		return
	}
	n, err := s.holdTicket(r.Context(), req.Event, req.Ref)
	switch {
	case err != nil:
		fail(w, http.StatusServiceUnavailable, "busy")
	case n == 0:
		fail(w, http.StatusConflict, "sold_out")
	default:
		reply(w, http.StatusCreated, map[string]any{"hold": map[string]string{"id": req.Ref}})
	}
}

func (s *shop) purchase(w http.ResponseWriter, r *http.Request) {
	req, ok := read(r)
	ref := r.PathValue("id")
	if !ok || ref == "" {
		fail(w, http.StatusBadRequest, "bad_request")
		return
	}
	ctx := r.Context()
	sold := "sold:" + req.Event
	if t, err := s.rdb.HGet(ctx, sold, ref).Result(); err == nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"ticket":%s}`+"\n", t)
		return
	}
	// The hold, or a new one where it was given back (a payment that
	// failed, or a breaker that refused it, gives the ticket back on
	// sale): a retry holds again if a ticket is left.
	g, err := s.holdTicket(ctx, req.Event, ref)
	if err != nil {
		fail(w, http.StatusServiceUnavailable, "busy")
		return
	}
	if g == 0 {
		fail(w, http.StatusConflict, "sold_out")
		return
	}
	key := fmt.Sprintf("%s/%d", ref, g)
	charged := func(key string) (charge, error) {
		pay := func() (charge, error) { return s.pay(ctx, key, req.Buyer, req.Event) }
		if s.breaker {
			return s.cb.Execute(pay)
		}
		return pay()
	}
	ch, err := charged(key)
	if s.freshKey && err != nil && !errors.Is(err, errDeclined) && !errors.Is(err, gobreaker.ErrOpenState) && !errors.Is(err, gobreaker.ErrTooManyRequests) {
		// The bug: "it failed, so charge again", under a key made for
		// this call. The first charge, if it went through, stands.
		key = fmt.Sprintf("%s/%d", ref, time.Now().UnixNano())
		ch, err = charged(key)
	}
	switch {
	case errors.Is(err, errDeclined):
		_ = releaseScript.Run(context.WithoutCancel(ctx), s.rdb, []string{"left:" + req.Event, "holds:" + req.Event, "held:" + req.Event}, ref).Err()
		fail(w, http.StatusUnprocessableEntity, "payment_declined")
		return
	case errors.Is(err, gobreaker.ErrOpenState), errors.Is(err, gobreaker.ErrTooManyRequests):
		// Refused by the breaker: nothing was sent. The ticket goes back
		// on sale: a shopper who does not retry would otherwise hold it
		// for good. A retry holds again, if one is left.
		s.giveBackHold(ctx, req.Event, ref)
		fail(w, http.StatusServiceUnavailable, "payments_unavailable")
		return
	case err != nil:
		// The gateway failed or did not answer in time: the charge may
		// have gone through. Void it, and give the ticket back; a retry
		// holds again, with a new generation, and pays with a new key.
		go s.void(key)
		s.giveBackHold(ctx, req.Event, ref)
		fail(w, http.StatusServiceUnavailable, "payments_unavailable")
		return
	}
	ticket, _ := json.Marshal(map[string]any{"id": "T-" + ref, "charge": ch.ID, "price_cents": priceCents})
	trust := "0"
	if s.holdTTL > 0 {
		// The bug: the charge went through, so the ticket is sold,
		// though its hold may have expired while the charge was in
		// flight and the ticket gone back on sale to the next buyer.
		trust = "1"
	}
	n, err := sellScript.Run(context.WithoutCancel(ctx), s.rdb, []string{"holds:" + req.Event, sold, "held:" + req.Event}, ref, string(ticket), trust).Int()
	if err != nil {
		if s.voidOnSellError {
			// The bug: "the sale failed, so undo the payment". The
			// record may have been written and only its answer lost:
			// the ticket stays sold, its charge voided.
			go s.void(key)
			s.giveBackHold(ctx, req.Event, ref)
		}
		// Else the charge stands and a retry finds the ticket sold, or
		// the hold still there and pays again under the same key.
		fail(w, http.StatusServiceUnavailable, "busy")
		return
	}
	if n == 0 {
		// Its hold is gone: the ticket is not this buyer's to sell.
		go s.void(key)
		fail(w, http.StatusConflict, "sold_out")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	fmt.Fprintf(w, `{"ticket":%s}`+"\n", ticket)
}

// holdTicket holds a ticket of event for ref, or finds the hold ref has:
// the hold's generation, 0 when none is left.
func (s *shop) holdTicket(ctx context.Context, event, ref string) (int, error) {
	s.events.Store(event, true)
	keys := []string{"left:" + event, "holds:" + event, "gens:" + event, "held:" + event}
	g, err := holdScript.Run(ctx, s.rdb, keys, ref, time.Now().UnixMilli()).Int()
	if err != nil && s.unkeyedHold && ctx.Err() == nil {
		// The bug: "it failed, so take one again", with no look at the
		// hold the first call may have made.
		return takeScript.Run(ctx, s.rdb, keys, time.Now().UnixMilli(), ref).Int()
	}
	return g, err
}

// expire gives back the holds older than -hold-ttl, a few times a TTL,
// until ctx ends.
func (s *shop) expire(ctx context.Context) {
	tick := time.NewTicker(max(s.holdTTL/4, 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		before := time.Now().Add(-s.holdTTL).UnixMilli()
		s.events.Range(func(k, _ any) bool {
			e := k.(string)
			_ = expireScript.Run(ctx, s.rdb, []string{"left:" + e, "holds:" + e, "held:" + e}, before).Err()
			return true
		})
	}
}

// giveBackHold puts a hold's ticket back on sale after its payment failed
// or was refused; with -give-back=false it keeps the hold (and moves it to
// a new key, so that a retry does not meet the void), and a shopper who
// does not retry strands the ticket.
func (s *shop) giveBackHold(ctx context.Context, event, ref string) {
	ctx = context.WithoutCancel(ctx)
	if !s.giveBack {
		_ = keepScript.Run(ctx, s.rdb, []string{"holds:" + event, "gens:" + event}, ref).Err()
		return
	}
	_ = releaseScript.Run(ctx, s.rdb, []string{"left:" + event, "holds:" + event, "held:" + event}, ref).Err()
}

// void gives back a charge whose outcome is unknown, until the gateway
// confirms (a few tries, a few seconds apart).
func (s *shop) void(key string) {
	body, _ := json.Marshal(map[string]string{"key": key})
	for try := 0; try < 10; try++ {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.gateway+"/charges/void", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := s.hc.Do(req)
		cancel()
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode/100 == 2 {
				return
			}
		}
		time.Sleep(time.Second)
	}
	log.Printf("could not void %s", key)
}

func (s *shop) pay(ctx context.Context, key, buyer, event string) (charge, error) {
	body, _ := json.Marshal(map[string]any{"key": key, "amount_cents": priceCents, "shopper": buyer, "sku": event})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.gateway+"/charges", bytes.NewReader(body))
	if err != nil {
		return charge{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.hc.Do(req)
	if err != nil {
		return charge{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return charge{}, fmt.Errorf("gateway answered %s", resp.Status)
	}
	var ch charge
	if err := json.NewDecoder(resp.Body).Decode(&ch); err != nil {
		return charge{}, err
	}
	if ch.Status != "approved" {
		return ch, errDeclined
	}
	return ch, nil
}
