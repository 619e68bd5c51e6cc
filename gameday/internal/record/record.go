// Package record is a drill's last stage: it puts what the drive did and
// saw into the run's record, writes the run's evidence into its directory
// (attempts.csv, observations.json.gz), has the observations judged
// (package judge) and keeps the judgement (verdict.json) and the
// flash-sale figures beside their prediction. Rejudge judges a finished
// run again from what it kept.
//
// In: Input, the drive's result with the scenario, the system and the
// prediction. Out: the run's record, filled; the files of the run
// directory. It sends nothing to the system but the one read of its
// admin protocol's high-water mark.
package record

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/gameday-dev/gameday/gameday/internal/adminapi"
	"github.com/gameday-dev/gameday/gameday/internal/drive"
	"github.com/gameday-dev/gameday/gameday/judge"
	"github.com/gameday-dev/gameday/gameday/load"
	"github.com/gameday-dev/gameday/gameday/runrecord"
	"github.com/gameday-dev/gameday/gameday/system"
	"github.com/gameday-dev/gameday/scenarios"
)

// Input is what the record stage reads: the drive's result, the scenario
// driven, the system as described, the prediction made before the load
// (nil: none) and the run directory.
type Input struct {
	Dir        string
	Scenario   *scenarios.Scenario
	Sys        *system.System
	Prediction *runrecord.Prediction
	Drive      *drive.Result
}

// Drive records one drive: what it did and saw goes into rec, the run's
// record, and its evidence into the run directory (attempts.csv,
// observations.json.gz); its observations are judged (judge.Run), the
// judgement copied into the record and written whole into the run
// directory (verdict.json, for gameday judge to compare); and the
// flash-sale figures are read beside their prediction. A file that could
// not be written is a note of the record's.
func Drive(rec *runrecord.Record, in Input) {
	dv := in.Drive
	rec.Notes = append(rec.Notes, dv.Notes...)
	rec.Load, rec.Unmatched, rec.EmptyKept = dv.Load, dv.Unmatched, dv.EmptyKept
	if dv.Loaded {
		rec.Moves, rec.Faults, rec.Host = dv.Moves, dv.Faults, dv.Host
		rec.Requests, rec.RequestsError = dv.Requests, dv.RequestsError
	}
	if dv.Answered {
		rec.TransportErrors, rec.Outcomes, rec.Series, rec.Pods = dv.TransportErrors, dv.Outcomes, dv.Series, dv.Pods
		rec.Visits = dv.Visits
	}
	if dv.Report != nil {
		if err := writeAttempts(in.Dir, dv.Report, in.Sys.StepNames()); err != nil {
			rec.Notes = append(rec.Notes, err.Error())
		}
	}
	if dv.Obs == nil { // the drive ended before it observed the run
		rec.Verdict, rec.Reason = dv.Verdict, dv.Reason
		return
	}
	// What the run saw is all the judge reads: kept in the run directory,
	// so that the run can be judged again (gameday judge).
	if err := judge.WriteObservations(filepath.Join(in.Dir, judge.ObservationsFile), dv.Obs); err != nil {
		rec.Notes = append(rec.Notes, err.Error())
	}
	j := judge.Run(in.Scenario, dv.Obs)
	applyJudged(rec, j)
	if err := writeJudged(filepath.Join(in.Dir, judge.VerdictFile), j); err != nil {
		rec.Notes = append(rec.Notes, err.Error())
	}
	if dv.Facts != nil {
		rec.Flash = flashFigures(rec, in, dv.Report, dv.Facts)
	}
}

// flashFigures are the run's flash-sale figures beside their prediction;
// what could not be read, and what was observed outside the prediction,
// are notes of rec's.
func flashFigures(rec *runrecord.Record, in Input, r *load.Report, f *judge.Facts) *runrecord.Flash {
	maxInProgress := 0
	if admin := adminapi.New(in.Sys); admin.OK() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		st, err := adminapi.AdmissionStats(ctx, admin)
		cancel()
		if err == nil {
			maxInProgress = st.MaxInProgress
		} else {
			rec.Notes = append(rec.Notes, fmt.Sprintf("the most checkouts in progress at once is not known (0): %v", err))
		}
	}
	pred := in.Prediction
	fl := &runrecord.Flash{Observed: figures(r, f, maxInProgress, rec.Invariants.Oversold), Predicted: pred}
	if pred != nil {
		fl.Outside = outside(fl.Observed, pred)
		if len(fl.Outside) > 0 {
			rec.Notes = append(rec.Notes, outsideNote(pred.Runs, fl.Outside))
		}
	}
	return fl
}

// applyJudged puts a judgement into a run's record.
func applyJudged(rec *runrecord.Record, j judge.Judged) {
	rec.Verdict, rec.Reason = j.Verdict, j.Reason
	rec.Expectations, rec.Breakers = j.Expectations, j.Breakers
	rec.Invariants, rec.InvariantChecks = j.Invariants, j.InvariantChecks
	rec.Ledger, rec.Charges, rec.Shops = j.Ledger, j.Charges, j.Shops
	rec.Notes = append(rec.Notes, j.Notes...)
	if rec.Host != nil {
		rec.Host.Starved = j.Starved
	}
}

// writeJudged writes a judgement as verdict.json holds it.
func writeJudged(path string, j judge.Judged) error {
	data, err := EncodeJudged(j)
	if err != nil {
		return err
	}
	return runrecord.WriteFileAtomic(path, data)
}

// EncodeJudged is a judgement as verdict.json holds it: indented JSON and
// a newline. The same judgement always gives the same bytes.
func EncodeJudged(j judge.Judged) ([]byte, error) {
	data, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode the verdict: %w", err)
	}
	return append(data, '\n'), nil
}

// outsideNote says which flash-sale figures fell outside the range the
// model of the reference checkout predicted, what that model is, and what
// it means for the verdict: nothing by itself.
func outsideNote(runs int, figures []string) string {
	return fmt.Sprintf("observed outside the predicted 5th-95th percentile range: %s. The prediction is gameday's simulation of the reference checkout with this scenario's settings (%d runs; docs/flash-sale.md); the verdict does not rest on it. One drill lands a figure outside about one time in ten when the model is right: worth a look only when the same figure is outside drill after drill, or far outside", strings.Join(figures, ", "), runs)
}
