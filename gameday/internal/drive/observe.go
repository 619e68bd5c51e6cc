package drive

import (
	"time"

	"github.com/gameday-dev/gameday/gameday/judge"
	"github.com/gameday-dev/gameday/gameday/load"
)

// shoppers turns the load's report into the shoppers judging reads, one
// view of each for the promises and the books alike.
func shoppers(r *load.Report) []judge.Shopper { return observed(r, r.Shoppers) }

// visits turns the report's visits (the journeys that do not buy) into
// what judging reads of them: the promises narrowed to journeys.
func visits(r *load.Report) []judge.Shopper { return observed(r, r.Visits) }

func observed(r *load.Report, from []*load.Shopper) []judge.Shopper {
	out := make([]judge.Shopper, 0, len(from))
	for _, s := range from {
		v := judge.Shopper{ID: s.ID, Shop: s.Shop, Journey: s.Journey, Scheduled: s.Scheduled, Outcome: judge.Outcome(s.Outcome), LeftAt: r.Start.Add(s.Deadline), Cut: s.Cut, Finished: s.Finished}
		pendingStep := -1
		for i, a := range s.Attempts {
			lat := a.Took
			if i == 0 {
				lat += s.Started - s.Scheduled // from the scheduled start
			}
			st := a.Status
			if a.Code == 0 {
				st = "error"
			}
			v.Attempts = append(v.Attempts, judge.Attempt{At: a.At, Latency: lat, Status: st, Degraded: a.Degraded})
			// The last pending answer's time, for the step it answered.
			// A refusal after it on that step ("come back", a poll that
			// found the store down) leaves the shopper knowing its
			// purchase was accepted; a final answer that it failed
			// unsays it, and so does the step going on (next): a hold
			// that was pending and went through says nothing of the
			// payment after it.
			if a.Step != pendingStep {
				v.ToldPending, pendingStep = time.Time{}, -1
			}
			if a.Code != 0 {
				switch {
				case a.Status == load.MeansRetryLater.String():
					v.ToldPending, pendingStep = r.Start.Add(a.At+a.Took), a.Step
				case a.Status != load.MeansUnavailable.String():
					v.ToldPending, pendingStep = time.Time{}, -1
				}
			}
		}
		// What the shopper was told is its last attempt's answer: a "come
		// back" it acted on, then an attempt it left before the answer
		// came, told it nothing final.
		if n := len(s.Attempts); n > 0 && s.Attempts[n-1].Code != 0 {
			v.Told = s.Attempts[n-1].Status
		}
		out = append(out, v)
	}
	return out
}
