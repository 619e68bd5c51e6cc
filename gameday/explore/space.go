// Package explore searches the fault space of a described system: seeded
// trials, each a short drill with a fault schedule drawn from the seed,
// judged by the books' invariants; a failing trial is replayed, then
// shrunk to the smallest schedule that still fails, and written out as a
// scenario. This file says what can be drawn; draw.go draws it,
// shrink.go shrinks it, scenario.go turns it into a scenario.
package explore

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/gameday-dev/gameday/scenarios"
)

// Family is one kind of fault a trial may draw: a Toxiproxy toxic, one of
// gameday's request-aware toxics, the dependency down, or its process
// killed, paused or restarted. A toxic's attributes come from an
// intensity in (0, 1]: 1 is the harshest of the family; the others have
// none.
type Family struct {
	Name string
	// RequestAware: only gameday's Toxiproxy serves it, on a proxy with a
	// relay behind it.
	RequestAware bool
	// Process: it acts on the dependency's process (a process fault), so
	// only on a dependency whose process handle can do it (Space.On).
	Process bool
	// Cache, for a cache fault, is the fault at an intensity: it acts on
	// a Redis dependency's data, so only on one that speaks Redis; one
	// that clears keys (Clears) never on a dependency the books are read
	// from (Space.On).
	Cache func(intensity float64) *scenarios.Cache
	attrs func(intensity float64) map[string]any
}

// HTTP reports whether the family reads HTTP requests, so acts only on a
// dependency that speaks plain HTTP (Space.On).
func (f Family) HTTP() bool { return scenarios.ReadsHTTP(f.Name) }

// Clears reports whether the family's faults delete or expire keys.
func (f Family) Clears() bool { return f.Cache != nil && f.Cache(1).Clears() }

// intense reports whether the family's faults have an intensity to
// soften: a toxic's attributes, or a cache fault that differs with it
// (an expiry's interval).
func (f Family) intense() bool {
	return f.attrs != nil || (f.Cache != nil && *f.Cache(0.25) != *f.Cache(1))
}

// ms is a duration attribute, in whole milliseconds, as a scenario writes
// it.
func ms(v float64) string { return fmt.Sprintf("%dms", int64(math.Round(v))) }

// whole is a count attribute, at least lo.
func whole(v float64, lo int) int { return max(lo, int(math.Round(v))) }

// share is a probability with two decimals.
func share(v float64) float64 { return math.Round(v*100) / 100 }

// Families are every family explore knows, by name. The intensities are
// scaled so that 1 is a fault no checkout shrugs off (3 s of latency, one
// byte and the connection closed) and the lowest a fault many do.
var Families = []Family{
	{Name: "latency", attrs: func(i float64) map[string]any {
		return map[string]any{"latency": ms(100 + 2900*i)}
	}},
	{Name: "timeout", attrs: func(i float64) map[string]any {
		// A shorter timeout cuts the connection sooner: harsher.
		return map[string]any{"timeout": ms(3000*(1-i) + 1)}
	}},
	{Name: "reset_peer", attrs: func(i float64) map[string]any {
		return map[string]any{"timeout": ms(1000 * (1 - i))}
	}},
	{Name: "limit_data", attrs: func(i float64) map[string]any {
		// 1 byte at full intensity: the answer's first byte, then closed.
		return map[string]any{"bytes": whole(4096*(1-i), 1)}
	}},
	{Name: "slicer", attrs: func(i float64) map[string]any {
		return map[string]any{"average_size": whole(64*(1-i), 1), "delay": ms(20 * i)}
	}},
	{Name: "bandwidth", attrs: func(i float64) map[string]any {
		return map[string]any{"rate": whole(100*(1-i), 1)}
	}},
	{Name: "slow_close", attrs: func(i float64) map[string]any {
		return map[string]any{"delay": ms(3000 * i)}
	}},
	{Name: "down"},
	{Name: "lost_reply", RequestAware: true, attrs: func(i float64) map[string]any {
		return map[string]any{"probability": share(0.05 + 0.45*i)}
	}},
	{Name: "http_lost_response", RequestAware: true, attrs: func(i float64) map[string]any {
		return map[string]any{"probability": share(0.05 + 0.45*i)}
	}},
	{Name: "http_error", RequestAware: true, attrs: func(i float64) map[string]any {
		return map[string]any{"status": 503, "probability": share(0.05 + 0.45*i)}
	}},
	{Name: "http_latency", RequestAware: true, attrs: func(i float64) map[string]any {
		return map[string]any{"latency": ms(100 + 2900*i)}
	}},
	// Last, so that a search without them draws what it drew before they
	// were known. kill: SIGKILL, started again when the fault ends;
	// pause: SIGSTOP, SIGCONT when it ends; restart: killed and started
	// again at once, the fault's length its recovery window.
	{Name: "kill", Process: true},
	{Name: "pause", Process: true},
	{Name: "restart", Process: true},
	// After those, for the same reason. A search knows no key of the
	// system's, so a flush or an expiry clears every key of the Redis's
	// database: every cached answer at once. The expiry repeats, more
	// often the harsher it is; the memory limit holds the Redis at 95 %
	// of what it uses with noeviction, refusing every write and losing
	// nothing, so that it may be drawn on a store of the books too.
	{Name: "cache_flush", Cache: func(float64) *scenarios.Cache { return &scenarios.Cache{Flush: "*"} }},
	{Name: "cache_expire", Cache: func(i float64) *scenarios.Cache {
		return &scenarios.Cache{Expire: "*", Every: scenarios.Duration(time.Duration(2000-1800*i) * time.Millisecond)}
	}},
	{Name: "cache_limit", Cache: func(float64) *scenarios.Cache {
		return &scenarios.Cache{MaxMemory: "95%", Policy: "noeviction"}
	}},
}

// FamilyByName returns the family named name.
func FamilyByName(name string) (Family, bool) {
	i := slices.IndexFunc(Families, func(f Family) bool { return f.Name == name })
	if i < 0 {
		return Family{}, false
	}
	return Families[i], true
}

// FamilyNames are the names of Families, in their order.
func FamilyNames() []string {
	out := make([]string, len(Families))
	for i, f := range Families {
		out[i] = f.Name
	}
	return out
}

// Phase is a part of the sale a fault may begin in.
type Phase struct {
	Name     string
	From, To time.Duration
}

// The phases of a sale, in order.
const (
	PhaseRamp    = "before the peak"
	PhasePeak    = "at the peak"
	PhaseSellout = "as it sells out"
	PhaseSettle  = "while payments settle"
)

// PhaseNames are the phases a coverage table shows, in order.
var PhaseNames = []string{PhaseRamp, PhasePeak, PhaseSellout, PhaseSettle}

// Phases divides base's load into the phases a fault can begin in: the
// ramp before the highest stage, that stage, a window of a second either
// side of the moment the arrivals reach the stock (when they do), and the
// last quarter of the load, when the last purchases' payments settle. A
// phase of no length (a load that starts at its peak has no ramp) is left
// out.
func Phases(base *scenarios.Scenario) []Phase {
	total := base.TotalDuration()
	var peakFrom, peakTo time.Duration
	var at time.Duration
	best := -1.0
	for _, st := range base.Load.Stages {
		d := st.Duration.D()
		if st.Target > best {
			best, peakFrom, peakTo = st.Target, at, at+d
		}
		at += d
	}
	var out []Phase
	add := func(name string, from, to time.Duration) {
		from, to = max(from, 0), min(to, total)
		if to > from {
			out = append(out, Phase{Name: name, From: from, To: to})
		}
	}
	add(PhaseRamp, 0, peakFrom)
	add(PhasePeak, peakFrom, peakTo)
	if so, ok := sellout(base); ok {
		add(PhaseSellout, so-time.Second, so+time.Second)
	}
	add(PhaseSettle, total*3/4, total)
	return out
}

// sellout is when the arrivals of base's load reach its stock: the moment
// the sale could sell out, were every arrival to buy one unit.
func sellout(base *scenarios.Scenario) (time.Duration, bool) {
	if base.Stock <= 0 {
		return 0, false
	}
	need := float64(base.Stock)
	var at time.Duration
	prev := 0.0
	for _, st := range base.Load.Stages {
		d := st.Duration.D().Seconds()
		// Arrivals over a linear ramp from prev to target (or held at it).
		prev = st.StartRate(prev)
		got := st.Arrivals(prev)
		if got >= need && d > 0 {
			// Solve prev*t + (target-prev)*t²/(2d) = need for t.
			a, b, c := (st.Target-prev)/(2*d), prev, -need
			t := 0.0
			if a == 0 {
				t = need / b
			} else {
				t = (-b + math.Sqrt(b*b-4*a*c)) / (2 * a)
			}
			return at + time.Duration(t*float64(time.Second)), true
		}
		need -= got
		prev = st.Target
		at += st.Duration.D()
	}
	return 0, false
}

// ParseFamilies reads a comma-separated list of family names; empty is
// every family.
func ParseFamilies(list string) ([]string, error) {
	if strings.TrimSpace(list) == "" {
		return FamilyNames(), nil
	}
	var out []string
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		if _, ok := FamilyByName(n); !ok {
			return nil, fmt.Errorf("no fault family %q: the families are %s", n, strings.Join(FamilyNames(), ", "))
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out, nil
}
