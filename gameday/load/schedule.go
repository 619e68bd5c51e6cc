package load

import (
	"math"
	"time"
)

// Schedule returns every arrival's offset from the start of the sale,
// computed from the stages alone: arrival i (from 0) is due when the
// integral of the arrival rate reaches i+1. Within a stage the rate is
// linear, so the integral is a quadratic and each offset is its root, in
// closed form; fractions of an arrival carry over from one stage to the
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
		area += (prev + r) / 2 * st.Duration.Seconds()
		prev = r
	}
	return math.Floor(area + epsilon(area))
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
