package gameday

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/gameday-dev/gameday/gameday/judge"
	"github.com/gameday-dev/gameday/gameday/load"
	"github.com/gameday-dev/gameday/gameday/runrecord"
)

// The run record's types live in runrecord, a leaf package that reports
// and the matrix read too; these aliases keep the runner's code short.
type (
	Record            = runrecord.Record
	MatrixRef         = runrecord.MatrixRef
	LoadSummary       = runrecord.LoadSummary
	Invariants        = runrecord.Invariants
	BreakerRecord     = runrecord.BreakerRecord
	FaultRecord       = runrecord.FaultRecord
	ExpectationResult = runrecord.ExpectationResult
	LedgerSummary     = runrecord.LedgerSummary
	ChargeSummary     = runrecord.ChargeSummary
	Transition        = runrecord.Transition
	Series            = runrecord.Series
	Verdict           = runrecord.Verdict
)

// Verdicts of a run.
const (
	VerdictPass         = runrecord.VerdictPass
	VerdictFail         = runrecord.VerdictFail
	VerdictError        = runrecord.VerdictError
	VerdictInconclusive = runrecord.VerdictInconclusive
)

// ReadRecord reads a run.json.
func ReadRecord(path string) (*Record, error) { return runrecord.Read(path) }

// record is the last stage of a drive: what the drive did and saw goes
// into the run's record; its observations are judged (judge.Run), the
// judgement copied into the record and written whole into the run
// directory (verdict.json, for gameday judge to compare); and the
// flash-sale figures are read beside their prediction.
func (d *drill) record(dv *driven) {
	rec := d.rec
	rec.Notes = append(rec.Notes, dv.notes...)
	rec.Load, rec.Unmatched, rec.EmptyKept = dv.load, dv.unmatched, dv.emptyKept
	if dv.loaded {
		rec.Moves, rec.Faults, rec.Host = dv.moves, dv.faults, dv.host
	}
	if dv.answered {
		rec.TransportErrors, rec.Outcomes, rec.Series, rec.Pods = dv.transportErrors, dv.outcomes, dv.series, dv.pods
	}
	if dv.obs == nil { // the drive ended before it observed the run
		rec.Verdict, rec.Reason = dv.verdict, dv.reason
		return
	}
	j := judge.Run(d.sc, dv.obs)
	applyJudged(rec, j)
	if err := writeJudged(filepath.Join(d.dir, judge.VerdictFile), j); err != nil {
		rec.Notes = append(rec.Notes, err.Error())
	}
	if dv.facts != nil {
		d.flash(dv.report, dv.facts)
	}
}

// flash records the run's flash-sale figures beside their prediction.
func (d *drill) flash(r *load.Report, f *judge.Facts) {
	maxInProgress := 0
	if admin := newAdminAPI(d.sys); admin.ok() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		st, err := admissionStats(ctx, admin)
		cancel()
		if err == nil {
			maxInProgress = st.MaxInProgress
		} else {
			d.rec.Notes = append(d.rec.Notes, fmt.Sprintf("the most checkouts in progress at once is not known (0): %v", err))
		}
	}
	fl := &runrecord.Flash{Observed: figures(r, f, maxInProgress, d.rec.Invariants.Oversold), Predicted: d.pred}
	if d.pred != nil {
		fl.Outside = outside(fl.Observed, d.pred)
		if len(fl.Outside) > 0 {
			d.rec.Notes = append(d.rec.Notes, fmt.Sprintf("observed outside the predicted 5th-95th percentile range (%d runs of the model): %s", d.pred.Runs, strings.Join(fl.Outside, ", ")))
		}
	}
	d.rec.Flash = fl
}

// applyJudged puts a judgement into a run's record.
func applyJudged(rec *Record, j judge.Judged) {
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
