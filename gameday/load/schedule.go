package load

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// Schedule returns every arrival's offset from the start of the sale,
// computed from the stages alone: arrival i (from 0) is due when the
// integral of the arrival rate reaches i+1. Within a stage the rate is
// linear (a held stage's is flat), so the integral is a quadratic and each
// offset is its root, in closed form; fractions of an arrival carry over from one stage to the
// next. The result is non-decreasing, has floor(total area) entries, and is
// the same for the same stages.
//
// Schedule expects stages that passed Plan.Validate: a stage with a
// non-positive Duration is skipped, and a negative or non-finite Target
// counts as 0.
func Schedule(stages []Stage) []time.Duration {
	n := arrivals(stages)
	if n > ArrivalLimit {
		n = ArrivalLimit
	}
	out := make([]time.Duration, 0, int(n))
	var (
		base time.Duration // the stage's start offset
		done float64       // the integral at the stage's start
		prev float64       // the rate at the stage's start
	)
	for _, st := range stages {
		if st.Duration <= 0 {
			continue
		}
		r0, r1 := prev, rate(st.Target)
		if st.Hold {
			r0 = r1
		}
		d := st.Duration.Seconds()
		end := done + (r0+r1)/2*d
		slope := (r1 - r0) / d
		for k := len(out) + 1; float64(k) <= end+epsilon(end) && len(out) < cap(out); k++ {
			// The integral within the stage is r0·t + slope·t²/2; solve
			// it for a = k - done. This form of the root has no
			// cancellation and covers slope = 0 (t = a/r0) and ramps down.
			a := float64(k) - done
			disc := math.Max(r0*r0+2*slope*a, 0)
			t := 2 * a / (r0 + math.Sqrt(disc))
			if math.IsNaN(t) || t > d {
				t = d
			}
			out = append(out, base+time.Duration(math.Round(t*1e9)))
		}
		done, base, prev = end, base+st.Duration, r1
	}
	return out
}

// arrivals is the number of arrivals the stages give: the floor of the area
// under the rate.
func arrivals(stages []Stage) float64 {
	var area, prev float64
	for _, st := range stages {
		if st.Duration <= 0 {
			continue
		}
		r := rate(st.Target)
		if st.Hold {
			prev = r
		}
		area += (prev + r) / 2 * st.Duration.Seconds()
		prev = r
	}
	return math.Floor(area + epsilon(area))
}

// PerSecond is the arrivals the stages plan in each of the first n
// seconds: the area under the rate over [i s, i+1 s). Schedule's
// arrivals in a second differ from it by less than one.
func PerSecond(stages []Stage, n int) []float64 {
	out := make([]float64, max(n, 0))
	var t0, prev float64
	for _, st := range stages {
		if st.Duration <= 0 {
			continue
		}
		d := st.Duration.Seconds()
		r0, r1 := prev, rate(st.Target)
		if st.Hold {
			r0 = r1
		}
		at := func(t float64) float64 { return r0 + (r1-r0)*(t-t0)/d }
		for i := int(t0); i < n && float64(i) < t0+d; i++ {
			a, b := math.Max(float64(i), t0), math.Min(float64(i+1), t0+d)
			if b > a {
				out[i] += (at(a) + at(b)) / 2 * (b - a)
			}
		}
		t0, prev = t0+d, r1
	}
	return out
}

// epsilon absorbs floating-point error, so that 1,000/s for 2 s is 2,000
// arrivals and not 1,999.
func epsilon(x float64) float64 { return 1e-9 * math.Max(1, x) }

func rate(target float64) float64 {
	if math.IsNaN(target) || math.IsInf(target, 0) || target < 0 {
		return 0
	}
	return target
}

// Arrival is one arrival of a plan: when it is due, from the start of the
// sale, the shop it is for ("" in a plan without shops), the journey it
// makes ("" for the purchase) and the stream it came from (0: the plan's
// own stages and shops; k: Plan.Streams[k-1]).
type Arrival struct {
	At      time.Duration
	Shop    string
	Journey string
	Stream  int
	// Visitor is, for a funnel's purchase, the index + 1 of the visit it
	// follows (0: none).
	Visitor int
}

// Arrivals returns every arrival of the plan in time order: the arrivals
// of its Stages ([Schedule]), each given to a shop without stages of its
// own in turn, merged with the arrivals of each shop's own stages. At the
// same instant the plan's come first, then the shops' in their order. The
// same plan gives the same arrivals. It expects a plan that passed
// Validate.
func (p Plan) Arrivals() []Arrival {
	base := Schedule(p.Stages)
	var background []string
	for _, sh := range p.Shops {
		if len(sh.Stages) == 0 {
			background = append(background, sh.Name)
		}
	}
	out := make([]Arrival, len(base))
	for k, at := range base {
		out[k].At = at
		if len(background) > 0 {
			out[k].Shop = background[k%len(background)]
		}
	}
	for _, sh := range p.Shops {
		if len(sh.Stages) == 0 {
			continue
		}
		own := Schedule(sh.Stages)
		merged := make([]Arrival, 0, len(out)+len(own))
		i := 0
		for _, at := range own {
			for i < len(out) && out[i].At <= at {
				merged = append(merged, out[i])
				i++
			}
			merged = append(merged, Arrival{At: at, Shop: sh.Name})
		}
		out = append(merged, out[i:]...)
	}
	if len(p.Streams) > 0 {
		out = p.streamArrivals(out, background)
	}
	if len(out) > ArrivalLimit {
		out = out[:ArrivalLimit]
	}
	return out
}

// streamArrivals merges the streams' arrivals into out, in time order: at
// the same instant out's first, then the streams' in their order. Arrival
// k of stream s makes the journey drawn from the plan's seed, s and k; a
// journey that ends in a purchase brings the purchase as an arrival of its
// own, drawn likewise. A stream's arrivals go round robin to the
// background shops, as the plan's do.
func (p Plan) streamArrivals(out []Arrival, background []string) []Arrival {
	// Each arrival carries its place before the sort (from), and a
	// funnel's purchase the place of its visit (Visitor, for now), so that
	// the purchase can name its visit's index after it.
	type placed struct {
		Arrival
		from int
	}
	all := make([]placed, len(out), len(out)*2)
	for i, a := range out {
		all[i] = placed{a, i}
	}
	for s, st := range p.Streams {
		var total float64
		for _, sh := range st.Mix {
			total += sh.Weight
		}
		var src rand.PCG
		// The stream's own generator: its draws do not move when another
		// stream is added, nor the shoppers' own (seeded by index).
		src.Seed(uint64(p.Seed), 1<<40+uint64(s))
		draw := func() float64 { return float64(src.Uint64()>>11) / (1 << 53) }
		for k, at := range Schedule(st.Stages) {
			a := Arrival{At: at, Stream: s + 1}
			if len(background) > 0 {
				a.Shop = background[k%len(background)]
			}
			x, sum := draw()*total, 0.0
			a.Journey = st.Mix[len(st.Mix)-1].Journey
			for _, sh := range st.Mix {
				if sum += sh.Weight; x < sum {
					a.Journey = sh.Journey
					break
				}
			}
			visit := len(all)
			all = append(all, placed{a, visit})
			// Every arrival draws whether it buys, so that a journey's
			// buy share changes none of the later arrivals' journeys.
			buys := draw()
			if j := p.journey(a.Journey); j != nil && !st.Recorded && buys < j.Buy {
				all = append(all, placed{Arrival{At: at + j.BuyAfter, Shop: a.Shop, Stream: s + 1, Visitor: visit + 1}, len(all)})
			}
		}
	}
	// Stable: out's arrivals before the streams', the streams' in order.
	slices.SortStableFunc(all, func(a, b placed) int { return cmp.Compare(a.At, b.At) })
	at := make([]int, len(all)) // place before the sort -> index after it
	for i, a := range all {
		at[a.from] = i
	}
	sorted := make([]Arrival, len(all))
	for i, a := range all {
		sorted[i] = a.Arrival
		if a.Visitor > 0 {
			sorted[i].Visitor = at[a.Visitor-1] + 1
		}
	}
	return sorted
}

// Offsets is when each of the plan's arrivals is due ([Plan.Arrivals]'
// times), in order.
func (p Plan) Offsets() []time.Duration {
	as := p.Arrivals()
	out := make([]time.Duration, len(as))
	for i, a := range as {
		out[i] = a.At
	}
	return out
}
