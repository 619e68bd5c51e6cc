package explore

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/gameday-dev/gameday/gameday/runrecord"
	"github.com/gameday-dev/gameday/scenarios"
)

// Observed is what a trial showed beyond its verdict, read only from what
// gameday sees from outside the system: the kinds of request each
// dependency received, by phase (its proxy's relay classifies them); the
// kinds each fault acted on; and the trial's behaviour (Signature).
type Observed struct {
	// Kinds maps a dependency to a phase to the kinds of request it
	// received in that phase, sorted.
	Kinds map[string]map[string][]string `json:"kinds,omitempty"`
	// Hit maps a fault's name to the kinds of the requests it acted on,
	// the most acted on first.
	Hit map[string][]string `json:"hit,omitempty"`
	// NearMiss: the books moved (a count of one of their facts above
	// zero) and nothing was broken: an allowance spent, units stranded
	// within it.
	NearMiss bool `json:"near_miss,omitempty"`
	// Signature is the trial's behaviour as a set of features, sorted: a
	// fault's family on a kind of request it acted on; an answer the
	// system gave, by outcome, and its share of the arrivals (any, a
	// tenth, half); a visit's outcome by journey; a state each breaker
	// reached; a fact of the books that moved, broken or allowed
	// (stranded units, orders told failed); a kind of request a
	// dependency received.
	Signature []string `json:"signature,omitempty"`
}

// Observe reads what trial sc's run, recorded in rec, showed; phases are
// the sale's (Phases).
func Observe(rec *runrecord.Record, sc *scenarios.Scenario, phases []Phase) Observed {
	var o Observed
	feats := map[string]bool{}
	for _, dr := range rec.Requests {
		for _, k := range dr.Kinds {
			feats["kind "+dr.Dependency+" "+k.Kind] = true
			for sec, n := range k.PerSecond {
				if n == 0 {
					continue
				}
				from, to := time.Duration(sec)*time.Second, time.Duration(sec+1)*time.Second
				for _, ph := range phases {
					if from < ph.To && ph.From < to {
						if o.Kinds == nil {
							o.Kinds = map[string]map[string][]string{}
						}
						if o.Kinds[dr.Dependency] == nil {
							o.Kinds[dr.Dependency] = map[string][]string{}
						}
						if ks := o.Kinds[dr.Dependency][ph.Name]; !slices.Contains(ks, k.Kind) {
							o.Kinds[dr.Dependency][ph.Name] = append(ks, k.Kind)
						}
					}
				}
			}
		}
	}
	for _, m := range o.Kinds {
		for ph := range m {
			slices.Sort(m[ph])
		}
	}
	for _, f := range rec.Faults {
		if f.Hits == nil || len(f.Hits.Kinds) == 0 {
			continue
		}
		kinds := slices.SortedFunc(maps.Keys(f.Hits.Kinds), func(a, b string) int {
			return cmp.Or(cmp.Compare(f.Hits.Kinds[b], f.Hits.Kinds[a]), cmp.Compare(a, b))
		})
		if o.Hit == nil {
			o.Hit = map[string][]string{}
		}
		o.Hit[f.Name] = kinds
		for _, k := range kinds {
			feats["hit "+f.Target+" "+familyOf(sc, f.Name)+" "+k] = true
		}
	}
	arrivals := max(rec.Load.Started, 1)
	for outcome, n := range rec.Outcomes {
		if n > 0 {
			feats["answer "+outcome+" "+share3(n, arrivals)] = true
		}
	}
	for journey, m := range rec.Visits {
		for outcome, n := range m {
			if n > 0 {
				feats["visit "+journey+" "+outcome] = true
			}
		}
	}
	for _, u := range rec.Unmatched {
		feats[fmt.Sprintf("unmatched %s %d", u.Step, u.Code)] = true
	}
	for _, t := range rec.TransportErrors {
		feats["transport "+t.Kind] = true
	}
	for dep, b := range rec.Breakers {
		for _, t := range b.Transitions {
			feats["breaker "+dep+" "+t.State] = true
		}
	}
	moved := false
	for name, n := range rec.Invariants.ByName() {
		if n > 0 && name != "dropped" {
			feats["books "+name] = true
			moved = true
		}
	}
	o.NearMiss = moved && !slices.ContainsFunc(rec.InvariantChecks, func(c runrecord.ExpectationResult) bool {
		return !c.Held && !c.NotChecked && c.Unjudged == "" && c.Invariant != "dropped"
	})
	for _, f := range rec.Faults {
		if c := f.Cache; c != nil && (c.Evicted > 0 || c.Refused > 0) {
			feats["cache "+f.Target+" pressed"] = true
		}
	}
	o.Signature = slices.Sorted(maps.Keys(feats))
	return o
}

// share3 says how large n is of all, coarsely, so that a signature does
// not change with every count: "any", "≥10%", "≥50%".
func share3(n, all int) string {
	switch {
	case n*2 >= all:
		return "≥50%"
	case n*10 >= all:
		return "≥10%"
	}
	return "any"
}

// familyOf is the family of sc's fault named name, as explore names it.
func familyOf(sc *scenarios.Scenario, name string) string {
	for _, f := range sc.Faults {
		if f.Name != name {
			continue
		}
		switch {
		case f.Toxic != nil:
			return f.Toxic.Type
		case f.Down:
			return "down"
		case f.Process != "":
			return f.Process
		case f.Cache != nil:
			return "cache"
		}
	}
	return "?"
}
