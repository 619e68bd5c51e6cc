package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gameday-dev/gameday/gameday/judge"
	"github.com/gameday-dev/gameday/gameday/runrecord"
	"github.com/gameday-dev/gameday/internal/inputfile"
	"github.com/gameday-dev/gameday/scenarios"
)

// ScenarioFile is where a run directory keeps the scenario it ran, as it
// was written (before -rate-scale and -time-scale, which run.json records).
const ScenarioFile = "scenario.yaml"

// Rejudged is a finished run judged again.
type Rejudged struct {
	// Record is the run's record with the new judgement in place of its
	// own; Was is its own.
	Record *runrecord.Record
	Was    runrecord.Verdict
	// Judged is the new judgement, Before the run's (nil when the run
	// directory has no verdict.json).
	Judged judge.Judged
	Before []byte
	// Scenario is the file whose promises were judged.
	Scenario string
}

// Unchanged is nil when the new judgement is the run's own, byte for
// byte as verdict.json holds it, and otherwise says how they differ.
func (r *Rejudged) Unchanged() error {
	data, err := EncodeJudged(r.Judged)
	switch {
	case err != nil:
		return err
	case r.Before == nil:
		return fmt.Errorf("the run kept no %s", judge.VerdictFile)
	case !bytes.Equal(data, r.Before):
		return fmt.Errorf("judged again with %s, the judgement differs from the run's %s:\nthe run's: %s\nagain:     %s", r.Scenario, judge.VerdictFile, r.Before, data)
	}
	return nil
}

// Rejudge judges a finished run again from what it observed (its
// observations.json.gz): with the scenario it ran (its scenario.yaml), or,
// when scenarioFile is set, with that file's promises. The scenario is
// scaled as the run was. A scenario whose faults are not the run's is
// refused: judging again can change what is promised, not what was done.
// Nothing in the run directory is changed.
func Rejudge(dir, scenarioFile string) (*Rejudged, error) {
	rec, err := runrecord.Read(filepath.Join(dir, "run.json"))
	if err != nil {
		return nil, err
	}
	obsPath := filepath.Join(dir, judge.ObservationsFile)
	obs, err := judge.ReadObservations(obsPath)
	if errors.Is(err, fs.ErrNotExist) {
		why := "it ended before anything was observed to judge"
		if rec.Verdict != runrecord.VerdictError && rec.Verdict != runrecord.VerdictInconclusive {
			why = "it was run by a gameday that did not keep what it observed"
		}
		return nil, fmt.Errorf("%s has no %s: %s (its verdict: %s%s)", dir, judge.ObservationsFile, why, rec.Verdict, reasonText(rec.Reason))
	}
	if err != nil {
		return nil, err
	}
	own := filepath.Join(dir, ScenarioFile)
	path, name := own, own
	if scenarioFile != "" {
		path, name = scenarioFile, scenarioFile
	}
	data, err := inputfile.Read(path, scenarios.MaxSize)
	if errors.Is(err, fs.ErrNotExist) && scenarioFile == "" {
		return nil, fmt.Errorf("%s has no %s (its scenario was built or changed in code, so no YAML says it): name the scenario to judge it with (-scenario FILE)", dir, ScenarioFile)
	}
	if err != nil {
		return nil, fmt.Errorf("read the scenario: %w", err)
	}
	// The judge reads no load: a replay's recording, which the run
	// directory does not keep, stands as the run's own load, as planned.
	scale := func(v float64) float64 {
		if v > 0 {
			return v
		}
		return 1
	}
	lasted := time.Duration(float64(rec.Load.DurationMS)/scale(rec.TimeScale)) * time.Millisecond
	// The arrivals by journey, as planned: the purchases' and each
	// journey's visits', unscaled.
	arrivals := map[string]float64{scenarios.PurchaseJourney: float64(len(obs.Shoppers))}
	for _, v := range obs.Visits {
		arrivals[v.Journey]++
	}
	for j := range arrivals {
		arrivals[j] /= scale(rec.RateScale) * scale(rec.TimeScale)
	}
	sc, err := scenarios.ParseForJudging(name, data, lasted, arrivals)
	if err != nil {
		return nil, err
	}
	if rec.RateScale > 0 && rec.TimeScale > 0 && (rec.RateScale != 1 || rec.TimeScale != 1) {
		sc = sc.Scaled(rec.RateScale, rec.TimeScale)
	}
	if err := sameFaults(sc, rec); err != nil {
		return nil, err
	}
	j := judge.Run(sc, obs)
	out := &Rejudged{Was: rec.Verdict, Judged: j, Scenario: name}
	if b, err := os.ReadFile(filepath.Join(dir, judge.VerdictFile)); err == nil {
		out.Before = b
	}
	// The record's notes of the run's own judgement give way to the new
	// one's; the run's other notes stay.
	if out.Before != nil {
		var was judge.Judged
		if err := json.Unmarshal(out.Before, &was); err == nil {
			rec.Notes = withoutNotes(rec.Notes, was.Notes)
		}
	}
	applyJudged(rec, j)
	out.Record = rec
	return out, nil
}

// sameFaults refuses a scenario whose faults are not those the run
// injected: by name, target and kind, in order. Their times may differ:
// the windows are the faults' real spans, as observed.
func sameFaults(sc *scenarios.Scenario, rec *runrecord.Record) error {
	var ran, now []string
	for _, f := range rec.Faults {
		ran = append(ran, fmt.Sprintf("%s (%s on %s)", f.Name, f.Kind, f.Target))
	}
	for _, f := range sc.Faults {
		now = append(now, fmt.Sprintf("%s (%s on %s)", f.Name, f.Kind(), f.Target))
	}
	if !slices.Equal(ran, now) {
		return fmt.Errorf("%s: faults %s, but the run injected %s: judging again changes the promises, not the drill", sc.File, faultList(now), faultList(ran))
	}
	return nil
}

func faultList(fs []string) string {
	if len(fs) == 0 {
		return "none"
	}
	return strings.Join(fs, ", ")
}

func withoutNotes(notes, drop []string) []string {
	out := notes[:0:0]
	for _, n := range notes {
		if i := slices.Index(drop, n); i >= 0 {
			drop = slices.Delete(slices.Clone(drop), i, i+1)
			continue
		}
		out = append(out, n)
	}
	return out
}

func reasonText(r string) string {
	if r == "" {
		return ""
	}
	return ": " + r
}
