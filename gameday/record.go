package gameday

import "github.com/gameday-dev/gameday/gameday/runrecord"

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
