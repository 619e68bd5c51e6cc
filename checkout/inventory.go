package checkout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Mode is how the checkout takes stock.
type Mode string

const (
	// ModeReserve reserves one unit atomically before payment, claims it on
	// success and releases it otherwise, under a lease that expires.
	ModeReserve Mode = "reserve"
	// ModeNaive reads the stock, pays, then decrements. It oversells under
	// concurrency, on purpose: drills use it to prove the oversell check fires.
	ModeNaive Mode = "naive"
)

// Order is a sold unit as the ledger records it.
type Order struct {
	CheckoutID string `json:"checkout_id"`
	Shopper    string `json:"shopper"`
	SKU        string `json:"sku"`
	// ChargeKey is the idempotency key the charge was made with:
	// "<checkout id>/<attempt>", and ChargeID the provider's id for it.
	ChargeKey   string    `json:"charge_key"`
	ChargeID    string    `json:"charge_id"`
	AmountCents int64     `json:"amount_cents"`
	At          time.Time `json:"at"`
	// Reclaimed is true when the lease had expired before payment
	// succeeded and the unit was taken again from the available stock.
	Reclaimed bool `json:"reclaimed,omitempty"`
}

// Void is a charge the checkout gives back: its outcome was unknown, or the
// unit it paid for was gone. It is recorded in Redis before the provider is
// asked, so the void survives the checkout dying; Pending is true until the
// provider has confirmed it.
type Void struct {
	CheckoutID string    `json:"checkout_id"`
	ChargeKey  string    `json:"charge_key"`
	Reason     string    `json:"reason"`
	At         time.Time `json:"at"`
	Pending    bool      `json:"pending"`
}

// Ledger is the stock of one SKU. In reserve mode Available + Reserved +
// Sold + MovedOut = Initial + MovedIn at every instant; in naive mode
// Available goes negative when it oversells.
type Ledger struct {
	SKU       string `json:"sku"`
	Initial   int64  `json:"initial"`
	Available int64  `json:"available"`
	Reserved  int64  `json:"reserved"`
	Sold      int64  `json:"sold"`
	Expired   int64  `json:"expired_leases"`
	Reclaimed int64  `json:"reclaimed"`
	// MovedOut and MovedIn count the units a Pod Mover took out of this
	// checkout's stock and put into it (MoveOut, MoveIn).
	MovedOut int64 `json:"moved_out"`
	MovedIn  int64 `json:"moved_in"`
	// AwaitingSweep counts checkout ids whose lease expired unclaimed and
	// whose charge the sweeper has not yet decided on (it waits for the
	// late-claim grace). The books are settled when it, Reserved and the
	// pending voids are all zero.
	AwaitingSweep int64 `json:"awaiting_sweep"`
	// PendingVoids counts the recorded voids the provider has not yet
	// confirmed.
	PendingVoids int64 `json:"pending_voids"`
	// Orders and Voids are every order and every recorded void; nil (and
	// left out of the JSON) in a summary (LedgerSummary), empty but
	// present in a full ledger that has none.
	Orders []Order `json:"orders,omitzero"`
	Voids  []Void  `json:"voids,omitzero"`
	// Settled: nothing is reserved, every expired lease has been decided by
	// the sweeper and no void is pending: the books are final. A runner
	// waits for it before it reconciles.
	Settled bool `json:"settled"`
}

// settled reports whether the books are final: nothing reserved, every
// expired lease decided by the sweeper, no void pending.
func (l Ledger) settled() bool {
	return l.Reserved == 0 && l.AwaitingSweep == 0 && l.PendingVoids == 0
}

// Balanced reports whether no unit was created or lost.
func (l Ledger) Balanced() bool {
	return l.Available+l.Reserved+l.Sold+l.MovedOut == l.Initial+l.MovedIn
}

// Oversold is how many units were sold beyond the stock this checkout had:
// its initial stock and the units moved in, less those moved out.
func (l Ledger) Oversold() int64 { return max(0, l.Sold-(l.Initial+l.MovedIn-l.MovedOut)) }

// Reservation results.
const (
	resReserved = "reserved"
	resSold     = "sold" // this checkout id already bought: replay its order
	resSoldOut  = "sold_out"
	resUnknown  = "unknown_sku"
	resClaimed  = "claimed"
	resReclaim  = "reclaimed"
	resLost     = "lost"
	// resMoved: the SKU's shop was moved to another pod (MoveOut); a
	// purchase that reaches this pod late is told to come back, and the
	// router then sends it to the new pod.
	resMoved = "moved"
)

// ErrUnknownSKU is returned for a SKU with no stock set.
var ErrUnknownSKU = errors.New("unknown sku")

// Inventory keeps stock, leases, orders and voids in Redis. Every write is
// one Lua script keyed by checkout id, so it is atomic and repeating it is
// harmless. Lease times come from the Redis server's clock, so checkouts on
// machines whose clocks disagree still agree on when a lease expired.
//
// Each reservation of a checkout id is an attempt with its own number; the
// charge for it carries the key "<checkout id>/<attempt>". A new attempt
// after an old one's lease was lost marks the old attempt's charge for
// voiding, so a retry can never be charged twice.
type Inventory struct {
	rdb *redis.Client
}

// NewInventory wraps a Redis client.
func NewInventory(rdb *redis.Client) *Inventory { return &Inventory{rdb: rdb} }

// The keys of one SKU, in the order every script receives them.
func keys(sku string) []string {
	p := "gameday:inv:{" + sku + "}:"
	return []string{
		p + "stock",   // 1 hash: initial, available, sold, expired, reclaimed
		p + "leases",  // 2 zset: checkout id -> lease expiry (ms)
		p + "orders",  // 3 hash: checkout id -> order json
		p + "voids",   // 4 hash: charge key -> void json
		p + "pending", // 5 zset: charge key -> when to ask the provider (ms)
		p + "expired", // 6 zset: checkout id -> when its lease was reaped (ms)
		p + "gens",    // 7 hash: checkout id -> attempt number
		p + "okeys",   // 8 hash: checkout id -> the charge key of its order
	}
}

const skuSet = "gameday:skus"

// luaHead is shared by the scripts: the server's time in milliseconds, a
// helper that records a void, and the reaping of expired leases (their
// units go back to the stock; their ids wait in "expired" until the
// sweeper decides whether their charge must be voided).
const luaHead = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function markvoid(id, key, reason)
  local v = '{"checkout_id":"' .. id .. '","charge_key":"' .. key .. '","reason":"' .. reason .. '","at_ms":' .. now .. '}'
  if redis.call('HSETNX', KEYS[4], key, v) == 1 then
    redis.call('ZADD', KEYS[5], now, key)
  end
end
local function reap()
  local ids = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, 1000)
  for _, id in ipairs(ids) do
    redis.call('ZREM', KEYS[2], id)
    redis.call('ZADD', KEYS[6], now, id)
  end
  if #ids > 0 then
    redis.call('HINCRBY', KEYS[1], 'available', #ids)
    redis.call('HINCRBY', KEYS[1], 'expired', #ids)
  end
end
`

// reserveScript: ARGV checkout id, lease ms.
var reserveScript = redis.NewScript(luaHead + `
local id = ARGV[1]
if redis.call('HEXISTS', KEYS[1], 'initial') == 0 then return {'unknown_sku'} end
local order = redis.call('HGET', KEYS[3], id)
if order then return {'sold', order} end
reap()
if redis.call('ZSCORE', KEYS[2], id) then
  redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), id)
  return {'reserved', redis.call('HGET', KEYS[7], id), 'refreshed'}
end
if redis.call('HGET', KEYS[1], 'moved_away') == '1' then return {'moved'} end
if tonumber(redis.call('HGET', KEYS[1], 'available')) <= 0 then return {'sold_out'} end
local old = redis.call('HGET', KEYS[7], id)
if old then markvoid(id, id .. '/' .. old, 'superseded by a new attempt') end
redis.call('ZREM', KEYS[6], id)
redis.call('HINCRBY', KEYS[1], 'available', -1)
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), id)
-- A SKU moved in from another pod numbers its attempts above a base no
-- pod the shop lived on has used, so that no charge key made there is
-- ever made again.
local base = tonumber(redis.call('HGET', KEYS[1], 'gen_base') or '0')
if base > tonumber(old or '0') then redis.call('HSET', KEYS[7], id, base) end
return {'reserved', tostring(redis.call('HINCRBY', KEYS[7], id, 1))}
`)

// claimScript: ARGV checkout id, charge key, order json.
var claimScript = redis.NewScript(luaHead + `
local id, key = ARGV[1], ARGV[2]
local function unlease()
  if redis.call('ZREM', KEYS[2], id) == 1 then redis.call('HINCRBY', KEYS[1], 'available', 1) end
end
if redis.call('HEXISTS', KEYS[4], key) == 1 then unlease() return {'lost'} end
local order = redis.call('HGET', KEYS[3], id)
if order then return {'sold', order} end
local function sell()
  redis.call('HINCRBY', KEYS[1], 'sold', 1)
  redis.call('HSET', KEYS[3], id, ARGV[3])
  redis.call('HSET', KEYS[8], id, key)
  redis.call('ZREM', KEYS[6], id)
end
if redis.call('ZREM', KEYS[2], id) == 1 then
  sell()
  return {'claimed', ARGV[3]}
end
reap()
if tonumber(redis.call('HGET', KEYS[1], 'available')) > 0 then
  redis.call('HINCRBY', KEYS[1], 'available', -1)
  redis.call('HINCRBY', KEYS[1], 'reclaimed', 1)
  sell()
  return {'reclaimed', ARGV[3]}
end
markvoid(id, key, 'lease expired and sold out')
return {'lost'}
`)

// abandonScript: ARGV checkout id, charge key, reason, release (0|1).
// Unless the order was made with this charge key, it marks the charge for
// voiding (after which no claim with that key can succeed) and, with
// release, gives the unit back.
var abandonScript = redis.NewScript(luaHead + `
local id, key = ARGV[1], ARGV[2]
if redis.call('HGET', KEYS[8], id) == key then return 0 end
markvoid(id, key, ARGV[3])
if ARGV[4] == '1' and redis.call('ZREM', KEYS[2], id) == 1 then
  redis.call('HINCRBY', KEYS[1], 'available', 1)
end
return 1
`)

// releaseScript: ARGV checkout id, settle (0|1). With settle the id waits
// in "expired" for the sweeper, as a lease that expired does: its
// attempt's charge, if one was made, is voided after the grace unless an
// order was made with it.
var releaseScript = redis.NewScript(luaHead + `
if redis.call('ZREM', KEYS[2], ARGV[1]) == 1 then
  redis.call('HINCRBY', KEYS[1], 'available', 1)
  if ARGV[2] == '1' then redis.call('ZADD', KEYS[6], now, ARGV[1]) end
  return 1
end
return 0
`)

// sweepScript: ARGV grace ms, limit. Ids whose lease expired more than
// grace ago without an order get their attempt's charge marked for
// voiding: the checkout that held the lease died or gave up. Returns the
// charge keys due to be voided at the provider.
var sweepScript = redis.NewScript(luaHead + `
reap()
local ids = redis.call('ZRANGEBYSCORE', KEYS[6], '-inf', now - tonumber(ARGV[1]), 'LIMIT', 0, tonumber(ARGV[2]))
for _, id in ipairs(ids) do
  redis.call('ZREM', KEYS[6], id)
  local gen = redis.call('HGET', KEYS[7], id)
  if gen and redis.call('HEXISTS', KEYS[3], id) == 0 then
    markvoid(id, id .. '/' .. gen, 'lease expired unclaimed')
  end
end
return redis.call('ZRANGEBYSCORE', KEYS[5], '-inf', now, 'LIMIT', 0, tonumber(ARGV[2]))
`)

// voidedScript: ARGV charge key, retry ms. With retry 0 the void is done;
// otherwise it is asked again after retry ms.
var voidedScript = redis.NewScript(luaHead + `
if tonumber(ARGV[2]) == 0 then return redis.call('ZREM', KEYS[5], ARGV[1]) end
return redis.call('ZADD', KEYS[5], 'XX', now + tonumber(ARGV[2]), ARGV[1])
`)

// reapScript returns the counters after reaping.
var reapScript = redis.NewScript(luaHead + `
reap()
return {redis.call('HGET', KEYS[1], 'initial') or false,
        redis.call('HGET', KEYS[1], 'available') or false,
        redis.call('ZCARD', KEYS[2]),
        redis.call('HGET', KEYS[1], 'sold') or false,
        redis.call('HGET', KEYS[1], 'expired') or false,
        redis.call('HGET', KEYS[1], 'reclaimed') or false,
        redis.call('ZCARD', KEYS[6]),
        redis.call('HGET', KEYS[1], 'moved_out') or false,
        redis.call('HGET', KEYS[1], 'moved_in') or false}
`)

// moveOutScript: ARGV move id. It takes every available unit out of the
// SKU's stock for a Pod Mover, once no lease is held (a purchase in
// flight could still claim a unit), and records the move, so that asking
// again for the same move gives the same units and takes nothing more.
var moveOutScript = redis.NewScript(luaHead + `
local done = redis.call('HGET', KEYS[1], 'move-out:' .. ARGV[1])
local base = redis.call('HGET', KEYS[1], 'gen_base') or '0'
if done == 'cancelled' then return {'cancelled'} end
if done then return {'moved', done, base} end
if redis.call('HEXISTS', KEYS[1], 'available') == 0 then return {'unknown_sku'} end
reap()
local held, awaiting, voids = redis.call('ZCARD', KEYS[2]), redis.call('ZCARD', KEYS[6]), redis.call('ZCARD', KEYS[5])
if held + awaiting + voids > 0 then return {'held', tostring(held), tostring(awaiting), tostring(voids)} end
local n = tonumber(redis.call('HGET', KEYS[1], 'available'))
if n < 0 then n = 0 end
redis.call('HINCRBY', KEYS[1], 'available', -n)
redis.call('HINCRBY', KEYS[1], 'moved_out', n)
redis.call('HSET', KEYS[1], 'move-out:' .. ARGV[1], n, 'moved_away', '1')
return {'moved', tostring(n), base}
`)

// cancelMoveOutScript: ARGV move id. It undoes a move-out: the units it
// took go back, and the SKU sells here again; a move-out not done yet is
// marked cancelled, so that one still on its way is refused when it
// arrives. Once per move id.
var cancelMoveOutScript = redis.NewScript(luaHead + `
local f = 'move-out:' .. ARGV[1]
local done = redis.call('HGET', KEYS[1], f)
if done == 'cancelled' then return {'cancelled', '0'} end
redis.call('HSET', KEYS[1], f, 'cancelled')
if not done then return {'cancelled', '0'} end
redis.call('HINCRBY', KEYS[1], 'available', done)
redis.call('HINCRBY', KEYS[1], 'moved_out', -tonumber(done))
redis.call('HDEL', KEYS[1], 'moved_away')
return {'cancelled', done}
`)

// moveInScript: KEYS the SKU's and then the set of SKUs; ARGV move id,
// units, sku, and the attempt base of the pod the units come from. It puts units into the SKU's stock (a SKU new here starts
// with an initial stock of 0: the units came from elsewhere), once per
// move id, and never after the move was cancelled here. Attempts made
// here from now on are numbered from a new base (reserveScript).
var moveInScript = redis.NewScript(luaHead + `
local done = redis.call('HGET', KEYS[1], 'move-in:' .. ARGV[1])
if done == 'cancelled' then return {'cancelled', '0'} end
if done then return {'moved', done} end
if redis.call('HEXISTS', KEYS[1], 'available') == 0 then
  redis.call('HSET', KEYS[1], 'initial', 0, 'available', 0, 'sold', 0, 'expired', 0, 'reclaimed', 0)
  redis.call('SADD', KEYS[9], ARGV[3])
end
redis.call('HINCRBY', KEYS[1], 'available', ARGV[2])
redis.call('HINCRBY', KEYS[1], 'moved_in', ARGV[2])
local base = math.max(tonumber(redis.call('HGET', KEYS[1], 'gen_base') or '0'), tonumber(ARGV[4] or '0')) + 1000000
redis.call('HSET', KEYS[1], 'gen_base', base)
redis.call('HDEL', KEYS[1], 'moved_away')
redis.call('HSET', KEYS[1], 'move-in:' .. ARGV[1], ARGV[2])
return {'moved', ARGV[2]}
`)

// cancelMoveInScript: ARGV move id. It undoes a move-in whose units are
// all still available here (the shop was never routed here), or, when the
// move-in has not arrived, makes sure it never will: either way the move
// id is marked cancelled. It refuses once units of the move were sold.
var cancelMoveInScript = redis.NewScript(luaHead + `
local f = 'move-in:' .. ARGV[1]
local done = redis.call('HGET', KEYS[1], f)
if done == 'cancelled' then return {'cancelled', '0'} end
if not done then redis.call('HSET', KEYS[1], f, 'cancelled') return {'cancelled', '0'} end
reap()
local n = tonumber(done)
if tonumber(redis.call('HGET', KEYS[1], 'available')) < n or redis.call('ZCARD', KEYS[2]) > 0 then return {'spent'} end
redis.call('HINCRBY', KEYS[1], 'available', -n)
redis.call('HINCRBY', KEYS[1], 'moved_in', -n)
redis.call('HSET', KEYS[1], f, 'cancelled', 'moved_away', '1')
return {'cancelled', done}
`)

// HeldError is MoveOut's refusal while money work is open on the SKU:
// leases held (purchases in flight may still claim a unit), expired leases
// the sweeper has not decided on, or charges waiting to be voided. Those
// belong to this pod's books, and a shopper told "pending" who came back
// on the other pod must not meet a half-finished purchase.
type HeldError struct {
	SKU                               string
	Held, AwaitingSweep, PendingVoids int64
}

func (e *HeldError) Error() string {
	return fmt.Sprintf("%s: %d leases held, %d expired leases awaiting the sweeper, %d charges waiting to be voided: move once they are done", e.SKU, e.Held, e.AwaitingSweep, e.PendingVoids)
}

// MoveOut takes every available unit of sku out of this checkout's stock,
// for a Pod Mover that moves the SKU's shop to another pod, and returns
// how many, and the base its attempts are numbered from (MoveIn numbers
// the other pod's above it). It refuses with a *HeldError while leases are held, and with
// ErrUnknownSKU for a SKU with no stock. Repeating a move id returns the
// units of its first success and takes nothing more: a mover that lost
// the answer asks again safely.
func (inv *Inventory) MoveOut(ctx context.Context, sku, moveID string) (units, base int64, err error) {
	v, err := moveOutScript.Run(ctx, inv.rdb, keys(sku), moveID).StringSlice()
	if err != nil {
		return 0, 0, fmt.Errorf("move %s out: %w", sku, err)
	}
	switch {
	case len(v) == 3 && v[0] == "moved":
		units, err = strconv.ParseInt(v[1], 10, 64)
		base, _ = strconv.ParseInt(v[2], 10, 64)
		return units, base, err
	case len(v) == 1 && v[0] == "cancelled":
		return 0, 0, fmt.Errorf("move %s out: %w", sku, ErrMoveCancelled)
	case len(v) == 4 && v[0] == "held":
		e := &HeldError{SKU: sku}
		e.Held, _ = strconv.ParseInt(v[1], 10, 64)
		e.AwaitingSweep, _ = strconv.ParseInt(v[2], 10, 64)
		e.PendingVoids, _ = strconv.ParseInt(v[3], 10, 64)
		return 0, 0, e
	case len(v) == 1 && v[0] == resUnknown:
		return 0, 0, fmt.Errorf("move %s out: %w", sku, ErrUnknownSKU)
	}
	return 0, 0, fmt.Errorf("move %s out: unexpected answer %v", sku, v)
}

// CancelMoveOut undoes the move-out of moveID: the units it took come
// back and the SKU sells here again; a move-out not done yet never will
// be. It returns the units given back. Once per move id.
func (inv *Inventory) CancelMoveOut(ctx context.Context, sku, moveID string) (int64, error) {
	v, err := cancelMoveOutScript.Run(ctx, inv.rdb, keys(sku), moveID).StringSlice()
	if err != nil {
		return 0, fmt.Errorf("cancel move %s out: %w", sku, err)
	}
	if len(v) != 2 || v[0] != "cancelled" {
		return 0, fmt.Errorf("cancel move %s out: unexpected answer %v", sku, v)
	}
	return strconv.ParseInt(v[1], 10, 64)
}

// MoveIn adds units to sku's stock here, moved from another pod (a SKU
// new here starts with an initial stock of 0), once per move id; the
// attempts made here from now on are numbered above both this pod's base
// and base, the other pod's (MoveOut).
func (inv *Inventory) MoveIn(ctx context.Context, sku, moveID string, units, base int64) error {
	if units < 0 {
		return fmt.Errorf("move %s in: %d units", sku, units)
	}
	v, err := moveInScript.Run(ctx, inv.rdb, append(keys(sku), skuSet), moveID, units, sku, base).StringSlice()
	if err != nil {
		return fmt.Errorf("move %s in: %w", sku, err)
	}
	switch {
	case len(v) == 2 && v[0] == "moved":
		return nil
	case len(v) == 2 && v[0] == "cancelled":
		return fmt.Errorf("move %s in: %w", sku, ErrMoveCancelled)
	}
	return fmt.Errorf("move %s in: unexpected answer %v", sku, v)
}

// ErrMoveCancelled: the move was cancelled here; its units never come in.
var ErrMoveCancelled = errors.New("the move was cancelled")

// ErrMoveSpent: a cancel came after units of the move were sold here.
var ErrMoveSpent = errors.New("units of the move were sold here already")

// CancelMoveIn undoes the move-in of moveID, or, when it has not arrived,
// makes sure it never will (a mover that lost the answer to a move-in
// cannot know whether it was done), and returns the units taken back out.
// It refuses with ErrMoveSpent once units of the move were sold here.
func (inv *Inventory) CancelMoveIn(ctx context.Context, sku, moveID string) (int64, error) {
	v, err := cancelMoveInScript.Run(ctx, inv.rdb, keys(sku), moveID).StringSlice()
	if err != nil {
		return 0, fmt.Errorf("cancel move %s in: %w", sku, err)
	}
	switch {
	case len(v) == 2 && v[0] == "cancelled":
		return strconv.ParseInt(v[1], 10, 64)
	case len(v) == 1 && v[0] == "spent":
		return 0, fmt.Errorf("cancel move %s in: %w", sku, ErrMoveSpent)
	}
	return 0, fmt.Errorf("cancel move %s in: unexpected answer %v", sku, v)
}

// setStockScript: KEYS the SKU's and then the set of SKUs; ARGV units,
// init (0|1), sku. It refuses (returning the
// counts) while money work is open on the SKU: leases held, expired leases
// the sweeper has not decided, voids not yet done. Wiping those would
// leave approved charges that nobody ever voids. With init it sets the
// stock only if the SKU has none (its "available" field), and returns
// {'kept'} otherwise. Otherwise it starts the SKU afresh, atomically.
var setStockScript = redis.NewScript(luaHead + `
if ARGV[2] == '1' and redis.call('HEXISTS', KEYS[1], 'available') == 1 then return {'kept'} end
reap()
local held, awaiting, voids = redis.call('ZCARD', KEYS[2]), redis.call('ZCARD', KEYS[6]), redis.call('ZCARD', KEYS[5])
if held + awaiting + voids > 0 then return {'unsettled', held, awaiting, voids} end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8])
redis.call('HSET', KEYS[1], 'initial', ARGV[1], 'available', ARGV[1], 'sold', 0, 'expired', 0, 'reclaimed', 0)
redis.call('SADD', KEYS[9], ARGV[3])
return {'set'}
`)

// UnsettledError is SetStock's refusal: the SKU has money work open that
// starting it afresh would lose.
type UnsettledError struct {
	SKU string
	// Held leases (purchases in flight), expired leases the sweeper has
	// not decided on, and charges waiting to be voided.
	Held, AwaitingSweep, PendingVoids int64
}

func (e *UnsettledError) Error() string {
	return fmt.Sprintf("%s is not settled: %d leases held, %d expired leases awaiting the sweeper, %d charges waiting to be voided; "+
		"starting it afresh would lose them: wait until GET /admin/ledger says settled (the sweeper voids within the lease, the late-claim grace and the provider's answer)",
		e.SKU, e.Held, e.AwaitingSweep, e.PendingVoids)
}

// SetStock starts a SKU afresh with units available, forgetting its
// orders, once its books are settled. While leases are held, expired leases
// await the sweeper, or voids are pending, it changes nothing and returns
// an *UnsettledError: resetting stock never drops money work.
func (inv *Inventory) SetStock(ctx context.Context, sku string, units int64) error {
	_, err := inv.setStock(ctx, sku, units, false)
	return err
}

// InitStock sets a SKU's stock only if it has none, so that a checkout
// restarted with the same flags keeps the books it had. It reports whether
// it set the stock. It is one script: a failure leaves the SKU as it was,
// never half set up.
func (inv *Inventory) InitStock(ctx context.Context, sku string, units int64) (bool, error) {
	return inv.setStock(ctx, sku, units, true)
}

func (inv *Inventory) setStock(ctx context.Context, sku string, units int64, init bool) (bool, error) {
	flag := "0"
	if init {
		flag = "1"
	}
	res, err := setStockScript.Run(ctx, inv.rdb, append(keys(sku), skuSet), units, flag, sku).Slice()
	if err != nil {
		return false, fmt.Errorf("set stock of %s: %w", sku, err)
	}
	switch res[0] {
	case "set":
		return true, nil
	case "kept":
		return false, nil
	case "unsettled":
		if len(res) == 4 {
			e := &UnsettledError{SKU: sku}
			e.Held, _ = res[1].(int64)
			e.AwaitingSweep, _ = res[2].(int64)
			e.PendingVoids, _ = res[3].(int64)
			return false, e
		}
	}
	return false, fmt.Errorf("set stock of %s: unexpected answer %v", sku, res)
}

// SKUs lists the SKUs that have stock set.
func (inv *Inventory) SKUs(ctx context.Context) ([]string, error) {
	return inv.rdb.SMembers(ctx, skuSet).Result()
}

type reservation struct {
	status  string
	attempt string // for resReserved
	// refreshed: resReserved found the lease of an earlier request with the
	// same checkout id, whose charge may have gone through.
	refreshed bool
	order     *Order // for resSold, resClaimed, resReclaim
}

// Reserve takes one unit for checkoutID under a lease of ttl and returns
// the attempt number. Repeating it while the lease lives refreshes the
// lease and returns the same attempt; after a claim it returns the order.
func (inv *Inventory) Reserve(ctx context.Context, sku, checkoutID string, ttl time.Duration) (reservation, error) {
	v, err := reserveScript.Run(ctx, inv.rdb, keys(sku), checkoutID, ttl.Milliseconds()).StringSlice()
	if err != nil {
		return reservation{}, fmt.Errorf("reserve %s: %w", sku, err)
	}
	return parseReservation(v)
}

// Claim turns the lease into an order after the charge with o.ChargeKey was
// approved. If the lease expired it takes a unit again if one is available;
// otherwise, or when the charge was marked for voiding meanwhile, it
// returns "lost" with the void recorded: the caller voids the charge.
func (inv *Inventory) Claim(ctx context.Context, o Order) (reservation, error) {
	oj, _ := json.Marshal(o)
	v, err := claimScript.Run(ctx, inv.rdb, keys(o.SKU), o.CheckoutID, o.ChargeKey, oj).StringSlice()
	if err != nil {
		return reservation{}, fmt.Errorf("claim %s: %w", o.SKU, err)
	}
	return parseReservation(v)
}

// Abandon marks the charge with chargeKey for voiding, unless the order of
// checkoutID was made with it (then it returns false). After it, no claim
// with that key can succeed, so the charge may be voided even when a claim
// whose reply was lost had been sent. With release it also gives the unit
// back.
func (inv *Inventory) Abandon(ctx context.Context, sku, checkoutID, chargeKey, reason string, release bool) (bool, error) {
	rel := "0"
	if release {
		rel = "1"
	}
	n, err := abandonScript.Run(ctx, inv.rdb, keys(sku), checkoutID, chargeKey, reason, rel).Int()
	if err != nil {
		return false, fmt.Errorf("abandon %s: %w", chargeKey, err)
	}
	return n == 1, nil
}

// Release gives checkoutID's unit back; it does nothing when there is no
// lease (already released, claimed or expired). With settle, the lease may
// hold an earlier attempt's charge: the checkout id then waits for the
// sweeper, which voids that charge unless an order was made with it, as
// for a lease that expired. Without it, a released lease whose charge went
// through would be forgotten, and the charge never voided.
func (inv *Inventory) Release(ctx context.Context, sku, checkoutID string, settle bool) (bool, error) {
	flag := "0"
	if settle {
		flag = "1"
	}
	n, err := releaseScript.Run(ctx, inv.rdb, keys(sku), checkoutID, flag).Int()
	if err != nil {
		return false, fmt.Errorf("release %s: %w", sku, err)
	}
	return n == 1, nil
}

// Sweep marks for voiding the charges of attempts whose lease expired more
// than grace ago without an order, and returns up to limit charge keys due
// to be voided at the provider.
func (inv *Inventory) Sweep(ctx context.Context, sku string, grace time.Duration, limit int) ([]string, error) {
	v, err := sweepScript.Run(ctx, inv.rdb, keys(sku), grace.Milliseconds(), limit).StringSlice()
	if err != nil {
		return nil, fmt.Errorf("sweep %s: %w", sku, err)
	}
	return v, nil
}

// Voided records that the provider confirmed the void of chargeKey; with
// retry > 0 it records a failed attempt, to be tried again after retry.
func (inv *Inventory) Voided(ctx context.Context, sku, chargeKey string, retry time.Duration) error {
	if err := voidedScript.Run(ctx, inv.rdb, keys(sku), chargeKey, retry.Milliseconds()).Err(); err != nil {
		return fmt.Errorf("record void of %s: %w", chargeKey, err)
	}
	return nil
}

// Available reads the units available, for naive mode.
func (inv *Inventory) Available(ctx context.Context, sku string) (int64, error) {
	n, err := inv.rdb.HGet(ctx, keys(sku)[0], "available").Int64()
	if errors.Is(err, redis.Nil) {
		return 0, ErrUnknownSKU
	}
	if err != nil {
		return 0, fmt.Errorf("read stock of %s: %w", sku, err)
	}
	return n, nil
}

// NaiveSell records a sale without any reservation: decrement, count, write
// the order. Not atomic with the stock check before payment, by design.
func (inv *Inventory) NaiveSell(ctx context.Context, o Order) error {
	k := keys(o.SKU)
	oj, _ := json.Marshal(o)
	_, err := inv.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.HIncrBy(ctx, k[0], "available", -1)
		p.HIncrBy(ctx, k[0], "sold", 1)
		p.HSet(ctx, k[2], o.CheckoutID, oj)
		p.HSet(ctx, k[7], o.CheckoutID, o.ChargeKey)
		return nil
	})
	if err != nil {
		return fmt.Errorf("record naive sale of %s: %w", o.SKU, err)
	}
	return nil
}

// Ledger reaps expired leases and reads the SKU's books.
func (inv *Inventory) Ledger(ctx context.Context, sku string) (Ledger, error) {
	l, err := inv.counts(ctx, sku)
	if err != nil {
		return Ledger{}, err
	}
	k := keys(sku)
	l.Orders, l.Voids = []Order{}, []Void{}
	orders, err := inv.rdb.HGetAll(ctx, k[2]).Result()
	if err != nil {
		return Ledger{}, fmt.Errorf("read orders of %s: %w", sku, err)
	}
	for id, s := range orders {
		var o Order
		if err := json.Unmarshal([]byte(s), &o); err != nil {
			return Ledger{}, fmt.Errorf("decode order %s: %w", id, err)
		}
		l.Orders = append(l.Orders, o)
	}
	voids, err := inv.rdb.HGetAll(ctx, k[3]).Result()
	if err != nil {
		return Ledger{}, fmt.Errorf("read voids of %s: %w", sku, err)
	}
	pending, err := inv.rdb.ZRange(ctx, k[4], 0, -1).Result()
	if err != nil {
		return Ledger{}, fmt.Errorf("read pending voids of %s: %w", sku, err)
	}
	isPending := map[string]bool{}
	for _, p := range pending {
		isPending[p] = true
	}
	for key, s := range voids {
		var raw struct {
			CheckoutID string `json:"checkout_id"`
			ChargeKey  string `json:"charge_key"`
			Reason     string `json:"reason"`
			AtMS       int64  `json:"at_ms"`
		}
		if err := json.Unmarshal([]byte(s), &raw); err != nil {
			return Ledger{}, fmt.Errorf("decode void %s: %w", key, err)
		}
		v := Void{CheckoutID: raw.CheckoutID, ChargeKey: raw.ChargeKey, Reason: raw.Reason,
			At: time.UnixMilli(raw.AtMS).UTC(), Pending: isPending[key]}
		if v.Pending {
			l.PendingVoids++
		}
		l.Voids = append(l.Voids, v)
	}
	sortOrders(l.Orders)
	sortVoids(l.Voids)
	l.Settled = l.settled()
	return l, nil
}

// LedgerSummary is the ledger without its orders and voids: the counts,
// the pending voids and whether the books are settled. Its cost does not
// grow with the orders, so a runner can poll it while it waits for the
// books to settle; reading it reaps expired leases, as Ledger does.
func (inv *Inventory) LedgerSummary(ctx context.Context, sku string) (Ledger, error) {
	l, err := inv.counts(ctx, sku)
	if err != nil {
		return Ledger{}, err
	}
	// A void is pending while its charge key is in the pending set, and
	// only a void recorded in the voids hash is ever added to it.
	if l.PendingVoids, err = inv.rdb.ZCard(ctx, keys(sku)[4]).Result(); err != nil {
		return Ledger{}, fmt.Errorf("read pending voids of %s: %w", sku, err)
	}
	l.Settled = l.settled()
	return l, nil
}

// counts reaps expired leases and reads sku's counts.
func (inv *Inventory) counts(ctx context.Context, sku string) (Ledger, error) {
	v, err := reapScript.Run(ctx, inv.rdb, keys(sku)).Slice()
	if err != nil {
		return Ledger{}, fmt.Errorf("read ledger of %s: %w", sku, err)
	}
	if len(v) != 9 || v[0] == nil {
		return Ledger{}, fmt.Errorf("read ledger of %s: %w", sku, ErrUnknownSKU)
	}
	l := Ledger{SKU: sku}
	for i, dst := range []*int64{&l.Initial, &l.Available, &l.Reserved, &l.Sold, &l.Expired, &l.Reclaimed, &l.AwaitingSweep, &l.MovedOut, &l.MovedIn} {
		*dst = toInt(v[i])
	}
	return l, nil
}

func toInt(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case string:
		n, _ := strconv.ParseInt(x, 10, 64)
		return n
	}
	return 0
}

func parseReservation(v []string) (reservation, error) {
	if len(v) == 0 {
		return reservation{}, errors.New("empty answer from inventory script")
	}
	r := reservation{status: v[0]}
	switch r.status {
	case resUnknown:
		return r, ErrUnknownSKU
	case resReserved:
		if len(v) < 2 || v[1] == "" {
			return r, errors.New("inventory reserved without an attempt number")
		}
		r.attempt = v[1]
		r.refreshed = len(v) > 2 && v[2] == "refreshed"
	case resSold, resClaimed, resReclaim:
		if len(v) < 2 {
			return r, fmt.Errorf("inventory answered %s without an order", r.status)
		}
		var o Order
		if err := json.Unmarshal([]byte(v[1]), &o); err != nil {
			return r, fmt.Errorf("decode order: %w", err)
		}
		r.order = &o
	}
	return r, nil
}

// ChargeKey is the payment idempotency key of one attempt of a checkout:
// "<checkout id>/<attempt>".
func ChargeKey(checkoutID, attempt string) string { return checkoutID + "/" + attempt }

// CheckoutIDOf is the checkout id of a charge key made by ChargeKey.
func CheckoutIDOf(chargeKey string) string {
	if i := strings.LastIndex(chargeKey, "/"); i >= 0 {
		return chargeKey[:i]
	}
	return chargeKey
}
