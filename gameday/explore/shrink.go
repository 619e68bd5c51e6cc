package explore

import (
	"context"
	"fmt"
	"time"
)

// Check replays a schedule and reports whether it still fails, by the
// caller's rule (Replays: in at least k of n replays).
type Check func(ctx context.Context, s Schedule) (bool, error)

// Step is one step a shrink tried: what it tried and whether it was kept.
type Step struct {
	Tried string `json:"tried"`
	Kept  bool   `json:"kept"`
	// schedule is the schedule tried (not journaled: a finding keeps
	// only the one it wrote).
	schedule Schedule
}

// The floors of shrinking: below them a step is not tried.
const (
	minFor       = 100 * time.Millisecond
	minIntensity = 0.1
	minRate      = 0.25
	minLength    = 0.25
	// maxNarrow is how many kinds an unaimed fault is tried aimed at.
	maxNarrow = 3
)

// Shrink looks for a smaller schedule that still fails, in order: no
// fault at all (a system that fails without one), then dropping faults
// (delta debugging over the list), then narrower (an unaimed
// request-aware fault aimed at a kind of request it acted on), then each
// fault shorter (halved), then softer (its intensity halved), then a lower rate (fewer shoppers), then
// a shorter load. A step is kept only when check says the smaller
// schedule still fails; each kind goes on while its steps are kept. At
// most maxChecks schedules are checked; ctx ending stops it with what it
// has. Each fault keeps its identity (Fault.Drawn), so its name in a
// scenario and what it picks are the trial's whatever was dropped before
// it; the steps name faults by it.
func Shrink(ctx context.Context, s Schedule, check Check, maxChecks int) (Schedule, []Step, error) {
	sh := &shrinker{check: check, left: maxChecks}
	cur := s.numbered()
	try := func(what string, c Schedule) (bool, error) {
		ok, err := sh.try(ctx, what, c)
		if ok {
			cur = c
		}
		return ok, err
	}
	if len(cur.Faults) > 0 {
		none := cur.clone()
		none.Faults = nil
		if _, err := try("no fault at all", none); err != nil {
			return cur, sh.steps, err
		}
	}
	// Delta debugging (ddmin) over the faults.
	n := 2
	for len(cur.Faults) >= 2 {
		chunks := split(len(cur.Faults), n)
		reduced := false
		for _, c := range chunks {
			sub := cur.clone()
			sub.Faults = pick(cur.Faults, c, true)
			if ok, err := try(fmt.Sprintf("only faults %v", cur.numbers(c)), sub); err != nil {
				return cur, sh.steps, err
			} else if ok {
				n, reduced = 2, true
				break
			}
		}
		if !reduced && n > 2 {
			for _, c := range chunks {
				sub := cur.clone()
				sub.Faults = pick(cur.Faults, c, false)
				if ok, err := try(fmt.Sprintf("without faults %v", cur.numbers(c)), sub); err != nil {
					return cur, sh.steps, err
				} else if ok {
					n, reduced = max(n-1, 2), true
					break
				}
			}
		}
		if !reduced {
			if n >= len(cur.Faults) {
				break
			}
			n = min(2*n, len(cur.Faults))
		}
	}
	// An unaimed request-aware fault narrowed to a kind of request it
	// acted on in the trial, the most acted on first: a finding that
	// says the COMMIT is the point, not every request to Postgres.
	for i := range cur.Faults {
		f := cur.Faults[i]
		if fam, _ := FamilyByName(f.Family); !fam.RequestAware || f.Kind != "" {
			continue
		}
		tried := 0
		for _, k := range f.hit {
			if k == "connect" || k == "close" || k == "other" {
				continue
			}
			if tried++; tried > maxNarrow {
				break
			}
			c := cur.clone()
			c.Faults[i].Kind = k
			if ok, err := try(fmt.Sprintf("fault %d aimed at %s", c.number(i), k), c); err != nil {
				return cur, sh.steps, err
			} else if ok {
				break
			}
		}
	}
	for i := range cur.Faults {
		for cur.Faults[i].For/2 >= minFor {
			c := cur.clone()
			c.Faults[i].For = (c.Faults[i].For / 2).Round(quantum)
			if ok, err := try(fmt.Sprintf("fault %d for %s", c.number(i), c.Faults[i].For), c); err != nil {
				return cur, sh.steps, err
			} else if !ok {
				break
			}
		}
	}
	for i := range cur.Faults {
		if fam, _ := FamilyByName(cur.Faults[i].Family); !fam.intense() {
			continue // down, a process fault: no intensity
		}
		for cur.Faults[i].Intensity/2 >= minIntensity {
			c := cur.clone()
			c.Faults[i].Intensity /= 2
			if ok, err := try(fmt.Sprintf("fault %d at intensity %g", c.number(i), c.Faults[i].Intensity), c); err != nil {
				return cur, sh.steps, err
			} else if !ok {
				break
			}
		}
	}
	for cur.Rate/2 >= minRate {
		c := cur.clone()
		c.Rate /= 2
		if ok, err := try(fmt.Sprintf("rate ×%g", c.Rate), c); err != nil {
			return cur, sh.steps, err
		} else if !ok {
			break
		}
	}
	for cur.Length*0.75 >= minLength {
		c := cur.clone()
		c.Length *= 0.75
		if !c.fits() {
			break // a fault would begin after the load
		}
		if ok, err := try(fmt.Sprintf("load ×%g", c.Length), c); err != nil {
			return cur, sh.steps, err
		} else if !ok {
			break
		}
	}
	return cur, sh.steps, nil
}

type shrinker struct {
	check Check
	left  int
	steps []Step
}

// try checks c, when the budget allows; ok is whether c still fails.
func (sh *shrinker) try(ctx context.Context, what string, c Schedule) (bool, error) {
	if sh.left <= 0 || ctx.Err() != nil {
		return false, nil
	}
	sh.left--
	ok, err := sh.check(ctx, c)
	if err != nil {
		return false, err
	}
	sh.steps = append(sh.steps, Step{Tried: what, Kept: ok, schedule: c})
	return ok, nil
}

// split divides indexes 0..n-1 into k runs as even as can be.
func split(n, k int) [][]int {
	var out [][]int
	start := 0
	for i := range k {
		end := start + (n-start)/(k-i)
		if end > start {
			run := make([]int, 0, end-start)
			for j := start; j < end; j++ {
				run = append(run, j)
			}
			out = append(out, run)
		}
		start = end
	}
	return out
}

// pick is the faults at idx (in) or all the others (!in), in order.
func pick(fs []Fault, idx []int, in bool) []Fault {
	want := map[int]bool{}
	for _, i := range idx {
		want[i] = true
	}
	var out []Fault
	for i, f := range fs {
		if want[i] == in {
			out = append(out, f)
		}
	}
	return out
}

// numbers are the faults at idx by their places in the schedule drawn.
func (s Schedule) numbers(idx []int) []int {
	out := make([]int, len(idx))
	for j, i := range idx {
		out[j] = s.number(i)
	}
	return out
}

// fits reports whether every fault begins within the load as Length has
// it.
func (s Schedule) fits() bool {
	end := s.loadLength()
	for _, f := range s.Faults {
		if f.At+quantum > end {
			return false
		}
	}
	return true
}

// loadLength is the length of the schedule's load.
func (s Schedule) loadLength() time.Duration {
	return time.Duration(float64(s.Load) * s.Length).Round(quantum)
}
