package drive

import (
	"github.com/gameday-dev/gameday/internal/stats"
	"slices"
	"time"

	"github.com/gameday-dev/gameday/gameday/judge"
	"github.com/gameday-dev/gameday/gameday/load"
	"github.com/gameday-dev/gameday/gameday/runrecord"
	"github.com/gameday-dev/gameday/scenarios"
)

func buildSeries(r *load.Report, runs []judge.Shopper, end time.Duration) runrecord.Series {
	n := int(end/time.Second) + 1
	s := runrecord.Series{Seconds: n, Arrivals: make([]int, n), Outcomes: map[string][]int{},
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

// podSeries is each pod's series, in an environment of pods: the shoppers
// of the shops on the pod when they arrived (a completed move takes its
// shop to its new pod from the moment the move ended).
func (d *drill) podSeries(r *load.Report, runs []judge.Shopper, end time.Duration, moves []runrecord.Move) []runrecord.Pod {
	if d.Scenario.Environment.Pods == 0 {
		return nil
	}
	home := map[string]string{}
	for _, sh := range d.Scenario.Shops {
		home[sh.Name] = sh.Pod
	}
	type hop struct {
		at time.Duration
		to string
	}
	hops := map[string][]hop{}
	for _, m := range moves {
		if m.Outcome == "completed" {
			hops[m.Shop] = append(hops[m.Shop], hop{at: time.Duration((m.AtMS + m.ReadOnlyMS) * float64(time.Millisecond)), to: m.To})
		}
	}
	podAt := func(shop string, t time.Duration) string {
		p := home[shop]
		for _, h := range hops[shop] {
			if t >= h.at {
				p = h.to
			}
		}
		return p
	}
	var out []runrecord.Pod
	for i := 1; i <= d.Scenario.Environment.Pods; i++ {
		name := scenarios.PodName(i)
		pod := runrecord.Pod{Name: name, Shops: []string{}}
		for _, sh := range d.Scenario.Shops {
			if sh.Pod == name {
				pod.Shops = append(pod.Shops, sh.Name)
			}
		}
		part := &load.Report{}
		var mine []judge.Shopper
		for k, s := range r.Shoppers {
			if podAt(s.Shop, s.Scheduled) == name {
				part.Shoppers = append(part.Shoppers, s)
				mine = append(mine, runs[k])
			}
		}
		pod.Series = buildSeries(part, mine, end)
		out = append(out, pod)
	}
	return out
}
