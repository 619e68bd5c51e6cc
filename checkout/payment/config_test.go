package payment

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

func TestConfigValidate(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name string
		cfg  Config
		// want lists, per expected problem, the field and the value the
		// error must name; empty means valid.
		want [][2]string
	}{
		// The zero value is a valid, instant, always-approving provider.
		{name: "zero", cfg: Config{}},
		// Every knob set to a sensible value.
		{name: "full", cfg: Config{MinLatency: 10 * ms, MaxLatency: 20 * ms, TailProbability: 0.01,
			TailLatency: time.Second, DeclineRate: 0.3, Slots: 4, Seed: -7}},
		// Min == Max is a fixed latency.
		{name: "fixed latency", cfg: Config{MinLatency: 5 * ms, MaxLatency: 5 * ms}},
		// Rates at both ends of their range are allowed.
		{name: "rates at bounds", cfg: Config{TailProbability: 1, TailLatency: ms, DeclineRate: 1}},
		// A tail size without a probability is a disabled tail, allowed.
		{name: "tail latency alone", cfg: Config{TailLatency: time.Second}},
		// A negative minimum; the maximum of 0 is still above it.
		{name: "negative min", cfg: Config{MinLatency: -ms}, want: [][2]string{{"MinLatency", "-1ms"}}},
		// A negative maximum is negative and below the minimum of 0.
		{name: "negative max", cfg: Config{MaxLatency: -ms},
			want: [][2]string{{"MaxLatency", "-1ms"}, {"MaxLatency", "-1ms"}}},
		// Max below Min is an error, not a swap.
		{name: "max below min", cfg: Config{MinLatency: 20 * ms, MaxLatency: 10 * ms},
			want: [][2]string{{"MaxLatency", "10ms"}}},
		// A minimum with no maximum is Max < Min too.
		{name: "min without max", cfg: Config{MinLatency: 20 * ms}, want: [][2]string{{"MaxLatency", "0s"}}},
		// Probabilities above 1 are rejected.
		{name: "tail probability above 1", cfg: Config{TailProbability: 1.5, TailLatency: ms},
			want: [][2]string{{"TailProbability", "1.5"}}},
		// Negative probabilities are rejected.
		{name: "tail probability negative", cfg: Config{TailProbability: -0.1},
			want: [][2]string{{"TailProbability", "-0.1"}}},
		// NaN compares false with everything and must still be caught.
		{name: "tail probability NaN", cfg: Config{TailProbability: math.NaN(), TailLatency: ms},
			want: [][2]string{{"TailProbability", "NaN"}}},
		// A tail that may happen but has no size is a mistake.
		{name: "tail probability without latency", cfg: Config{TailProbability: 0.2},
			want: [][2]string{{"TailLatency", "0s"}}},
		// A negative tail mean is rejected.
		{name: "negative tail latency", cfg: Config{TailLatency: -time.Second},
			want: [][2]string{{"TailLatency", "-1s"}}},
		// Decline rate above 1.
		{name: "decline rate above 1", cfg: Config{DeclineRate: 2}, want: [][2]string{{"DeclineRate", "2"}}},
		// Decline rate NaN.
		{name: "decline rate NaN", cfg: Config{DeclineRate: math.NaN()}, want: [][2]string{{"DeclineRate", "NaN"}}},
		// Negative slots; 0 is the way to say "no limit".
		{name: "negative slots", cfg: Config{Slots: -1}, want: [][2]string{{"Slots", "-1"}}},
		// Every problem is reported at once, not only the first.
		{name: "several problems", cfg: Config{DeclineRate: -1, Slots: -3},
			want: [][2]string{{"DeclineRate", "-1"}, {"Slots", "-3"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				if _, err := NewServer(tt.cfg, nil); err != nil {
					t.Fatalf("NewServer() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want errors about %v", tt.want)
			}
			var got []*ConfigError
			for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
				var ce *ConfigError
				if !errors.As(e, &ce) {
					t.Fatalf("error %v is not a *ConfigError", e)
				}
				got = append(got, ce)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("Validate() reported %d problems, want %d: %v", len(got), len(tt.want), err)
			}
			for i, w := range tt.want {
				if got[i].Field != w[0] || got[i].Value != w[1] {
					t.Errorf("problem %d = %s %s, want %s %s", i, got[i].Field, got[i].Value, w[0], w[1])
				}
				if msg := got[i].Error(); !strings.Contains(msg, w[0]) || !strings.Contains(msg, w[1]) {
					t.Errorf("message %q does not name field %s and value %s", msg, w[0], w[1])
				}
			}
			_, nerr := NewServer(tt.cfg, nil)
			var ce *ConfigError
			if !errors.As(nerr, &ce) || !strings.HasPrefix(nerr.Error(), "create payment server: ") {
				t.Fatalf("NewServer() = %v, want a wrapped *ConfigError", nerr)
			}
		})
	}
}

func TestDrawSameSeedAndKeySameOutcome(t *testing.T) {
	cfg := Config{MinLatency: 10 * time.Millisecond, MaxLatency: 90 * time.Millisecond,
		TailProbability: 0.2, TailLatency: time.Second, DeclineRate: 0.4, Seed: 42}
	keys := make([]string, 200)
	for i := range keys {
		keys[i] = fmt.Sprintf("co-%d-1", i)
	}
	forward := make(map[string]outcome)
	for _, k := range keys {
		forward[k] = cfg.draw(k)
	}
	// Drawing in another order, from a copy of the config, changes nothing.
	again := cfg
	for i := len(keys) - 1; i >= 0; i-- {
		if got := again.draw(keys[i]); got != forward[keys[i]] {
			t.Fatalf("draw(%q) = %+v, then %+v", keys[i], forward[keys[i]], got)
		}
	}
	// Another seed gives other outcomes.
	other := cfg
	other.Seed = 43
	differ := 0
	for _, k := range keys {
		if other.draw(k) != forward[k] {
			differ++
		}
	}
	if differ < len(keys)/2 {
		t.Errorf("seed 43 changed only %d of %d outcomes", differ, len(keys))
	}
	// The decline decision does not depend on the latency settings.
	plain := Config{DeclineRate: cfg.DeclineRate, Seed: cfg.Seed}
	for _, k := range keys {
		if plain.draw(k).declined != forward[k].declined {
			t.Fatalf("key %q: decision changed with the latency settings", k)
		}
	}
}

func TestDrawLatency(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name     string
		cfg      Config
		min, max time.Duration // bounds every latency must respect
		tails    bool          // whether nearly every latency must exceed MaxLatency
	}{
		// No latency configured: every draw is zero.
		{name: "none", cfg: Config{}, min: 0, max: 0},
		// A fixed latency.
		{name: "fixed", cfg: Config{MinLatency: 7 * ms, MaxLatency: 7 * ms}, min: 7 * ms, max: 7 * ms},
		// Uniform between the bounds.
		{name: "uniform", cfg: Config{MinLatency: 10 * ms, MaxLatency: 20 * ms}, min: 10 * ms, max: 20 * ms},
		// A tail that always happens only adds to the uniform part.
		{name: "always tail", cfg: Config{MinLatency: 10 * ms, MaxLatency: 20 * ms, TailProbability: 1,
			TailLatency: 100 * ms}, min: 10 * ms, max: time.Hour, tails: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			beyond := 0
			for i := range 1000 {
				l := tt.cfg.draw(fmt.Sprint("k", i)).latency
				if l < tt.min || l > tt.max {
					t.Fatalf("latency %v outside [%v, %v]", l, tt.min, tt.max)
				}
				if l > tt.cfg.MaxLatency {
					beyond++
				}
			}
			if tt.tails && beyond < 900 {
				t.Errorf("only %d of 1000 latencies got a tail, want nearly all", beyond)
			}
		})
	}
}

func TestDrawDeclineRate(t *testing.T) {
	tests := []struct {
		name     string
		rate     float64
		min, max int // accepted number of declines out of 1000 keys
	}{
		// Nothing is declined at rate 0.
		{name: "never", rate: 0, min: 0, max: 0},
		// Everything is declined at rate 1.
		{name: "always", rate: 1, min: 1000, max: 1000},
		// About 300 at rate 0.3; the band is more than four standard
		// deviations (about 14.5) wide on each side.
		{name: "thirty percent", rate: 0.3, min: 240, max: 360},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, seed := range []int64{1, 2, 3} {
				cfg := Config{DeclineRate: tt.rate, Seed: seed}
				declined := 0
				for i := range 1000 {
					if cfg.draw(fmt.Sprintf("co-%d-1", i)).declined {
						declined++
					}
				}
				if declined < tt.min || declined > tt.max {
					t.Errorf("seed %d: %d of 1000 declined, want [%d, %d]", seed, declined, tt.min, tt.max)
				}
			}
		})
	}
}
