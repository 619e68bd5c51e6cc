package load

import (
	"errors"
	"fmt"
	"github.com/gameday-dev/gameday/internal/stats"
	"slices"
	"time"
)

// Shard is one part of a plan's arrivals, for a sale whose load comes from
// several processes or machines (docs/scale.md): arrival i belongs to
// shard i mod Of. Every shard keeps the ramp's shape (each sends every
// Of-th arrival, at its planned instant), and the arrivals, their instants
// and their choices are those of the whole plan, whatever Of is: a
// shopper's choices are seeded by the plan's seed and its own index. The
// zero Shard is the whole plan.
type Shard struct {
	Index, Of int
}

// Validate reports a shard that cannot be.
func (s Shard) Validate() error {
	switch {
	case s.Of < 0:
		return fmt.Errorf("shard of %d: must not be negative (0 or 1: the whole plan)", s.Of)
	case s.Of <= 1 && s.Index != 0:
		return fmt.Errorf("shard %d of %d: the whole plan is shard 0", s.Index, s.Of)
	case s.Of > 1 && (s.Index < 0 || s.Index >= s.Of):
		return fmt.Errorf("shard %d of %d: want 0 to %d", s.Index, s.Of, s.Of-1)
	}
	return nil
}

// Has reports whether arrival i is this shard's.
func (s Shard) Has(i int) bool { return s.Of <= 1 || i%s.Of == s.Index }

// Count is how many of a plan's n arrivals are the shard's.
func (s Shard) Count(n int) int {
	if s.Of <= 1 {
		return n
	}
	c := n / s.Of
	if s.Index < n%s.Of {
		c++
	}
	return c
}

// pool is the shard's part of a pool of size shoppers: the pool is shared
// out as evenly as the arrivals are, the first size mod Of shards taking
// one more.
func (s Shard) pool(size int) int { return max(s.Count(size), 1) }

// Merge joins the reports of a sale's shards into the report of the whole
// sale: every shopper once, in schedule order, the counts summed and the
// lateness recomputed over every shopper. The shards must share their
// Start (the coordinator fixes it; Options.Start) and hold disjoint
// arrivals; a report missing leaves its arrivals out, which the caller,
// knowing the plan, must treat as a failed shard.
func Merge(reports ...*Report) (*Report, error) {
	if len(reports) == 0 {
		return nil, errors.New("merge: no report")
	}
	out := &Report{Start: reports[0].Start}
	var all []*Shopper
	for k, r := range reports {
		if r == nil {
			return nil, fmt.Errorf("merge: report %d is missing", k)
		}
		if !r.Start.Equal(out.Start) {
			return nil, fmt.Errorf("merge: report %d started at %s, report 0 at %s: shards must share their start", k, r.Start.Format(time.RFC3339Nano), out.Start.Format(time.RFC3339Nano))
		}
		out.Scheduled += r.Scheduled
		out.Started += r.Started
		out.Dropped += r.Dropped
		all = append(all, r.Shoppers...)
		all = append(all, r.Visits...)
	}
	if err := out.take(all); err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	return out, nil
}

// Complete is the report of the whole of plan's sale begun at start, from
// the records of the shoppers that came back (from any shards, in any
// order): every arrival of the plan once, in schedule order. An arrival
// with no record was never reached (its shard was stopped, or died, before
// it was due) and keeps Outcome "", as in an aborted run; Started and
// Dropped count the records. A record of an arrival the plan does not have,
// or of one arrival twice, is refused.
func Complete(plan Plan, start time.Time, got []*Shopper) (*Report, error) {
	sched := plan.Arrivals()
	all := make([]*Shopper, 0, len(sched))
	seen := make([]bool, len(sched))
	for _, s := range got {
		if s == nil || s.Index < 0 || s.Index >= len(sched) {
			return nil, fmt.Errorf("complete: a record of an arrival the plan of %d does not have", len(sched))
		}
		if seen[s.Index] {
			return nil, fmt.Errorf("complete: arrival %d came back twice", s.Index)
		}
		seen[s.Index] = true
		all = append(all, s)
	}
	r := &run{plan: plan}
	for i, a := range sched {
		if !seen[i] {
			s := plan.shopper(i, a)
			r.name(&s)
			all = append(all, &s)
		}
	}
	out := &Report{Start: start, Scheduled: len(sched)}
	for _, s := range all {
		switch s.Outcome {
		case "":
		case OutcomeDropped:
			out.Dropped++
		default:
			out.Started++
		}
	}
	if err := out.take(all); err != nil {
		return nil, fmt.Errorf("complete: %w", err)
	}
	return out, nil
}

// take makes shoppers the report's, in schedule order, and measures their
// lateness; an arrival held twice is refused.
func (r *Report) take(shoppers []*Shopper) error {
	slices.SortFunc(shoppers, func(a, b *Shopper) int { return a.Index - b.Index })
	for i := 1; i < len(shoppers); i++ {
		if shoppers[i].Index == shoppers[i-1].Index {
			return fmt.Errorf("arrival %d is in two reports", shoppers[i].Index)
		}
	}
	r.LateP50, r.LateP99, r.LateMax = Lateness(shoppers)
	r.Shoppers, r.Visits = split(shoppers)
	return nil
}

// Lateness is the median, p99 and most of the started shoppers' lateness
// (Shopper.Late), as a Report gives them.
func Lateness(shoppers []*Shopper) (p50, p99, most time.Duration) {
	late := make([]time.Duration, 0, len(shoppers))
	for _, s := range shoppers {
		if s.Outcome != "" && s.Outcome != OutcomeDropped {
			late = append(late, s.Late())
		}
	}
	slices.Sort(late)
	if len(late) > 0 {
		most = late[len(late)-1]
	}
	return stats.Percentile(late, 50), stats.Percentile(late, 99), most
}
