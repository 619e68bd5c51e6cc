package scenarios

import (
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// PurchaseJourney is the name a stream's mix and a promise's journeys
// give the purchase.
const PurchaseJourney = "purchase"

// Stream is one more stream of arrivals on top of the load's stages (a
// store's steady traffic under a flash sale): its own stages, mix of
// journeys, patience and retries, on the drill's clock and seed
// (docs/journeys.md). The load's stages set the drill's length; a
// stream lasts no longer.
type Stream struct {
	// Name names the stream in reports; lower-case words joined by '-',
	// unique. Required.
	Name string `yaml:"name"`
	// Mix is the percentage of the stream's arrivals that make each
	// journey, by name: the system file's journeys, and purchase. The
	// percentages add up to 100. Required.
	Mix map[string]float64 `yaml:"mix"`
	// Stages are the stream's arrival rate, as the load's (a held stage
	// for a steady rate). Required.
	Stages []Stage `yaml:"stages"`
	// Patience is how long the stream's shoppers keep trying, their
	// journey's think times included; 0: the load's patience.
	Patience Duration `yaml:"patience"`
	// MaxRetries bounds their attempts after the first; nil: the load's
	// max_retries.
	MaxRetries *int `yaml:"max_retries"`
	// Recorded: the stream's arrivals are a recording's (a replay's
	// replay-NAME streams are), whose purchases were recorded as
	// purchases: its journeys' funnels (buy) bring none.
	Recorded bool `yaml:"recorded"`
}

// Journeys are the journeys the load's streams name, besides the
// purchase, in order.
func (l Load) Journeys() []string {
	var out []string
	for _, st := range l.Streams {
		for name := range st.Mix {
			if name != PurchaseJourney && !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	slices.Sort(out)
	return out
}

// Duration is how long the stream's stages last.
func (st Stream) Duration() time.Duration {
	var d time.Duration
	for _, s := range st.Stages {
		d += s.Duration.D()
	}
	return d
}

// streams checks the load's streams.
func (v *validator) streams() {
	l := v.s.Load
	total := v.s.TotalDuration()
	names := map[string]int{}
	for i, st := range l.Streams {
		p := "load.streams[" + strconv.Itoa(i) + "]"
		v.itemName(p, "streams", st.Name, i, names, nameRE, "required: lower-case words joined by '-', such as steady", "want lower-case words joined by '-' (at most 64 characters)")
		if len(st.Mix) == 0 {
			v.add(p+".mix", "required: the percentage of the stream's arrivals making each journey (browse: 70, cart: 25, purchase: 5)")
		}
		sum := 0.0
		for _, name := range slices.Sorted(maps.Keys(st.Mix)) {
			w := st.Mix[name]
			q := p + ".mix." + name
			switch {
			case !nameRE.MatchString(name) || len(name) > 64:
				v.add(q, "%s: a journey's name, lower-case words joined by '-'", clip(name))
			case math.IsNaN(w) || math.IsInf(w, 0) || w <= 0:
				v.add(q, "%g: want a percentage above 0", w)
			}
			sum += w
		}
		if len(st.Mix) > 0 && math.Abs(sum-100) > 1e-6 {
			v.add(p+".mix", "the percentages add up to %g, not 100", sum)
		}
		if len(st.Stages) == 0 {
			v.add(p+".stages", "required: at least one stage of {duration, target}")
		}
		arrivals := v.stages(p+".stages", st.Stages)
		if len(st.Stages) > 0 && !arrivals {
			v.add(p+".stages", "every target is 0: the stream has no arrivals")
		}
		if d := st.Duration(); d > total {
			v.add(p+".stages", "the stream lasts %s, longer than the load's stages (%s), which set the drill's length: end it sooner, or add a pause stage ({duration, target: 0}) to the load", d, total)
		}
		if st.Patience < 0 {
			v.add(p+".patience", "%s is negative", st.Patience)
		}
		if r := st.MaxRetries; r != nil && (*r < 0 || *r > maxRetries) {
			v.add(p+".max_retries", "%d is not between 0 and %d", *r, maxRetries)
		}
	}
}

// streamArrivals is the most arrivals the streams plan: a stream's
// arrivals, twice where its funnels may bring a purchase each.
func (l Load) streamArrivals() float64 {
	n := 0.0
	for _, st := range l.Streams {
		k := 2.0
		if st.Recorded {
			k = 1
		}
		n += k * Load{Stages: st.Stages}.plannedArrivals()
	}
	return n
}

// journeySelect checks the journeys a promise names: the purchase, or a
// journey of one of the load's streams.
func (v *validator) journeySelect(p string, sel Select) {
	known := append([]string{PurchaseJourney}, v.s.Load.Journeys()...)
	for j, n := range sel.Journeys {
		if !slices.Contains(known, n) {
			v.add(p+".journeys["+strconv.Itoa(j)+"]", "%s is no journey of the load's streams (%s)", clip(n), strings.Join(known, ", "))
		}
	}
}
