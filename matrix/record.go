package matrix

import (
	"strings"
	"time"

	"github.com/gameday-dev/gameday/gameday/runrecord"
)

// FromRecord returns what a run record proved, for [Matrix.Apply]. commit
// is the commit of the system under test, "" when unknown (run.json does
// not hold it).
//
// The scenario is the catalogue name for a built-in scenario and the file
// as given to gameday run otherwise. The breaker figures are those of the
// breaker of the scenario's matrix dependency: opened after (from the
// fault's start) and recovered after (closed, from the fault's end); the
// p95 is that of checkout requests sent during the faults. The counts are
// the run's invariants that its invariant_checks judged; the others are
// named in Figures.NotChecked.
func FromRecord(rec *runrecord.Record, commit string) Result {
	r := Result{Scenario: rec.Scenario, At: rec.StartedAt, Commit: commit, Verdict: string(rec.Verdict)}
	if rec.File != "" && !strings.HasPrefix(rec.File, "catalogue:") {
		r.Scenario = rec.File
	}
	if b, ok := rec.Breakers[rec.Matrix.Dependency]; ok {
		r.Figures.BreakerOpenedAfter = millis(b.OpenedAfterMS)
		r.Figures.RecoveredAfter = millis(b.ClosedAfterMS)
	}
	if p := rec.Load.CheckoutP95DuringMS; p != nil {
		d := time.Duration(*p * float64(time.Millisecond))
		r.Figures.CheckoutP95During = &d
	}
	// Every invariant the run judged, by its count; those it could not
	// judge, named (the system gave no facts for them, or the books were
	// read before they settled or with a fault in place, and only showed
	// them: runrecord.ExpectationResult.Unjudged). A run that judged none (it stopped before it read its
	// books: interrupted, or its load's workers never joined) has
	// invariant_checks empty, and every invariant is not checked: its
	// zeros would read as books that balanced.
	judged := map[string]bool{}
	for _, c := range rec.InvariantChecks {
		if c.Invariant != "" && !c.NotChecked && c.Unjudged == "" {
			judged[c.Invariant] = true
		}
	}
	counts := rec.Invariants.ByName()
	for _, name := range invariantNames {
		if judged[name] {
			*r.Figures.counts()[name] = counts[name]
		} else {
			r.Figures.NotChecked = append(r.Figures.NotChecked, name)
		}
	}
	return r
}

func millis(ms *int64) *time.Duration {
	if ms == nil {
		return nil
	}
	d := time.Duration(*ms) * time.Millisecond
	return &d
}
