package explore

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gameday-dev/gameday/gameday/runrecord"
	"github.com/gameday-dev/gameday/scenarios"
)

// Outcome is what one trial found.
type Outcome struct {
	Verdict runrecord.Verdict
	// Broken are the invariants the books broke (their names), Witnesses
	// the checkout ids of the first cases, for a failed trial.
	Broken    []string
	Witnesses []string
	// Dir is the trial's run directory.
	Dir string
}

// Runner carries out one trial: a drill of sc.
type Runner func(ctx context.Context, sc *scenarios.Scenario) (Outcome, error)

// Options are a search's settings.
type Options struct {
	// Base is the scenario whose system, load and stock every trial
	// shares; Space what the trials draw from.
	Base  *scenarios.Scenario
	Space Space
	Seed  uint64
	// Trials bounds how many trials are drawn; Within how long the search
	// may take (0: no bound). One of the two must be set.
	Trials int
	Within time.Duration
	// Replays is n, Needed k: a finding, and each step of its shrinking,
	// must fail in at least k of n replays.
	Replays, Needed int
	// MaxChecks bounds the shrinking of one finding, in schedules checked.
	MaxChecks int
	// Out is where findings are written (explore/); Log receives one line
	// of JSON per trial drawn, byte for byte the same for a seed.
	Out string
	Log io.Writer
	// Progress receives a line per trial; nil means none.
	Progress io.Writer
}

// Finding is one failure found, replayed and shrunk.
type Finding struct {
	Trial int `json:"trial"`
	// Broken are the invariants it broke, Witnesses checkout ids of the
	// trial that found it.
	Broken    []string `json:"broken"`
	Witnesses []string `json:"witnesses"`
	// Found is the schedule drawn, Shrunk the smallest that still fails.
	Found  Schedule `json:"found"`
	Shrunk Schedule `json:"shrunk"`
	Steps  []Step   `json:"steps"`
	// Before and After are how often the found and the shrunk schedule
	// failed on replay: failures of replays.
	Before, After [2]int `json:"-"`
	// File is the scenario written for it.
	File string `json:"file"`
}

// Tried is one trial as the report lists it.
type Tried struct {
	Schedule Schedule
	Verdict  runrecord.Verdict
	Broken   []string
}

// Result is a search's trials, findings and coverage.
type Result struct {
	Seed     uint64
	Trials   []Tried
	Findings []Finding
	// Coverage counts the faults tried by dependency, family and phase.
	Coverage map[CoverKey]int
	// Stopped says why the search ended before its budget ("" when it
	// did not).
	Stopped string
}

// CoverKey is one cell of the coverage table.
type CoverKey struct{ Target, Family, Phase string }

// Search draws trials until the budget is spent, runs each, and turns
// each failure of the books into a finding: replayed (Replays times, to
// say how often it fails), shrunk, and written as a scenario under Out. A
// failure whose invariants an earlier finding already broke is counted,
// not shrunk again. An inconclusive or erroring trial is not a finding.
func Search(ctx context.Context, o Options, run Runner) (*Result, error) {
	if o.Trials <= 0 && o.Within <= 0 {
		return nil, fmt.Errorf("explore: give a budget: a number of trials or a duration")
	}
	if len(o.Space.Targets) == 0 || len(o.Space.Families) == 0 || len(o.Space.Phases) == 0 {
		return nil, fmt.Errorf("explore: nothing to draw: %d dependencies, %d families, %d phases", len(o.Space.Targets), len(o.Space.Families), len(o.Space.Phases))
	}
	res := &Result{Seed: o.Seed, Coverage: map[CoverKey]int{}}
	start := time.Now()
	// A trial's scenario is parsed as if it were a file in Out (its system
	// named from there); only findings are written.
	trialScenario := func(s Schedule, name string) (*scenarios.Scenario, error) {
		_, sc, err := s.Scenario(o.Base, filepath.Join(o.Out, name+".yaml"), name, "")
		return sc, err
	}
	// fails runs s n times and counts the runs that break an invariant of
	// want (any, when want is empty).
	fails := func(ctx context.Context, s Schedule, n int, want []string) (int, error) {
		sc, err := trialScenario(s, fmt.Sprintf("explore-replay-%d", s.Trial))
		if err != nil {
			return 0, err
		}
		got := 0
		for range n {
			out, err := run(ctx, sc)
			if err != nil {
				return got, err
			}
			if out.Verdict == runrecord.VerdictFail && breaksAny(out.Broken, want) {
				got++
			}
		}
		return got, nil
	}
	for i := 0; ; i++ {
		switch {
		case ctx.Err() != nil:
			res.Stopped = "interrupted"
			return res, nil
		case o.Trials > 0 && i >= o.Trials:
			return res, nil
		case o.Within > 0 && time.Since(start) >= o.Within:
			return res, nil
		}
		s := o.Space.Draw(o.Seed, i)
		if o.Log != nil {
			if _, err := o.Log.Write(append(s.Encode(), '\n')); err != nil {
				return res, fmt.Errorf("explore: write the log: %w", err)
			}
		}
		sc, err := trialScenario(s, fmt.Sprintf("explore-trial-%d", i))
		if err != nil {
			return res, err
		}
		out, err := run(ctx, sc)
		if err != nil {
			return res, err
		}
		for _, f := range s.Faults {
			res.Coverage[CoverKey{f.Target, f.Family, f.Phase}]++
		}
		res.Trials = append(res.Trials, Tried{Schedule: s, Verdict: out.Verdict, Broken: out.Broken})
		progress(o.Progress, "explore: trial %d: %s %s", i, out.Verdict, strings.Join(out.Broken, ", "))
		if out.Verdict != runrecord.VerdictFail || len(out.Broken) == 0 || ctx.Err() != nil {
			continue
		}
		if slices.ContainsFunc(res.Findings, func(f Finding) bool { return sameSet(f.Broken, out.Broken) }) {
			continue
		}
		f := Finding{Trial: i, Broken: out.Broken, Witnesses: out.Witnesses, Found: s}
		n, err := fails(ctx, s, o.Replays, out.Broken)
		if err != nil {
			return res, err
		}
		f.Before = [2]int{n, o.Replays}
		progress(o.Progress, "explore: trial %d failed again in %d of %d replays", i, n, o.Replays)
		if n < o.Needed {
			continue // too rare to shrink by replays: listed with its trial
		}
		check := func(ctx context.Context, c Schedule) (bool, error) {
			got, err := fails(ctx, c, o.Replays, out.Broken)
			return got >= o.Needed, err
		}
		f.Shrunk, f.Steps, err = Shrink(ctx, s, check, o.MaxChecks)
		if err != nil {
			return res, err
		}
		if n, err = fails(ctx, f.Shrunk, o.Replays, out.Broken); err != nil {
			return res, err
		}
		f.After = [2]int{n, o.Replays}
		name := findingName(i, out.Broken)
		f.File = filepath.Join(o.Out, name+".yaml")
		desc := fmt.Sprintf("Found by gameday explore, seed %d, trial %d: breaks %s. Shrunk from %d faults to %d; fails in %d of %d replays (%d of %d before shrinking).\nReplay: gameday run %s",
			o.Seed, i, strings.Join(out.Broken, ", "), len(s.Faults), len(f.Shrunk.Faults), f.After[0], f.After[1], f.Before[0], f.Before[1], f.File)
		data, _, err := f.Shrunk.Scenario(o.Base, f.File, name, desc)
		if err != nil {
			return res, err
		}
		if err := runrecord.WriteFileAtomic(f.File, data); err != nil {
			return res, err
		}
		res.Findings = append(res.Findings, f)
		progress(o.Progress, "explore: finding %s: %d faults, fails in %d of %d replays", f.File, len(f.Shrunk.Faults), f.After[0], f.After[1])
	}
}

// findingName names the finding of trial i: its first invariant, and how
// many more it broke, within a scenario name's 64 characters.
func findingName(i int, broken []string) string {
	name := fmt.Sprintf("explore-%d-%s", i, strings.ReplaceAll(broken[0], "_", "-"))
	if len(broken) > 1 {
		name += fmt.Sprintf("-and-%d-more", len(broken)-1)
	}
	return name
}

func breaksAny(broken, want []string) bool {
	if len(want) == 0 {
		return len(broken) > 0
	}
	return slices.ContainsFunc(broken, func(b string) bool { return slices.Contains(want, b) })
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func progress(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format+"\n", args...)
	}
}
