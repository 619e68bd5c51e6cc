package gameday

import (
	"github.com/gameday-dev/gameday/internal/stats"
	"slices"
	"time"

	"github.com/gameday-dev/gameday/gameday/judge"
	"github.com/gameday-dev/gameday/gameday/load"
)

func buildSeries(r *load.Report, runs []judge.Shopper, end time.Duration) Series {
	n := int(end/time.Second) + 1
	s := Series{Seconds: n, Arrivals: make([]int, n), Outcomes: map[string][]int{},
		P50MS: make([]float64, n), P95MS: make([]float64, n), P99MS: make([]float64, n)}
	at := func(d time.Duration) int { return min(max(int(d/time.Second), 0), n-1) }
	for _, sh := range r.Shoppers {
		if sh.Outcome == "" {
			continue
		}
		s.Arrivals[at(sh.Scheduled)]++
		if s.Outcomes[sh.Outcome] == nil {
			s.Outcomes[sh.Outcome] = make([]int, n)
		}
		s.Outcomes[sh.Outcome][at(sh.Finished)]++
	}
	per := make([][]time.Duration, n)
	for _, sr := range runs {
		for _, a := range sr.Attempts {
			per[at(a.At)] = append(per[at(a.At)], a.Latency)
		}
	}
	for i, ls := range per {
		if len(ls) > 0 {
			slices.Sort(ls)
			s.P50MS[i], s.P95MS[i], s.P99MS[i] = stats.MS(stats.Percentile(ls, 50)), stats.MS(stats.Percentile(ls, 95)), stats.MS(stats.Percentile(ls, 99))
		}
	}
	return s
}
