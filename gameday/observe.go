package gameday

import (
	"time"

	"github.com/gameday-dev/gameday/gameday/judge"
	"github.com/gameday-dev/gameday/gameday/load"
)

// shoppers turns the load's report into the shoppers judging reads, one
// view of each for the promises and the books alike.
func shoppers(r *load.Report) []judge.Shopper {
	out := make([]judge.Shopper, 0, len(r.Shoppers))
	for _, s := range r.Shoppers {
		v := judge.Shopper{ID: s.ID, Shop: s.Shop, Scheduled: s.Scheduled, Outcome: judge.Outcome(s.Outcome), LeftAt: r.Start.Add(s.Deadline), Cut: s.Cut, Finished: s.Finished}
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
			// The last pending answer's time. A refusal after it
			// ("come back", a poll that found the store down) leaves the
			// shopper knowing its purchase was accepted; only a final
			// answer that it failed unsays it.
			if a.Code != 0 {
				switch {
				case a.Status == load.MeansRetryLater.String():
					v.ToldPending = r.Start.Add(a.At + a.Took)
				case a.Status != load.MeansUnavailable.String() && a.Status != load.MeansNext.String():
					v.ToldPending = time.Time{}
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
