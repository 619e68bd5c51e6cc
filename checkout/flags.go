package checkout

import (
	"flag"

	"github.com/gameday-dev/gameday/breakers"
	flags "github.com/gameday-dev/gameday/internal/checkoutflags"
)

// RegisterFlags defines the checkout's flags on fs, each writing to its
// field of c, and sets those fields to the flags' defaults, which are the
// checkout's defaults. The flags, their defaults and their help are listed
// once, in package internal/checkoutflags, where the runner renders a
// scenario's checkout section with them too.
//
// The secrets (AdminToken, RedisPassword, Admission.Keys) have no flag,
// nor do Logger and the settings a command line does not carry.
// Admission.Mode is set as written: Validate reports a bad one.
func (c *Config) RegisterFlags(fs *flag.FlagSet) { flags.Register(fs, c.flagVars()) }

// Args renders c as the flags RegisterFlags defines: one "-name", "value"
// pair for every flagged setting, defaults included, in a fixed order; a
// zero setting, which means its default, is left out, but in the two
// required addresses. Parsing them after RegisterFlags gives a Config that
// New runs as it runs c. The secrets are never rendered.
func (c Config) Args() []string { return flags.Args(c.flagVars()) }

// flagVars binds the checkout's flags to c's fields.
func (c *Config) flagVars() []flags.Var {
	vars := []flags.Var{
		flags.InventoryRedis.Bind(&c.InventoryRedis),
		flags.SessionRedis.Bind(&c.SessionRedis),
		flags.PaymentURL.Bind(&c.PaymentURL),
		flags.Mode.Bind((*string)(&c.Mode)),
		flags.LeaseTTL.Bind(&c.LeaseTTL),
		flags.PriceCents.Bind(&c.PriceCents),
		flags.RetryAfter.Bind(&c.RetryAfter),
		flags.MinPaymentTime.Bind(&c.MinPaymentTime),
		flags.PaymentSlots.Bind(&c.PaymentSlots),
		flags.PaymentAttempts.Bind(&c.PaymentAttempts),
		flags.SweepInterval.Bind(&c.SweepInterval),
		flags.LateClaimGrace.Bind(&c.LateClaimGrace),
		flags.CatalogURL.Bind(&c.CatalogURL),
		flags.ProductCacheTTL.Bind(&c.ProductCacheTTL),
		flags.CatalogTimeout.Bind(&c.CatalogTimeout),
		flags.ProductCoalesce.Bind(&c.ProductCoalesce),
		flags.ProductServeStale.Bind(&c.ProductServeStale),
		flags.GuestFallback.Bind(&c.GuestFallback),
	}
	for _, g := range []struct {
		dep string
		s   *breakers.Settings
	}{{"payment", &c.Payment}, {"inventory", &c.Inventory}, {"sessions", &c.Sessions}} {
		f := flags.Guard(g.dep)
		vars = append(vars, f.Timeout.Bind(&g.s.Timeout), f.ProbeTimeout.Bind(&g.s.ProbeTimeout),
			f.Failures.Bind(&g.s.ConsecutiveFailures), f.OpenFor.Bind(&g.s.OpenFor), f.MaxConcurrent.Bind(&g.s.MaxConcurrent))
	}
	return append(vars,
		flags.Admission.Bind((*string)(&c.Admission.Mode)),
		flags.AdmissionInProgress.Bind(&c.Admission.InProgress),
		flags.AdmissionTokenTTL.Bind(&c.Admission.TokenTTL),
	)
}
