package checkout

import (
	"flag"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/breakers"
	"github.com/gameday-dev/gameday/checkout/admission"
	defaults "github.com/gameday-dev/gameday/internal/checkoutdefaults"
)

// parseFlags is what "gameday serve checkout" does with its arguments.
func parseFlags(t *testing.T, args []string) Config {
	t.Helper()
	var c Config
	fs := flag.NewFlagSet("serve checkout", flag.ContinueOnError)
	c.RegisterFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("parse %q: %v", args, err)
	}
	return c
}

// runs is c as the checkout runs it: with its defaults and those its
// guards and its waiting room apply.
func runs(c Config) Config {
	c.normalise()
	for _, s := range []*breakers.Settings{&c.Payment, &c.Inventory, &c.Sessions} {
		*s = breakers.New(*s).Settings()
		s.IsFailure, s.Now = nil, nil // functions are never equal
	}
	if c.Admission.TokenTTL == 0 {
		// Package admission's own (TestFlagDefaultsAreTheCheckouts).
		c.Admission.TokenTTL = defaults.AdmissionTokenTTL
	}
	c.Logger = nil
	return c
}

// A Config rendered by Args and parsed back runs as the Config did.
func TestConfigArgsRoundTrip(t *testing.T) {
	guard := func(d time.Duration) breakers.Settings {
		return breakers.Settings{Timeout: d, ProbeTimeout: d / 3, ConsecutiveFailures: 7, OpenFor: 3 * d, MaxConcurrent: -1}
	}
	for _, tc := range []struct {
		name string
		c    Config
	}{
		// Every flagged setting away from its default.
		{"every flag", Config{
			InventoryRedis: "10.0.0.1:6380", SessionRedis: "10.0.0.2:6381", PaymentURL: "https://pay.example:8443",
			Mode: ModeNaive, LeaseTTL: 5 * time.Second, PriceCents: 499, RetryAfter: 250 * time.Millisecond,
			MinPaymentTime: 400 * time.Millisecond, PaymentSlots: 8, PaymentAttempts: 1, SweepInterval: 100 * time.Millisecond,
			LateClaimGrace: 7 * time.Second,
			Payment:        guard(300 * time.Millisecond), Inventory: guard(50 * time.Millisecond), Sessions: guard(20 * time.Millisecond),
			Admission:  admission.Config{Mode: admission.ModeFairDeadline, InProgress: 40, TokenTTL: time.Minute},
			CatalogURL: "http://10.0.0.3:8092", ProductCacheTTL: 5 * time.Second, CatalogTimeout: 300 * time.Millisecond,
			ProductCoalesce: Off, ProductServeStale: Off, GuestFallback: Off,
		}},
		// The zero Config: its zeros are the defaults, but the required
		// addresses, which are rendered as they are.
		{"zero", Config{}},
		// The defaults spelled out.
		{"defaults", Config{InventoryRedis: "127.0.0.1:6379", PaymentURL: "http://127.0.0.1:8081",
			Mode: ModeReserve, LeaseTTL: 30 * time.Second, Admission: admission.Config{Mode: "none"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.c.Args()
			if got, want := runs(parseFlags(t, args)), runs(tc.c); !reflect.DeepEqual(got, want) {
				t.Errorf("args %q parse to\n%+v\nwant\n%+v", args, got, want)
			}
		})
	}
}

// Args states every setting, defaults included, but a zero, which means
// the default.
func TestConfigArgsStateTheDefaults(t *testing.T) {
	c := Config{InventoryRedis: "127.0.0.1:6379", PaymentURL: "http://127.0.0.1:8081", LeaseTTL: 30 * time.Second}
	if got := strings.Join(c.Args(), " "); got != "-inventory-redis 127.0.0.1:6379 -payment-url http://127.0.0.1:8081 -lease-ttl 30s" {
		t.Errorf("Args = %q, want the two addresses and -lease-ttl 30s", got)
	}
	// With no flags given, Args states each flag whose default is not zero.
	args := strings.Join(parseFlags(t, nil).Args(), " ")
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	new(Config).RegisterFlags(fs)
	fs.VisitAll(func(f *flag.Flag) {
		zero := f.DefValue == "" || f.DefValue == "0" || f.DefValue == "0s"
		if stated := strings.Contains(" "+args+" ", " -"+f.Name+" "+f.DefValue+" "); stated == zero {
			t.Errorf("-%s (default %q) stated %v in %q", f.Name, f.DefValue, stated, args)
		}
	})
}
