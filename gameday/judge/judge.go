// Package judge decides what a drill proved from what was observed: the
// scenario's promises (expectations), the invariants of the books
// (reconciliation) and the verdict. It is pure: it reads no clock, no
// network and no file, so every rule is tested with tables of observations
// instead of drills. The runner (package gameday) observes; this package
// judges.
package judge

import "github.com/gameday-dev/gameday/gameday/runrecord"

// The run record's types that judging fills in.
type (
	ExpectationResult = runrecord.ExpectationResult
	Invariants        = runrecord.Invariants
	LedgerSummary     = runrecord.LedgerSummary
	ChargeSummary     = runrecord.ChargeSummary
	Transition        = runrecord.Transition
	BreakerRecord     = runrecord.BreakerRecord
	Verdict           = runrecord.Verdict
)
