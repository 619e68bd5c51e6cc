package payment

import (
	"flag"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	defaults "github.com/gameday-dev/gameday/internal/checkoutdefaults"
)

// parseFlags is what "gameday serve payment" does with its arguments.
func parseFlags(t *testing.T, args []string) Config {
	t.Helper()
	var c Config
	fs := flag.NewFlagSet("serve payment", flag.ContinueOnError)
	c.RegisterFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("parse %q: %v", args, err)
	}
	return c
}

// A Config rendered by Args and parsed back is the Config (Now and Sync
// have no flag).
func TestConfigArgsRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Config
		args string // Args, joined by spaces
	}{
		// Every flag away from its default.
		{"every flag", Config{MinLatency: 20 * time.Millisecond, MaxLatency: 60 * time.Millisecond, TailProbability: 0.01,
			TailLatency: 2 * time.Second, DeclineRate: 0.02, Slots: 8, Seed: -3, DataDir: "/tmp/books"},
			"-min-latency 20ms -max-latency 60ms -tail-probability 0.01 -tail-latency 2s -decline-rate 0.02 -slots 8 -seed -3 -data /tmp/books"},
		// The zero Config is not the command's defaults: a provider that
		// answers at once and declines nothing, rendered so.
		{"zero", Config{}, "-min-latency 0s -max-latency 0s -decline-rate 0 -seed 0"},
		// The command's defaults are stated too.
		{"defaults", Config{MinLatency: defaults.StandInMinLatency, MaxLatency: defaults.StandInMaxLatency,
			DeclineRate: defaults.StandInDeclineRate, Seed: defaults.StandInSeed},
			fmt.Sprintf("-min-latency %v -max-latency %v -decline-rate %v -seed %d",
				defaults.StandInMinLatency, defaults.StandInMaxLatency, defaults.StandInDeclineRate, defaults.StandInSeed)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.c.Args()
			if got := strings.Join(args, " "); got != tc.args {
				t.Errorf("Args = %q, want %q", got, tc.args)
			}
			if got := parseFlags(t, args); !reflect.DeepEqual(got, tc.c) {
				t.Errorf("args %q parse to %+v, want %+v", args, got, tc.c)
			}
		})
	}
}
