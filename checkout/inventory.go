package checkout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
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
	CheckoutID  string    `json:"checkout_id"`
	Shopper     string    `json:"shopper"`
	SKU         string    `json:"sku"`
	ChargeID    string    `json:"charge_id"`
	AmountCents int64     `json:"amount_cents"`
	At          time.Time `json:"at"`
	// Reclaimed is true when the lease had expired before payment
	// succeeded and the unit was taken again from the available stock.
	Reclaimed bool `json:"reclaimed,omitempty"`
}

// Void is a charge the checkout had to give back because the unit it paid
// for was gone once payment returned.
type Void struct {
	CheckoutID string    `json:"checkout_id"`
	Shopper    string    `json:"shopper"`
	ChargeID   string    `json:"charge_id"`
	Reason     string    `json:"reason"`
	At         time.Time `json:"at"`
}

// Ledger is the stock of one SKU. In reserve mode Available + Reserved +
// Sold = Initial at every instant; in naive mode Available goes negative
// when it oversells.
type Ledger struct {
	SKU       string  `json:"sku"`
	Initial   int64   `json:"initial"`
	Available int64   `json:"available"`
	Reserved  int64   `json:"reserved"`
	Sold      int64   `json:"sold"`
	Expired   int64   `json:"expired_leases"`
	Reclaimed int64   `json:"reclaimed"`
	Orders    []Order `json:"orders"`
	Voids     []Void  `json:"voids"`
}

// Balanced reports whether no unit was created or lost.
func (l Ledger) Balanced() bool { return l.Available+l.Reserved+l.Sold == l.Initial }

// Oversold is how many units were sold beyond the initial stock.
func (l Ledger) Oversold() int64 { return max(0, l.Sold-l.Initial) }

// Reservation results.
const (
	resReserved = "reserved"
	resSold     = "sold" // this checkout id already bought: replay its order
	resSoldOut  = "sold_out"
	resUnknown  = "unknown_sku"
	resClaimed  = "claimed"
	resReclaim  = "reclaimed"
	resLost     = "lost"
)

// ErrUnknownSKU is returned for a SKU with no stock set.
var ErrUnknownSKU = errors.New("unknown sku")

// Inventory keeps stock, leases and orders in Redis. Every write is one Lua
// script keyed by checkout id, so it is atomic and repeating it is harmless.
// Lease times come from the Redis server's clock, so checkouts on machines
// whose clocks disagree still agree on when a lease expired.
type Inventory struct {
	rdb *redis.Client
}

// NewInventory wraps a Redis client.
func NewInventory(rdb *redis.Client) *Inventory { return &Inventory{rdb: rdb} }

type skuKeys struct{ stock, leases, orders, voids string }

func keys(sku string) skuKeys {
	p := "gameday:inv:{" + sku + "}:"
	return skuKeys{stock: p + "stock", leases: p + "leases", orders: p + "orders", voids: p + "voids"}
}

const skuSet = "gameday:skus"

// luaNow and luaReap are shared by the scripts: the server's time in
// milliseconds, and the return of every expired lease's unit to the stock.
const luaNow = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`
const luaReap = `
local expired = redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if expired > 0 then
  redis.call('HINCRBY', KEYS[1], 'available', expired)
  redis.call('HINCRBY', KEYS[1], 'expired', expired)
end
`

// reserveScript: KEYS stock, leases, orders; ARGV checkout id, lease ms.
var reserveScript = redis.NewScript(luaNow + `
if redis.call('HEXISTS', KEYS[1], 'initial') == 0 then return {'unknown_sku'} end
local order = redis.call('HGET', KEYS[3], ARGV[1])
if order then return {'sold', order} end
` + luaReap + `
if redis.call('ZSCORE', KEYS[2], ARGV[1]) then
  redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), ARGV[1])
  return {'reserved'}
end
if tonumber(redis.call('HGET', KEYS[1], 'available')) <= 0 then return {'sold_out'} end
redis.call('HINCRBY', KEYS[1], 'available', -1)
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), ARGV[1])
return {'reserved'}
`)

// claimScript: KEYS stock, leases, orders, voids; ARGV checkout id, order
// json, void json.
var claimScript = redis.NewScript(luaNow + `
local order = redis.call('HGET', KEYS[3], ARGV[1])
if order then return {'sold', order} end
if redis.call('HEXISTS', KEYS[4], ARGV[1]) == 1 then return {'lost'} end
if redis.call('ZREM', KEYS[2], ARGV[1]) == 1 then
  redis.call('HINCRBY', KEYS[1], 'sold', 1)
  redis.call('HSET', KEYS[3], ARGV[1], ARGV[2])
  return {'claimed', ARGV[2]}
end
` + luaReap + `
if tonumber(redis.call('HGET', KEYS[1], 'available')) > 0 then
  redis.call('HINCRBY', KEYS[1], 'available', -1)
  redis.call('HINCRBY', KEYS[1], 'sold', 1)
  redis.call('HINCRBY', KEYS[1], 'reclaimed', 1)
  redis.call('HSET', KEYS[3], ARGV[1], ARGV[2])
  return {'reclaimed', ARGV[2]}
end
redis.call('HSETNX', KEYS[4], ARGV[1], ARGV[3])
return {'lost'}
`)

// abandonScript: KEYS orders, voids; ARGV checkout id, void json. After it
// no claim for the checkout id can succeed, so its charge can be voided.
var abandonScript = redis.NewScript(`
local order = redis.call('HGET', KEYS[1], ARGV[1])
if order then return 0 end
redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[2])
return 1
`)

// releaseScript: KEYS stock, leases; ARGV checkout id.
var releaseScript = redis.NewScript(`
if redis.call('ZREM', KEYS[2], ARGV[1]) == 1 then
  redis.call('HINCRBY', KEYS[1], 'available', 1)
  return 1
end
return 0
`)

// reapScript: KEYS stock, leases. Returns the counters after reaping.
var reapScript = redis.NewScript(luaNow + luaReap + `
return {redis.call('HGET', KEYS[1], 'initial') or false,
        redis.call('HGET', KEYS[1], 'available') or false,
        redis.call('ZCARD', KEYS[2]),
        redis.call('HGET', KEYS[1], 'sold') or false,
        redis.call('HGET', KEYS[1], 'expired') or false,
        redis.call('HGET', KEYS[1], 'reclaimed') or false}
`)

// SetStock starts a SKU afresh with units available, forgetting its leases,
// orders and voids.
func (inv *Inventory) SetStock(ctx context.Context, sku string, units int64) error {
	k := keys(sku)
	_, err := inv.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, k.stock, k.leases, k.orders, k.voids)
		p.HSet(ctx, k.stock, "initial", units, "available", units, "sold", 0, "expired", 0, "reclaimed", 0)
		p.SAdd(ctx, skuSet, sku)
		return nil
	})
	if err != nil {
		return fmt.Errorf("set stock of %s: %w", sku, err)
	}
	return nil
}

// SKUs lists the SKUs that have stock set.
func (inv *Inventory) SKUs(ctx context.Context) ([]string, error) {
	return inv.rdb.SMembers(ctx, skuSet).Result()
}

type reservation struct {
	status string
	order  *Order // for resSold
}

// Reserve takes one unit for checkoutID under a lease of ttl. Repeating it
// refreshes the lease; after a claim it returns the order.
func (inv *Inventory) Reserve(ctx context.Context, sku, checkoutID string, ttl time.Duration) (reservation, error) {
	k := keys(sku)
	v, err := reserveScript.Run(ctx, inv.rdb, []string{k.stock, k.leases, k.orders}, checkoutID, ttl.Milliseconds()).StringSlice()
	if err != nil {
		return reservation{}, fmt.Errorf("reserve %s: %w", sku, err)
	}
	return parseReservation(v)
}

// Claim turns checkoutID's lease into an order after payment succeeded. If
// the lease expired it takes a unit again if one is available; otherwise it
// records a void and returns "lost": the caller must void the charge.
func (inv *Inventory) Claim(ctx context.Context, o Order) (reservation, error) {
	k := keys(o.SKU)
	oj, _ := json.Marshal(o)
	vj, _ := json.Marshal(Void{CheckoutID: o.CheckoutID, Shopper: o.Shopper, ChargeID: o.ChargeID, Reason: "lease expired and sold out", At: o.At})
	v, err := claimScript.Run(ctx, inv.rdb, []string{k.stock, k.leases, k.orders, k.voids}, o.CheckoutID, oj, vj).StringSlice()
	if err != nil {
		return reservation{}, fmt.Errorf("claim %s: %w", o.SKU, err)
	}
	return parseReservation(v)
}

// Release gives checkoutID's unit back; it does nothing when there is no
// lease (already released, claimed or expired).
func (inv *Inventory) Release(ctx context.Context, sku, checkoutID string) (bool, error) {
	k := keys(sku)
	n, err := releaseScript.Run(ctx, inv.rdb, []string{k.stock, k.leases}, checkoutID).Int()
	if err != nil {
		return false, fmt.Errorf("release %s: %w", sku, err)
	}
	return n == 1, nil
}

// Abandon makes sure checkoutID will never be claimed, recording v as the
// reason, unless it already was: it returns false when an order exists. A
// charge whose claim failed may be voided only after Abandon returned true,
// because the failed claim may in fact have been applied, or may still land.
func (inv *Inventory) Abandon(ctx context.Context, sku string, v Void) (bool, error) {
	k := keys(sku)
	vj, _ := json.Marshal(v)
	n, err := abandonScript.Run(ctx, inv.rdb, []string{k.orders, k.voids}, v.CheckoutID, vj).Int()
	if err != nil {
		return false, fmt.Errorf("abandon %s: %w", v.CheckoutID, err)
	}
	return n == 1, nil
}

// Available reads the units available, for naive mode.
func (inv *Inventory) Available(ctx context.Context, sku string) (int64, error) {
	n, err := inv.rdb.HGet(ctx, keys(sku).stock, "available").Int64()
	if errors.Is(err, redis.Nil) {
		return 0, ErrUnknownSKU
	}
	if err != nil {
		return 0, fmt.Errorf("read stock of %s: %w", sku, err)
	}
	return n, nil
}

// OrderFor returns the order of checkoutID, if there is one.
func (inv *Inventory) OrderFor(ctx context.Context, sku, checkoutID string) (*Order, error) {
	s, err := inv.rdb.HGet(ctx, keys(sku).orders, checkoutID).Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read order %s: %w", checkoutID, err)
	}
	var o Order
	if err := json.Unmarshal([]byte(s), &o); err != nil {
		return nil, fmt.Errorf("decode order %s: %w", checkoutID, err)
	}
	return &o, nil
}

// NaiveSell records a sale without any reservation: decrement, count, write
// the order. Not atomic with the stock check before payment, by design.
func (inv *Inventory) NaiveSell(ctx context.Context, o Order) error {
	k := keys(o.SKU)
	oj, _ := json.Marshal(o)
	_, err := inv.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.HIncrBy(ctx, k.stock, "available", -1)
		p.HIncrBy(ctx, k.stock, "sold", 1)
		p.HSet(ctx, k.orders, o.CheckoutID, oj)
		return nil
	})
	if err != nil {
		return fmt.Errorf("record naive sale of %s: %w", o.SKU, err)
	}
	return nil
}

// Ledger reaps expired leases and reads the SKU's books.
func (inv *Inventory) Ledger(ctx context.Context, sku string) (Ledger, error) {
	k := keys(sku)
	v, err := reapScript.Run(ctx, inv.rdb, []string{k.stock, k.leases}).Slice()
	if err != nil {
		return Ledger{}, fmt.Errorf("read ledger of %s: %w", sku, err)
	}
	if len(v) != 6 || v[0] == nil {
		return Ledger{}, fmt.Errorf("read ledger of %s: %w", sku, ErrUnknownSKU)
	}
	l := Ledger{SKU: sku, Orders: []Order{}, Voids: []Void{}}
	for i, dst := range []*int64{&l.Initial, &l.Available, &l.Reserved, &l.Sold, &l.Expired, &l.Reclaimed} {
		*dst = toInt(v[i])
	}
	orders, err := inv.rdb.HGetAll(ctx, k.orders).Result()
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
	voids, err := inv.rdb.HGetAll(ctx, k.voids).Result()
	if err != nil {
		return Ledger{}, fmt.Errorf("read voids of %s: %w", sku, err)
	}
	for id, s := range voids {
		var vd Void
		if err := json.Unmarshal([]byte(s), &vd); err != nil {
			return Ledger{}, fmt.Errorf("decode void %s: %w", id, err)
		}
		l.Voids = append(l.Voids, vd)
	}
	sortOrders(l.Orders)
	sortVoids(l.Voids)
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

func errorsIsUnknown(err error) bool { return errors.Is(err, ErrUnknownSKU) }
