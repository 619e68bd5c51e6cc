package judge

import (
	"sort"
	"time"

	"github.com/gameday-dev/gameday/scenarios"
)

// NewWindows are the windows of a run that ended at end, from the real
// spans of the scenario's faults (those that started).
func NewWindows(faults []scenarios.Fault, ft FaultTimes, end time.Duration) Windows {
	w := Windows{End: end}
	for _, f := range faults {
		if sp, ok := ft[f.Name]; ok {
			w.Faults = append(w.Faults, sp)
		}
	}
	sort.Slice(w.Faults, func(i, j int) bool { return w.Faults[i].From < w.Faults[j].From })
	return w
}

// Latencies are the latencies of the attempts sent in window.
func Latencies(shoppers []Shopper, w Windows, window scenarios.Window) []time.Duration {
	var out []time.Duration
	for _, s := range shoppers {
		for _, a := range s.Attempts {
			if w.Contains(window, a.At) {
				out = append(out, a.Latency)
			}
		}
	}
	return out
}
