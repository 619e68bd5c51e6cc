package judge

import (
	"fmt"
	"time"

	"github.com/gameday-dev/gameday/scenarios"
)

// Sample is one reading of a metric the scenario promises on: when it was
// taken (from the start of the load) and its value, or why it could not be
// read.
type Sample struct {
	At  time.Duration
	V   float64
	Err error
}

// within reports whether v is below below and above above (each when set).
func within(v float64, below, above *float64) bool {
	return (below == nil || v < *below) && (above == nil || v > *above)
}

// metricExpectation: every sample of the window within the bounds, and at
// least one sample.
func metricExpectation(b *scenarios.MetricBound, samples []Sample, sampled bool, w Windows) ExpectationResult {
	var bounds string
	switch {
	case b.Below != nil && b.Above != nil:
		bounds = fmt.Sprintf("between %g and %g", *b.Above, *b.Below)
	case b.Below != nil:
		bounds = fmt.Sprintf("below %g", *b.Below)
	default:
		bounds = fmt.Sprintf("above %g", *b.Above)
	}
	r := ExpectationResult{Window: string(b.Window), Promise: fmt.Sprintf("%s stays %s %s", b.Query, bounds, WindowWords(b.Window))}
	if !sampled {
		r.Observed = "not sampled"
		return r
	}
	n, bad := 0, 0
	var lo, hi float64
	for _, s := range samples {
		if !w.Contains(b.Window, s.At) {
			continue
		}
		if s.Err != nil {
			r.Observed = "could not be read: " + s.Err.Error()
			return r
		}
		if n == 0 || s.V < lo {
			lo = s.V
		}
		if n == 0 || s.V > hi {
			hi = s.V
		}
		n++
		if !within(s.V, b.Below, b.Above) {
			bad++
		}
	}
	if n == 0 {
		r.Observed = "no sample in that window"
		return r
	}
	r.Held = bad == 0
	r.Observed = fmt.Sprintf("%g to %g over %d samples (%d outside)", lo, hi, n, bad)
	return r
}
