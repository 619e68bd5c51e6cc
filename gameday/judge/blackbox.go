package judge

import (
	"fmt"
	"time"

	"github.com/gameday-dev/gameday/scenarios"
)

// slice is how the answers are cut to follow the share of fast refusals,
// and settle how long it must stay down to count as fallen.
const (
	slice  = 500 * time.Millisecond
	settle = 2 * time.Second
)

// fastRefusalsExpectation judges a breaker from outside: the share of the
// answers in each slice that were refusals (unavailable) answered in under
// f.Below rises to f.Share within f.RisesWithin of the fault's start, and
// with f.FallsWithin drops below it within that of the fault's end,
// staying below for settle (or to the end of the load).
func fastRefusalsExpectation(f *scenarios.FastRefusals, shoppers []Shopper, ft FaultTimes, end time.Duration) ExpectationResult {
	r := ExpectationResult{Window: "during", Promise: fmt.Sprintf("at least %g%% of answers are refusals in under %s within %s of fault %s's start", f.Share*100, f.Below.D(), f.RisesWithin.D(), f.Fault)}
	if f.FallsWithin > 0 {
		r.Promise += fmt.Sprintf(", and fewer within %s of its end", f.FallsWithin.D())
	}
	sp, ok := ft[f.Fault]
	if !ok {
		r.Observed = "the fault " + f.Fault + " never started"
		return r
	}
	share := func(from, to time.Duration) (float64, bool) {
		n, k := 0, 0
		for _, s := range shoppers {
			for _, a := range s.Attempts {
				if a.At < from || a.At >= to {
					continue
				}
				n++
				if a.Status == "unavailable" && a.Latency < f.Below.D() {
					k++
				}
			}
		}
		if n == 0 {
			return 0, false
		}
		return float64(k) / float64(n), true
	}
	rose := time.Duration(-1)
	var peak float64
	for t := sp.From; t < end && t < sp.To+slice; t += slice {
		s, ok := share(t, t+slice)
		if ok {
			peak = max(peak, s)
		}
		if ok && s >= f.Share {
			rose = t + slice - sp.From
			break
		}
	}
	if rose < 0 {
		r.Observed = fmt.Sprintf("never rose (at most %.0f%% of answers)", peak*100)
		return r
	}
	r.Observed = fmt.Sprintf("rose after %s", rose.Round(time.Millisecond))
	r.Held = rose <= f.RisesWithin.D()
	if f.FallsWithin <= 0 {
		return r
	}
	fell := time.Duration(-1)
	for t := sp.To; t < end; t += slice {
		stays := true
		for u := t; u < min(end, t+settle); u += slice {
			if s, ok := share(u, u+slice); ok && s >= f.Share {
				stays = false
				break
			}
		}
		if stays {
			fell = t - sp.To
			break
		}
	}
	if fell < 0 {
		r.Observed += "; never fell after the fault's end"
		r.Held = false
		return r
	}
	r.Observed += fmt.Sprintf("; fell %s after the fault's end", fell.Round(time.Millisecond))
	r.Held = r.Held && fell <= f.FallsWithin.D()
	return r
}
