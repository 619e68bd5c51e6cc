package checkout

import (
	"errors"
	"fmt"
	defaults "github.com/gameday-dev/gameday/internal/checkoutdefaults"
	"log/slog"
	"net"
	"net/url"
	"time"

	"github.com/gameday-dev/gameday/breakers"
	"github.com/gameday-dev/gameday/checkout/admission"
)

// The environment variables "gameday serve checkout" reads its secrets
// from (never flags: every user of a machine can read a process's
// arguments), and which the runner's environments set for the checkouts
// they start.
const (
	AdminTokenEnv    = "GAMEDAY_ADMIN_TOKEN"    // Config.AdminToken
	RedisPasswordEnv = "GAMEDAY_REDIS_PASSWORD" // Config.RedisPassword
)

// Config is the reference checkout's configuration. Every zero value is
// documented and replaced by a default in New.
type Config struct {
	// InventoryRedis is the host:port of the Redis holding stock and orders.
	// Required: without it nothing can be sold.
	InventoryRedis string
	// SessionRedis is the host:port of the Redis holding sessions. "" runs
	// without a session store: every shopper is a guest (not degraded).
	SessionRedis string
	// PaymentURL is the payment provider's base URL. Required.
	PaymentURL string
	// RedisPassword is sent to both Redis servers (AUTH) when they ask for
	// one; "" sends none.
	RedisPassword string

	// AdminToken guards the admin API (/admin/...: stock, the books,
	// breakers, the waiting room). When set, every admin request must carry
	// "Authorization: Bearer <AdminToken>" (401 otherwise). When "", the
	// admin API answers only peers on loopback (403 otherwise): a checkout
	// whose listener is reachable from a network needs a token.
	AdminToken string

	// Mode is ModeReserve (zero value) or ModeNaive.
	Mode Mode
	// LeaseTTL is how long a reservation holds its unit; 0 means 30s. It
	// should exceed the longest payment a shopper would wait for.
	LeaseTTL time.Duration
	// PriceCents is the price of one unit; 0 means 1299.
	PriceCents int64
	// RetryAfter is what a refusal tells the shopper to wait; 0 means 1s.
	RetryAfter time.Duration
	// MinPaymentTime: a charge is not started when less than this is left
	// before the shopper's deadline (the shopper would be gone before the
	// answer). 0 means only a deadline already passed stops it.
	MinPaymentTime time.Duration
	// PaymentSlots is how many charges the checkout lets be at the payment
	// provider at once; the others wait in the checkout's own line, first
	// come, first served, and in the modes that honour the deadline a
	// freed slot goes only to a waiter with more than MinPaymentTime left
	// (the others are answered too_late the moment they can no longer
	// finish). Set it to what the provider processes at once, so that
	// nothing waits in the provider's queue, where it cannot be skipped.
	// 0 means no line: every charge goes to the provider at once.
	PaymentSlots int
	// PaymentAttempts is how many times one checkout sends its charge when
	// the connection fails, or the provider answers 429 or 503 with
	// Retry-After (the next attempt waits that long, if the shopper's
	// deadline can hold it); every attempt carries the same idempotency
	// key, so at most one charge is made. 0 means 2.
	PaymentAttempts int
	// SweepInterval is how often the checkout looks for charges to void:
	// those of leases that expired unclaimed and those whose void the
	// provider has not confirmed yet. 0 means 1s.
	SweepInterval time.Duration
	// LateClaimGrace is how long after a lease expired a payment may still
	// claim the unit before the sweeper voids its charge. 0 means the
	// longest a charge can take: payment timeout × attempts + 1s.
	LateClaimGrace time.Duration

	// Payment, Inventory and Sessions guard each dependency. Their zero
	// values are breakers' defaults, except the timeouts (payment 2s,
	// inventory 250ms, sessions 100ms) and the payment probe's, which is
	// half the timeout where breakers' is a quarter (a healthy charge must
	// fit in a probe). Name is set by the checkout.
	Payment, Inventory, Sessions breakers.Settings

	// SessionTTL is a session's idle lifetime; 0 means 30 minutes.
	SessionTTL time.Duration

	// Admission is how checkouts are let in (see package admission). Its
	// zero value is today's behaviour: everyone is admitted and the
	// shopper's deadline is honoured. Its RetryAfter, 0, means RetryAfter
	// above. The fair modes need at least one key.
	Admission admission.Config

	// CatalogURL is the catalogue's base URL: the product page's
	// description comes from it, cached in the sessions Redis
	// (productcache.go). "" serves the page with price and stock only.
	CatalogURL string
	// ProductCacheTTL is how long a description stays in the cache; 0
	// means 30s. CatalogTimeout bounds one catalogue request; 0 means 1s.
	ProductCacheTTL, CatalogTimeout time.Duration
	// ProductCoalesce and ProductServeStale switch the product page's
	// defences: "" or On, on; Off, off (a drill proving it notices).
	ProductCoalesce, ProductServeStale string
	// GuestFallback: "" or On, a purchase whose session store fails goes
	// on as a guest, marked degraded; Off, it is refused with 503
	// (dependency sessions), as a checkout that cannot do without sessions does.
	GuestFallback string

	// Logger receives the checkout's logs; nil discards them.
	Logger *slog.Logger
}

func (c *Config) normalise() {
	if c.Mode == "" {
		c.Mode = ModeReserve
	}
	if c.LeaseTTL == 0 {
		c.LeaseTTL = defaults.LeaseTTL
	}
	if c.PriceCents == 0 {
		c.PriceCents = defaults.PriceCents
	}
	if c.RetryAfter == 0 {
		c.RetryAfter = defaults.RetryAfter
	}
	if c.Admission.RetryAfter == 0 {
		c.Admission.RetryAfter = c.RetryAfter
	}
	// "none" is spelled ModeNone from here on ("" and "none" are one mode).
	c.Admission.Mode, _ = admission.ParseMode(string(c.Admission.Mode))
	// The paced room says "not today" to a shopper whose turn would leave
	// less than a charge needs.
	if c.Admission.Need == 0 {
		c.Admission.Need = c.MinPaymentTime
	}
	if c.PaymentAttempts == 0 {
		c.PaymentAttempts = defaults.PaymentAttempts
	}
	if c.SweepInterval == 0 {
		c.SweepInterval = defaults.SweepInterval
	}
	if c.SessionTTL == 0 {
		c.SessionTTL = defaults.SessionTTL
	}
	if c.Payment.Timeout == 0 {
		c.Payment.Timeout = defaults.PaymentTimeout
	}
	if c.Inventory.Timeout == 0 {
		c.Inventory.Timeout = defaults.InventoryTimeout
	}
	if c.ProductCacheTTL == 0 {
		c.ProductCacheTTL = defaults.ProductCacheTTL
	}
	if c.CatalogTimeout == 0 {
		c.CatalogTimeout = defaults.CatalogTimeout
	}
	if c.Sessions.Timeout == 0 {
		c.Sessions.Timeout = defaults.SessionsTimeout
	}
	// A payment probe gets half the timeout: long enough for a healthy
	// provider's slow charge, short enough not to hold the breaker
	// half-open. (The Redis guards' probes keep breakers' quarter.)
	if c.Payment.ProbeTimeout == 0 {
		c.Payment.ProbeTimeout = defaults.ProbeTimeout("payment", c.Payment.Timeout)
	}
	c.Payment.Name, c.Inventory.Name, c.Sessions.Name = "payment", "inventory", "sessions"
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// Validate reports the first setting that cannot work, naming it.
func (c Config) Validate() error {
	var errs []error
	if err := checkHostPort(c.InventoryRedis); err != nil {
		errs = append(errs, fmt.Errorf("inventory redis address %q: %w", c.InventoryRedis, err))
	}
	if c.SessionRedis != "" {
		if err := checkHostPort(c.SessionRedis); err != nil {
			errs = append(errs, fmt.Errorf("session redis address %q: %w", c.SessionRedis, err))
		}
	}
	if u, err := url.Parse(c.PaymentURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("payment url %q: want http://host:port", c.PaymentURL))
	}
	if c.CatalogURL != "" {
		if u, err := url.Parse(c.CatalogURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("catalog url %q: want http://host:port", c.CatalogURL))
		}
	}
	for name, v := range map[string]string{"product coalesce": c.ProductCoalesce, "product serve stale": c.ProductServeStale, "guest fallback": c.GuestFallback} {
		if v != "" && v != On && v != Off {
			errs = append(errs, fmt.Errorf("%s %q: want %q or %q", name, v, On, Off))
		}
	}
	switch c.Mode {
	case "", ModeReserve, ModeNaive:
	default:
		errs = append(errs, fmt.Errorf("mode %q: want %q or %q", c.Mode, ModeReserve, ModeNaive))
	}
	for name, d := range map[string]time.Duration{
		"lease ttl": c.LeaseTTL, "retry after": c.RetryAfter, "min payment time": c.MinPaymentTime,
		"sweep interval": c.SweepInterval, "late claim grace": c.LateClaimGrace, "session ttl": c.SessionTTL,
		"product cache ttl": c.ProductCacheTTL, "catalog timeout": c.CatalogTimeout,
	} {
		if d < 0 {
			errs = append(errs, fmt.Errorf("%s %s: must not be negative", name, d))
		}
	}
	if c.PriceCents < 0 {
		errs = append(errs, fmt.Errorf("price %d: must not be negative", c.PriceCents))
	}
	if c.PaymentSlots < 0 {
		errs = append(errs, fmt.Errorf("payment slots %d: must not be negative (0 means no line)", c.PaymentSlots))
	}
	if c.PaymentAttempts < 0 {
		errs = append(errs, fmt.Errorf("payment attempts %d: must not be negative", c.PaymentAttempts))
	}
	// Each of its errors names its field (admission.in_progress, ...).
	if err := c.Admission.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// The values of the switches (ProductCoalesce, ProductServeStale,
// GuestFallback).
const (
	On  = "on"
	Off = "off"
)

func checkHostPort(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if port == "" || port == "0" {
		return errors.New("needs a port")
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return fmt.Errorf("bad port: %w", err)
	}
	if host == "" {
		return errors.New("needs a host")
	}
	return nil
}

func (c Config) lateClaimGrace() time.Duration {
	if c.LateClaimGrace > 0 {
		return c.LateClaimGrace
	}
	return c.Payment.Timeout*time.Duration(c.PaymentAttempts) + time.Second
}
