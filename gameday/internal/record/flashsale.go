package record

import (
	"math"

	"github.com/gameday-dev/gameday/gameday/flash"
	"github.com/gameday-dev/gameday/gameday/judge"
	"github.com/gameday-dev/gameday/gameday/load"
	"github.com/gameday-dev/gameday/gameday/runrecord"
)

// figures computes the run's flash-sale figures from what the shoppers saw
// and the provider's books (a shopper with an approved charge was
// charged).
func figures(r *load.Report, f *judge.Facts, maxInProgress int, oversold int64) flash.Figures {
	charged := map[string]bool{}
	for _, c := range f.Charges {
		if c.Status == "approved" {
			charged[c.CheckoutID] = true
		}
	}
	ss := make([]flash.Shopper, len(r.Shoppers))
	for i, s := range r.Shoppers {
		fs := flash.Shopper{Index: s.Index, Scheduled: s.Scheduled, Started: s.Started, Finished: s.Finished,
			Outcome: s.Outcome, Charged: charged[s.ID], Attempts: make([]flash.Attempt, len(s.Attempts))}
		for k, a := range s.Attempts {
			fs.Attempts[k] = flash.Attempt{At: a.At, Took: a.Took, Code: a.Code, Status: a.Status, Reason: a.Reason, Err: a.Err != ""}
		}
		ss[i] = fs
	}
	return flash.Compute(ss, maxInProgress, int(oversold))
}

// outside lists the figures observed outside their predicted [p5, p95].
func outside(f flash.Figures, p *runrecord.Prediction) []string {
	var out []string
	for _, n := range flash.Names() {
		r, ok := p.Figures[n.Key]
		v := f.Value(n.Key)
		if ok && !math.IsNaN(v) && (v < r.P5 || v > r.P95) {
			out = append(out, n.Key)
		}
	}
	return out
}
