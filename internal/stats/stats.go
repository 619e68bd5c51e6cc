// Package stats holds the one percentile and the one millisecond rounding
// every figure gameday records is computed with, so that the runner, the
// load generator, the predictor and the flash-sale figures agree on what
// "p95" and "12.34 ms" mean.
package stats

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// Percentile is the nearest-rank p-th percentile (p in (0, 100]) of sorted
// values: the smallest value with at least p% of the values at or below it.
// With an even count the median is the lower of the two middle values. 0
// for no values. p at or below 0 gives the least value, above 100 the
// greatest.
func Percentile[T cmp.Ordered](sorted []T, p float64) T {
	var zero T
	if len(sorted) == 0 {
		return zero
	}
	// p×n/100, not p/100×n: 7/100 is not exact in binary, and 7/100×100
	// rounds up past 7.
	rank := int(math.Ceil(p*float64(len(sorted))/100)) - 1
	return sorted[min(max(rank, 0), len(sorted)-1)]
}

// PercentileOf is Percentile of values in any order; it sorts a copy.
func PercentileOf[T cmp.Ordered](values []T, p float64) T {
	s := slices.Clone(values)
	slices.Sort(s)
	return Percentile(s, p)
}

// MS is d in milliseconds, rounded to the hundredth: how every duration is
// written into run.json and the reports.
func MS(d time.Duration) float64 { return math.Round(float64(d)/1e4) / 100 }
