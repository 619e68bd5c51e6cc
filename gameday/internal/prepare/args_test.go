package prepare

import (
	"flag"
	"io"
	"math"
	"slices"
	"testing"
	"time"

	// The test, and only the test, links the reference checkout's configs:
	// it parses the runner's arguments as "gameday serve" does.
	"github.com/gameday-dev/gameday/breakers"
	"github.com/gameday-dev/gameday/checkout"
	"github.com/gameday-dev/gameday/checkout/admission"
	"github.com/gameday-dev/gameday/checkout/payment"
	defaults "github.com/gameday-dev/gameday/internal/checkoutdefaults"
	"github.com/gameday-dev/gameday/scenarios"
)

// Scenarios beyond the catalogue, for what it does not set.
var argsScenarios = map[string]string{
	// Every checkout and stand-in setting away from its default, a
	// disabled breaker and no bulkhead.
	"every-setting": `
name: every-setting
matrix: {dependency: payment, failure: latency}
seed: 42
checkout:
  mode: naive
  lease_ttl: 20s
  retry_after: 500ms
  min_payment_time: 100ms
  admission: {mode: fair-deadline, in_progress: 5, token_ttl: 3m}
  payment: {timeout: 300ms, probe_timeout: 200ms, failures: 3, open_for: 4s, max_concurrent: 32, slots: 4}
  inventory: {timeout: 50ms, probe_timeout: 100ms, failures: 4, open_for: 2s, max_concurrent: 16}
  sessions: {timeout: 10ms, probe_timeout: 50ms, failures: 6, open_for: 1s, max_concurrent: -1, disabled: true}
payment: {min_latency: 0s, max_latency: 150ms, tail_probability: 0.01, tail_latency: 2s, decline_rate: 0, slots: 8}
stock: 10
load: {stages: [{duration: 1s, target: 1}]}
`,
	// A waiting room that keeps the checkout's token lifetime.
	"lottery": `
name: lottery
matrix: {dependency: payment, failure: overload}
checkout:
  admission: {mode: lottery, in_progress: 3}
stock: 10
load: {stages: [{duration: 1s, target: 1}]}
`,
}

// The runner starts the reference checkout and the payment stand-in with
// a scenario's settings: its arguments, parsed as "gameday serve" parses
// them, give the configs the scenario says, and set nothing the
// environment sets (the addresses, the stand-in's books).
func TestArgsGiveTheScenariosSettings(t *testing.T) {
	all, err := scenarios.Catalogue()
	if err != nil {
		t.Fatal(err)
	}
	for name, y := range argsScenarios {
		sc, err := scenarios.Parse(name+".yaml", []byte(y))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		all = append(all, sc)
	}
	for _, sc := range all {
		t.Run(sc.Name, func(t *testing.T) {
			checkCheckoutArgs(t, sc)
			for _, seed := range []int64{sc.Seed, 1, 0, -7} {
				checkPaymentArgs(t, sc, seed)
			}
		})
	}
}

// parse parses args on the flags register defines, and names the flags set.
func parse(t *testing.T, register func(*flag.FlagSet), args []string) (set []string) {
	t.Helper()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("parse %q: %v", args, err)
	}
	if fs.NArg() > 0 {
		t.Fatalf("%q: unexpected argument %q", args, fs.Arg(0))
	}
	fs.Visit(func(f *flag.Flag) { set = append(set, f.Name) })
	return set
}

// or is v, or def when v is zero: a scenario's zero means the checkout's
// default.
func or[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

func checkCheckoutArgs(t *testing.T, sc *scenarios.Scenario) {
	t.Helper()
	args := CheckoutArgs(sc)
	var got checkout.Config
	set := parse(t, got.RegisterFlags, args)
	for _, f := range []string{"inventory-redis", "session-redis", "payment-url"} {
		if slices.Contains(set, f) {
			t.Errorf("checkout args %q set -%s, the environment's", args, f)
		}
	}
	c := sc.Checkout
	type check struct {
		what      string
		got, want any
	}
	checks := []check{
		{"mode", string(got.Mode), or(c.Mode, "reserve")},
		{"lease ttl", got.LeaseTTL, or(c.LeaseTTL.D(), defaults.LeaseTTL)},
		{"retry after", got.RetryAfter, or(c.RetryAfter.D(), defaults.RetryAfter)},
		{"min payment time", got.MinPaymentTime, c.MinPaymentTime.D()},
		{"payment slots", got.PaymentSlots, c.Payment.Slots},
		// Not in a scenario: the checkout's defaults.
		{"price", got.PriceCents, int64(defaults.PriceCents)},
		{"payment attempts", got.PaymentAttempts, defaults.PaymentAttempts},
		{"sweep interval", got.SweepInterval, defaults.SweepInterval},
		{"late claim grace", got.LateClaimGrace, time.Duration(0)},
	}
	mode, err := admission.ParseMode(string(got.Admission.Mode))
	if err != nil {
		t.Errorf("checkout args %q: %v", args, err)
	}
	checks = append(checks, check{"admission", mode.String(), or(c.Admission.Mode, "none")})
	if mode == admission.ModeNone {
		// The waiting room's settings are not passed without one.
		checks = append(checks, check{"admission in progress", got.Admission.InProgress, 0},
			check{"admission token ttl", got.Admission.TokenTTL, defaults.AdmissionTokenTTL})
	} else {
		checks = append(checks, check{"admission in progress", got.Admission.InProgress, c.Admission.InProgress},
			check{"admission token ttl", got.Admission.TokenTTL, or(c.Admission.TokenTTL.D(), defaults.AdmissionTokenTTL)})
	}
	for _, g := range []struct {
		dep string
		got breakers.Settings
		b   scenarios.Breaker
	}{{"payment", got.Payment, c.Payment}, {"inventory", got.Inventory, c.Inventory}, {"sessions", got.Sessions, c.Sessions}} {
		wantFailures := or(g.b.Failures, uint32(defaults.Failures))
		if g.b.Disabled {
			// A breaker that never sees enough consecutive failures.
			wantFailures = math.MaxUint32
		}
		checks = append(checks,
			check{g.dep + " timeout", g.got.Timeout, or(g.b.Timeout.D(), defaults.Timeout(g.dep))},
			// 0 is the checkout's own: half or a quarter of the timeout.
			check{g.dep + " probe timeout", g.got.ProbeTimeout, g.b.ProbeTimeout.D()},
			check{g.dep + " failures", g.got.ConsecutiveFailures, wantFailures},
			check{g.dep + " open for", g.got.OpenFor, or(g.b.OpenFor.D(), defaults.OpenFor)},
			check{g.dep + " bulkhead", g.got.MaxConcurrent, or(g.b.MaxConcurrent, defaults.MaxConcurrent)},
		)
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("checkout args %q: %s %v, the scenario says %v", args, c.what, c.got, c.want)
		}
	}
}

func checkPaymentArgs(t *testing.T, sc *scenarios.Scenario, seed int64) {
	t.Helper()
	args := PaymentArgs(sc, seed)
	var got payment.Config
	set := parse(t, got.RegisterFlags, args)
	if slices.Contains(set, "data") {
		t.Errorf("payment args %q set -data, the environment's", args)
	}
	p := sc.Payment
	want := payment.Config{MinLatency: p.MinLatency.D(), MaxLatency: p.MaxLatency.D(), TailProbability: p.TailProbability,
		TailLatency: p.TailLatency.D(), DeclineRate: p.DeclineRate, Slots: p.Slots, Seed: seed}
	if got.MinLatency != want.MinLatency || got.MaxLatency != want.MaxLatency || got.TailProbability != want.TailProbability ||
		got.TailLatency != want.TailLatency || got.DeclineRate != want.DeclineRate || got.Slots != want.Slots ||
		got.Seed != want.Seed || got.DataDir != "" {
		t.Errorf("payment args %q give %+v; the scenario (seed %d) says %+v", args, got, seed, want)
	}
}
