package drive

import (
	"fmt"
	"io"
	"time"

	"github.com/gameday-dev/gameday/gameday/env"
	"github.com/gameday-dev/gameday/gameday/faults"
	"github.com/gameday-dev/gameday/gameday/internal/ledger"
	"github.com/gameday-dev/gameday/gameday/judge"
	"github.com/gameday-dev/gameday/gameday/load"
	"github.com/gameday-dev/gameday/gameday/runrecord"
	"github.com/gameday-dev/gameday/gameday/system"
	"github.com/gameday-dev/gameday/scenarios"
)

// BeforeRemovingFaults is called just before the faults are removed at the
// end of the load; tests make it panic.
var BeforeRemovingFaults = func() {}

// Config is what the drive reads of the runner's options (gameday.Options
// says what each means).
type Config struct {
	Progress      io.Writer
	ProgressLive  bool
	BreakerMetric *scenarios.BreakerMetric
	ProbeInterval time.Duration
	Shards        *ShardOptions
	Binary        string
}

// ShardOptions say how a drill's load is sent from several workers: this
// process coordinates them (the faults, the breakers and the books stay
// here) and judges the whole sale.
type ShardOptions struct {
	// N is the number of shards, at least 1.
	N int
	// Remote: the workers are started elsewhere ("gameday worker" in a
	// Swarm job or a Kubernetes Indexed Job) and call in at Listen with
	// Token; else this process starts N local worker processes of the
	// gameday executable (gameday.Options.Binary).
	Remote bool
	// Listen is the coordinator's address; "" means 127.0.0.1:0 (local
	// workers), which remote ones cannot reach.
	Listen string
	// Token is the secret workers must carry (fleet.TokenEnv); "" makes a
	// random one, which only local workers can be given.
	Token string
	// JoinWithin bounds the wait for every worker to be ready; 0 means
	// fleet.DefaultJoinWithin.
	JoinWithin time.Duration
	// Announce, when set, is told where the workers must call in, once
	// the coordinator listens.
	Announce func(url string)
}

// Input is one drive: the scenario and its seed, the run directory, the
// prepared environment's parts the drive acts on (the environment, its
// fault injector, the system as described) and the armed drive's checkout
// ids and ledgers.
type Input struct {
	Config
	Scenario    *scenarios.Scenario
	Seed        int64
	Dir         string
	Environment env.Environment
	Inj         *faults.Injector
	Sys         *system.System
	Prefix      string
	Ledgers     []*ledger.Ledger
}

// drill is the drive under way.
type drill struct{ Input }

func (d *drill) progress(format string, args ...any) {
	if d.Config.Progress != nil {
		fmt.Fprintf(d.Config.Progress, format+"\n", args...)
	}
}

// Result is the drive stage's value: what the load, the fault timeline and
// the observers did and saw. The record stage (package record) puts it
// into the run's record and writes what it holds into the run directory;
// the drive writes nothing of either itself.
type Result struct {
	// Verdict and Reason, when Verdict is not "", say why the drive ended
	// without observations to judge.
	Verdict runrecord.Verdict
	Reason  string
	// Notes are the drive's, in the order they arose.
	Notes []string
	// Loaded: the load was sent (or tried), the faults lifted and the
	// books read; Moves, Faults and Host are filled.
	Loaded bool
	Moves  []runrecord.Move
	Faults []runrecord.FaultRecord
	Host   *runrecord.Host
	// Requests are the kinds of request each relayed dependency received
	// (RequestsError: why they could not be read).
	Requests      []runrecord.DependencyRequests
	RequestsError string
	// Filled as far as the load went (its shards also when they could not
	// all join).
	Load      runrecord.LoadSummary
	Unmatched []runrecord.Unmatched
	EmptyKept []runrecord.EmptyKept
	// Answered: the load gave its Report; the fields below are filled.
	Answered        bool
	Report          *load.Report
	TransportErrors []runrecord.TransportError
	Outcomes        map[string]int
	// Visits counts the visits of the journeys that do not buy, by
	// journey and outcome; nil without streams.
	Visits map[string]map[string]int
	Series runrecord.Series
	Pods   []runrecord.Pod
	// Obs is what the judge reads (nil when the drive ended before it
	// observed the run). Facts, when not nil, are the books of one shop,
	// read whole and settled: with Report they give the flash-sale
	// figures.
	Obs   *judge.Observations
	Facts *judge.Facts
}

func (dv *Result) fail(verdict runrecord.Verdict, format string, args ...any) {
	dv.Verdict, dv.Reason = verdict, fmt.Sprintf(format, args...)
}

func (dv *Result) note(n string) { dv.Notes = append(dv.Notes, n) }
