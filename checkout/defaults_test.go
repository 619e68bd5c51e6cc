package checkout

import (
	"flag"
	"reflect"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/breakers"
	"github.com/gameday-dev/gameday/checkout/admission"
	"github.com/gameday-dev/gameday/checkout/payment"
	defaults "github.com/gameday-dev/gameday/internal/checkoutdefaults"
	"github.com/gameday-dev/gameday/scenarios"
)

// A scenario that says nothing of the checkout records the settings the
// checkout runs with when it is given none: a run record never shows one
// value while the checkout used another.
func TestScenarioDefaultsAreTheCheckouts(t *testing.T) {
	sc, err := scenarios.Parse("pin.yaml", []byte("name: pin\nstock: 10\nmatrix: {dependency: payment, failure: none}\nload:\n  stages:\n    - duration: 1s\n      target: 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	var c Config
	c.normalise()
	// What "gameday serve payment" runs with when given no latency is what
	// a scenario that sets none records.
	var pay payment.Config
	fs := flag.NewFlagSet("serve payment", flag.ContinueOnError)
	pay.RegisterFlags(fs)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if pay.MinLatency != sc.Payment.MinLatency.D() || pay.MaxLatency != sc.Payment.MaxLatency.D() {
		t.Errorf("the stand-in's latency is %v to %v; the scenario records %v to %v",
			pay.MinLatency, pay.MaxLatency, sc.Payment.MinLatency.D(), sc.Payment.MaxLatency.D())
	}
	got := sc.Checkout
	if string(c.Mode) != got.Mode || c.LeaseTTL != got.LeaseTTL.D() || c.RetryAfter != got.RetryAfter.D() || c.MinPaymentTime != got.MinPaymentTime.D() {
		t.Errorf("checkout: mode %s, lease %v, retry after %v, min payment time %v; the scenario records %s, %v, %v, %v",
			c.Mode, c.LeaseTTL, c.RetryAfter, c.MinPaymentTime, got.Mode, got.LeaseTTL.D(), got.RetryAfter.D(), got.MinPaymentTime.D())
	}
	if c.Admission.Mode.String() != got.Admission.Mode {
		t.Errorf("admission: the checkout's %q, the scenario's %q", c.Admission.Mode, got.Admission.Mode)
	}
	for _, g := range []struct {
		dep string
		c   breakers.Settings
		sc  scenarios.Breaker
	}{{"payment", c.Payment, got.Payment}, {"inventory", c.Inventory, got.Inventory}, {"sessions", c.Sessions, got.Sessions}} {
		// What the guard runs with: the checkout's settings, then the
		// breakers package's defaults.
		run := breakers.New(g.c).Settings()
		// The scenario leaves the probe timeout 0, "the checkout's
		// default"; it must be the one the docs and flags say.
		wantProbe := run.Timeout / 2
		if g.dep != "payment" {
			wantProbe = max(run.Timeout/4, time.Millisecond)
		}
		if run.Timeout != g.sc.Timeout.D() || run.ConsecutiveFailures != g.sc.Failures || run.OpenFor != g.sc.OpenFor.D() ||
			run.MaxConcurrent != g.sc.MaxConcurrent || g.sc.ProbeTimeout != 0 || run.ProbeTimeout != wantProbe {
			t.Errorf("%s: the guard runs with timeout %v, failures %d, open for %v, bulkhead %d, probe %v; the scenario records %v, %d, %v, %d, probe %v (0: the checkout's, want %v)",
				g.dep, run.Timeout, run.ConsecutiveFailures, run.OpenFor, run.MaxConcurrent, run.ProbeTimeout,
				g.sc.Timeout.D(), g.sc.Failures, g.sc.OpenFor.D(), g.sc.MaxConcurrent, g.sc.ProbeTimeout.D(), wantProbe)
		}
	}
}

// A checkout started with no flags runs as a zero Config does, but for the
// two required addresses: the flags show the checkout's defaults, and a
// flag whose value is zero (Args leaves it out) means its default.
func TestFlagDefaultsAreTheCheckouts(t *testing.T) {
	flagged := parseFlags(t, nil)
	zero := Config{InventoryRedis: flagged.InventoryRedis, PaymentURL: flagged.PaymentURL}
	if got, want := runs(flagged), runs(zero); !reflect.DeepEqual(got, want) {
		t.Errorf("with no flags the checkout runs with\n%+v\nwith a zero Config\n%+v", got, want)
	}
	// The waiting room applies its own token lifetime to a zero one.
	r, err := admission.New(admission.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Config().TokenTTL; got != defaults.AdmissionTokenTTL {
		t.Errorf("admission's default token TTL is %v, the flag's %v", got, defaults.AdmissionTokenTTL)
	}
}
