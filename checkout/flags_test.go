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
			Admission: admission.Config{Mode: admission.ModeFairDeadline, InProgress: 40, TokenTTL: time.Minute},
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

// Args renders nothing for the defaults, so a command line shows only
// what was changed.
func TestConfigArgsLeaveOutTheDefaults(t *testing.T) {
	c := Config{InventoryRedis: "127.0.0.1:6379", PaymentURL: "http://127.0.0.1:8081", LeaseTTL: 5 * time.Second}
	if got := strings.Join(c.Args(), " "); got != "-lease-ttl 5s" {
		t.Errorf("Args = %q, want only -lease-ttl 5s", got)
	}
	if got := parseFlags(t, nil).Args(); len(got) != 0 {
		t.Errorf("the flags' defaults render as %q, want nothing", got)
	}
}
