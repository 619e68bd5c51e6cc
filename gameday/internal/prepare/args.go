package prepare

import (
	"math"
	"time"

	flags "github.com/gameday-dev/gameday/internal/checkoutflags"
	"github.com/gameday-dev/gameday/scenarios"
)

// The runner starts the reference checkout and its payment stand-in with
// a scenario's settings. Their flags are listed once, in package
// internal/checkoutflags, where checkout.Config and payment.Config take
// them too: here a scenario's sections are bound to them (the one adapter
// from a scenario to the two commands) and rendered, every setting the
// scenario states, defaults included, so that a child of another build
// (GAMEDAY_IMAGE) runs the scenario's settings, not its own defaults. The
// environment adds the addresses and the stand-in's books;
// TestArgsGiveTheScenariosSettings parses the result as "gameday serve"
// does.

// CheckoutArgs are the arguments of "gameday serve checkout" that give the
// checkout the scenario's checkout section. A zero setting there means
// the checkout's default, as it does in the flags.
func CheckoutArgs(sc *scenarios.Scenario) []string {
	c := sc.Checkout // a copy: the bindings below write nothing back
	vars := []flags.Var{
		flags.Mode.Bind(&c.Mode),
		flags.LeaseTTL.Bind((*time.Duration)(&c.LeaseTTL)),
		flags.RetryAfter.Bind((*time.Duration)(&c.RetryAfter)),
		flags.MinPaymentTime.Bind((*time.Duration)(&c.MinPaymentTime)),
		// The checkout's own line for the provider (payment only).
		flags.PaymentSlots.Bind(&c.Payment.Slots),
	}
	for _, g := range []struct {
		dep string
		b   *scenarios.Breaker
	}{{"payment", &c.Payment}, {"inventory", &c.Inventory}, {"sessions", &c.Sessions}} {
		f := flags.Guard(g.dep)
		if g.b.Disabled {
			// Ineffective: it never sees enough consecutive failures.
			g.b.Failures = math.MaxUint32
		}
		vars = append(vars, f.Timeout.Bind((*time.Duration)(&g.b.Timeout)), f.ProbeTimeout.Bind((*time.Duration)(&g.b.ProbeTimeout)),
			f.Failures.Bind(&g.b.Failures), f.OpenFor.Bind((*time.Duration)(&g.b.OpenFor)), f.MaxConcurrent.Bind(&g.b.MaxConcurrent))
	}
	// The switches are written only when off: a checkout of an older
	// build, without them, still starts with every other setting.
	for _, sw := range []struct {
		f  flags.Flag[string]
		on *bool
	}{{flags.ProductCoalesce, c.Product.Coalesce}, {flags.ProductServeStale, c.Product.ServeStale}, {flags.GuestFallback, c.GuestFallback}} {
		if sw.on != nil && !*sw.on {
			off := "off"
			vars = append(vars, sw.f.Bind(&off))
		}
	}
	if a := &c.Admission; a.Mode != "" && a.Mode != "none" {
		// The waiting room's settings only with one.
		vars = append(vars, flags.Admission.Bind(&a.Mode), flags.AdmissionInProgress.Bind(&a.InProgress),
			flags.AdmissionTokenTTL.Bind((*time.Duration)(&a.TokenTTL)))
	}
	return flags.Args(vars)
}

// PaymentArgs are the arguments of "gameday serve payment" that give the
// stand-in the scenario's payment section and the run's seed. A zero
// setting there is a value of its own (no latency, no declines), as it is
// in the flags.
func PaymentArgs(sc *scenarios.Scenario, seed int64) []string {
	p := sc.Payment // a copy: the bindings below write nothing back
	return flags.Args([]flags.Var{
		flags.StandInMinLatency.Bind((*time.Duration)(&p.MinLatency)),
		flags.StandInMaxLatency.Bind((*time.Duration)(&p.MaxLatency)),
		flags.StandInTailProbability.Bind(&p.TailProbability),
		flags.StandInTailLatency.Bind((*time.Duration)(&p.TailLatency)),
		flags.StandInDeclineRate.Bind(&p.DeclineRate),
		flags.StandInSlots.Bind(&p.Slots),
		flags.StandInSeed.Bind(&seed),
	})
}
