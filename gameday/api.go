package gameday

import (
	"time"

	"github.com/gameday-dev/gameday/gameday/internal/drive"
	"github.com/gameday-dev/gameday/gameday/internal/ledger"
	"github.com/gameday-dev/gameday/gameday/internal/prepare"
	"github.com/gameday-dev/gameday/gameday/internal/record"
	"github.com/gameday-dev/gameday/gameday/judge"
	"github.com/gameday-dev/gameday/gameday/runrecord"
	"github.com/gameday-dev/gameday/gameday/system"
	"github.com/gameday-dev/gameday/scenarios"
)

// The run record's types live in runrecord, a leaf package that reports
// and the matrix read too; these aliases keep a caller's code short.
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

// ShardOptions say how a drill's load is sent from several workers: this
// process coordinates them (the faults, the breakers and the books stay
// here) and judges the whole sale.
type ShardOptions = drive.ShardOptions

// ReadRecord reads a run.json.
func ReadRecord(path string) (*Record, error) { return runrecord.Read(path) }

// ScenarioFile is where a run directory keeps the scenario it ran, as it
// was written (before -rate-scale and -time-scale, which run.json records).
const ScenarioFile = record.ScenarioFile

// AttemptsFile is the run directory's list of every request the shoppers
// sent, one row each (docs/runner.md).
const AttemptsFile = record.AttemptsFile

// Rejudged is a finished run judged again.
type Rejudged = record.Rejudged

// Rejudge judges a finished run again from what it observed (its
// observations.json.gz): with the scenario it ran (its scenario.yaml), or,
// when scenarioFile is set, with that file's promises. Nothing in the run
// directory is changed.
func Rejudge(dir, scenarioFile string) (*Rejudged, error) { return record.Rejudge(dir, scenarioFile) }

// EncodeJudged is a judgement as verdict.json holds it: indented JSON and
// a newline. The same judgement always gives the same bytes.
func EncodeJudged(j judge.Judged) ([]byte, error) { return record.EncodeJudged(j) }

// CheckScenario checks a scenario against the described system it drills,
// with nothing contacted (gameday validate does it too); the errors name
// the scenario's file, line and field.
func CheckScenario(sc *scenarios.Scenario, sys *system.System) error {
	return prepare.CheckScenario(sc, sys)
}

// SettleLimit bounds the wait for the reference checkout's books after
// sc's load (its system file's settle_within).
func SettleLimit(sc *scenarios.Scenario) time.Duration { return prepare.SettleLimit(sc) }

// Coverage says which of the invariants a system's books let gameday
// check, and why each other one is not.
func Coverage(sys *system.System) (checked []string, notChecked map[string]string) {
	return ledger.Coverage(sys)
}

// SettleRule says how a system's books are known to be final.
func SettleRule(sys *system.System) string { return ledger.SettleRule(sys) }
