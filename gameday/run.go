// Package gameday is the game-day runner: it brings up an environment, drives
// an open-model flash-sale load at the checkout, injects a scenario's faults
// on their timeline, watches the breakers, reconciles the books and decides
// a verdict, which it writes with everything it saw to run.json.
//
// This package is the runner's API (Run, Options, Prepare and Drive) and
// the wiring of its stages, each a package of its own that takes the value
// the one before it gave and returns its own, nothing reaching back:
// internal/prepare (the environment, and each drive armed), internal/drive
// (the load, the faults and the observers; the books read through
// internal/ledger), package judge (the verdict, from the observations
// only) and internal/record (the run's record and directory).
package gameday

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/gameday-dev/gameday/gameday/env"
	"github.com/gameday-dev/gameday/gameday/faults"
	"github.com/gameday-dev/gameday/gameday/internal/drive"
	"github.com/gameday-dev/gameday/gameday/internal/ledger"
	"github.com/gameday-dev/gameday/gameday/internal/prepare"
	"github.com/gameday-dev/gameday/gameday/internal/record"
	"github.com/gameday-dev/gameday/gameday/runrecord"
	"github.com/gameday-dev/gameday/gameday/system"
	"github.com/gameday-dev/gameday/scenarios"
)

// Options are the parts of a run that are not in the scenario.
type Options struct {
	// RateScale multiplies every arrival rate, TimeScale every duration of
	// the timeline ([scenarios.Scenario.Scaled]); 0 means 1.
	RateScale, TimeScale float64
	// Seed overrides the scenario's seed when not 0.
	Seed int64
	// RunsDir receives one directory per run; "" means "runs".
	RunsDir string
	// Binary is the gameday executable the local environment starts as the
	// payment stand-in and the checkout, and local load workers run; ""
	// means this process's, which must then be gameday's: a program that
	// uses this package as a library names a gameday executable here
	// (env.ResolveBinary says what is wrong otherwise).
	Binary string
	// EmbeddedRedis forces the embedded Redis-compatible server.
	EmbeddedRedis bool
	// System, when set, is the described system under test: the drill
	// runs against it as it runs (gameday starts nothing of it), through
	// its description only. Without it the scenario's system file is
	// drilled, if it names one; else the reference checkout, in the
	// environment the options or the scenario choose.
	System *system.System
	// Proxies overrides the proxy names of the system's dependencies.
	Proxies map[string]string
	// Environment, when set, brings up the environment the reference
	// checkout is drilled in, instead of the scenario's: env.ExternalOptions
	// for one the user runs (its admin API at CheckoutURL), or, from package
	// gameday/env/docker, ComposeOptions (the project docker-compose.yml
	// brought up; process faults act on its containers) or
	// ContainersOptions (every part a container, removed when the drill
	// ends). nil: the scenario's external environment, else
	// env.LocalOptions with Binary and EmbeddedRedis. This package links
	// no Docker client: a program that wants Docker's environments links
	// package docker and passes one here.
	Environment env.Starter
	// Engine acts on containers the drill did not start: those a system
	// file names as processes, and, through the default journal, those a
	// killed runner left stopped (docker.Engine). nil: a system naming
	// containers is refused, and such leftovers are set aside.
	Engine env.Engine
	// Journal records faults on a Toxiproxy that outlives the runner;
	// nil means DefaultJournalPath's, with Engine.
	Journal *faults.Journal
	// Progress receives live progress lines; nil means none.
	Progress io.Writer
	// ProgressLive rewrites one progress line in place (for a terminal)
	// instead of printing a line a second (for logs).
	ProgressLive bool
	// BreakerMetric reads the breakers from a Prometheus gauge (external
	// environments); nil means the scenario's, else the checkout's admin API.
	BreakerMetric *scenarios.BreakerMetric
	// ProbeInterval is how often the breakers are sampled; 0 means 50ms.
	ProbeInterval time.Duration
	// Predict, when set, predicts the drill's flash-sale figures before it
	// runs, for run.json to hold beside what was observed (the reference
	// checkout's model: predict.ForDrill). It is asked only for the
	// reference checkout in an environment gameday starts with the
	// scenario's settings, and answers nil for a scenario it cannot
	// simulate. It must give up when its context is done.
	Predict func(ctx context.Context, sc *scenarios.Scenario, seed int64, runs int) (*runrecord.Prediction, error)
	// PredictBudget bounds the prediction; past it the drill goes on
	// without one and says so. 0 means DefaultPredictBudget.
	PredictBudget time.Duration
	// PredictRuns is how many runs of the model Predict simulates; 0 means
	// the predictor's default, negative no prediction.
	PredictRuns int
	// Shards, when set, sends the load from worker processes, one shard
	// of the plan each, instead of from this process (docs/scale.md).
	Shards *ShardOptions
}

// Run carries out one drill. It returns the record and the directory it
// was written to; the error is set only when no record could be written.
// A run interrupted through ctx removes its faults and is inconclusive.
//
// A drill runs in stages, each taking what the one before it gave and
// nothing reaching back (docs/runner.md, "A drill's stages"): prepare and
// arm (package internal/prepare), drive (internal/drive, which has the
// books read by internal/ledger), judge (package judge) and record
// (internal/record). Prepare and Drive give a caller the environment
// prepared once and driven many times.
func Run(ctx context.Context, sc *scenarios.Scenario, o Options) (*Record, string, error) {
	o = o.withDefaults()
	src := sc.Source()
	sc = o.scaled(sc)
	p := o.environment(sc)
	d, err := newDrill(p, o, sc, src)
	if err != nil {
		return nil, "", err
	}
	if d.pred, err = d.predict(ctx); err != nil {
		d.rec.Notes = append(d.rec.Notes, "no prediction: "+err.Error())
	}
	if ctx.Err() != nil {
		d.fail(VerdictInconclusive, "interrupted before setup")
		return d.finish()
	}
	err = p.Up(ctx, d.dir, d.progress)
	d.rec.Notes = append(d.rec.Notes, p.Notes...)
	if err != nil {
		if p.Environment != nil {
			d.rec.Environment = p.Environment.Info()
		}
		d.setupFailed(ctx, err)
	} else {
		d.run(ctx)
	}
	if err := p.Close(); err != nil {
		d.rec.Notes = append(d.rec.Notes, err.Error())
	}
	return d.finish()
}

func (o Options) withDefaults() Options {
	if o.RateScale == 0 {
		o.RateScale = 1
	}
	if o.TimeScale == 0 {
		o.TimeScale = 1
	}
	if o.RunsDir == "" {
		o.RunsDir = "runs"
	}
	if o.ProbeInterval == 0 {
		o.ProbeInterval = 50 * time.Millisecond
	}
	return o
}

// scaled is sc at the options' scales.
func (o Options) scaled(sc *scenarios.Scenario) *scenarios.Scenario {
	if o.RateScale != 1 || o.TimeScale != 1 {
		return sc.Scaled(o.RateScale, o.TimeScale)
	}
	return sc
}

// environment is the prepare stage's input: sc's environment, as the
// options shape it, not yet brought up.
func (o Options) environment(sc *scenarios.Scenario) *prepare.Env {
	return &prepare.Env{Base: sc, Config: prepare.Config{
		System: o.System, Proxies: o.Proxies, Environment: o.Environment, Engine: o.Engine, Journal: o.Journal,
		Binary: o.Binary, EmbeddedRedis: o.EmbeddedRedis, Seed: o.Seed, TimeScale: o.TimeScale,
	}}
}

// driveConfig is what the drive stage reads of the options.
func (o Options) driveConfig() drive.Config {
	return drive.Config{Progress: o.Progress, ProgressLive: o.ProgressLive, BreakerMetric: o.BreakerMetric,
		ProbeInterval: o.ProbeInterval, Shards: o.Shards, Binary: o.Binary}
}

// Prepared is a drill's environment brought up once — the processes or
// containers started, the system described and checked, the proxies
// created, the fault journal cleaned — to be driven several times, each
// drive a drill of its own with its own run directory, checkout ids and
// verdict. What a drive costs is then the load, the faults and the books,
// not the environment.
type Prepared struct {
	p *prepare.Env
	o Options
	// dir holds the environment's own files (the processes' logs).
	dir string
}

// Prepare brings up the environment sc is drilled in, as Run does before
// its load. Close it when done.
func Prepare(ctx context.Context, sc *scenarios.Scenario, o Options) (*Prepared, error) {
	o = o.withDefaults()
	sc = o.scaled(sc)
	dir := filepath.Join(o.RunsDir, time.Now().UTC().Format("20060102T150405.000Z")+"-"+sc.Name+"-environment")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create the environment's directory: %w", err)
	}
	p := o.environment(sc)
	progress := func(format string, args ...any) {
		if o.Progress != nil {
			fmt.Fprintf(o.Progress, format+"\n", args...)
		}
	}
	if err := p.Up(ctx, dir, progress); err != nil {
		_ = p.Close() // the error that matters is Up's
		return nil, err
	}
	return &Prepared{p: p, o: o, dir: dir}, nil
}

// Drive carries out one drill of sc in the prepared environment, as Run
// does after preparing it; the results are Run's. sc may differ from the
// scenario prepared in its load, faults, promises and seed, not in what
// the environment was brought up with (its system, environment, checkout,
// payment, stock and shops): that is an error, and nothing is sent.
// Drives of one Prepared run one after another, never at once.
func (pr *Prepared) Drive(ctx context.Context, sc *scenarios.Scenario) (*Record, string, error) {
	src := sc.Source()
	sc = pr.o.scaled(sc)
	if err := prepare.SameEnvironment(pr.p.Base, sc); err != nil {
		return nil, "", err
	}
	d, err := newDrill(pr.p, pr.o, sc, src)
	if err != nil {
		return nil, "", err
	}
	d.rec.Notes = append(d.rec.Notes, pr.p.Notes...)
	if d.pred, err = d.predict(ctx); err != nil {
		d.rec.Notes = append(d.rec.Notes, "no prediction: "+err.Error())
	}
	if ctx.Err() != nil {
		d.fail(VerdictInconclusive, "interrupted before the load")
		return d.finish()
	}
	d.run(ctx)
	return d.finish()
}

// Close stops the prepared environment.
func (pr *Prepared) Close() error { return pr.p.Close() }

// newDrill begins one drive: its run directory and record. src is the
// scenario's YAML, before the options scaled it (nil when it has none).
func newDrill(p *prepare.Env, o Options, sc *scenarios.Scenario, src []byte) (*drill, error) {
	seed := sc.Seed
	if o.Seed != 0 {
		seed = o.Seed
	}
	started := time.Now().UTC()
	dir := filepath.Join(o.RunsDir, started.Format("20060102T150405.000Z")+"-"+sc.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create run directory: %w", err)
	}
	rec := &Record{
		Scenario: sc.Name, File: sc.File, Seed: seed, RateScale: o.RateScale, TimeScale: o.TimeScale,
		StartedAt: started, Matrix: MatrixRef{Dependency: sc.Matrix.Dependency, Failure: sc.Matrix.Failure},
		Outcomes: map[string]int{}, Breakers: map[string]BreakerRecord{}, Faults: []FaultRecord{}, Expectations: []ExpectationResult{},
	}
	if r := sc.Load.Replay; r != nil && r.Read.Lines > 0 { // read, not standing in for a recording
		rec.Notes = append(rec.Notes, r.Note())
	}
	if src != nil {
		// Kept as written, so that the run can be judged again.
		if err := runrecord.WriteFileAtomic(filepath.Join(dir, ScenarioFile), src); err != nil {
			rec.Notes = append(rec.Notes, err.Error())
		}
	}
	return &drill{env: p, o: o, sc: sc, seed: seed, dir: dir, rec: rec}, nil
}

// finish writes the drive's record.
func (d *drill) finish() (*Record, string, error) {
	d.rec.FinishedAt = time.Now().UTC()
	if err := d.rec.WriteFile(filepath.Join(d.dir, "run.json")); err != nil {
		return d.rec, d.dir, err
	}
	return d.rec, d.dir, nil
}

// drill is one drive of a prepared environment being wired through its
// stages: the scenario driven, its seed, run directory and record, which
// the wiring fills from what each stage returns.
type drill struct {
	env  *prepare.Env
	o    Options
	sc   *scenarios.Scenario
	seed int64
	dir  string
	rec  *Record
	pred *runrecord.Prediction // nil: none
}

func (d *drill) fail(verdict Verdict, format string, args ...any) {
	d.rec.Verdict = verdict
	d.rec.Reason = fmt.Sprintf(format, args...)
}

func (d *drill) progress(format string, args ...any) {
	if d.o.Progress != nil {
		fmt.Fprintf(d.o.Progress, format+"\n", args...)
	}
}

// setupFailed records why the drive could not begin.
func (d *drill) setupFailed(ctx context.Context, err error) {
	if ctx.Err() != nil {
		d.fail(VerdictInconclusive, "interrupted during setup: %v", err)
	} else {
		d.fail(VerdictError, "set up the environment: %v", err)
	}
}

// run arms the drive, drives it, and records what it did and saw with
// the judgement of it; the books it opened are closed on the way out.
func (d *drill) run(ctx context.Context) {
	p := d.env
	if p.Environment != nil {
		d.rec.Environment = p.Environment.Info()
		d.rec.System = p.Sys.Name
	}
	armed, err := p.Arm(ctx, d.sc, d.seed)
	defer ledger.Close(armed.Ledgers)
	d.rec.Notes = append(d.rec.Notes, armed.Notes...)
	d.rec.CheckoutPrefix = armed.Prefix
	if err != nil {
		d.setupFailed(ctx, err)
		return
	}
	driven := drive.Run(ctx, drive.Input{Config: d.o.driveConfig(), Scenario: d.sc, Seed: d.seed, Dir: d.dir,
		Environment: p.Environment, Inj: p.Inj, Sys: p.Sys, Prefix: armed.Prefix, Ledgers: armed.Ledgers})
	record.Drive(d.rec, record.Input{Dir: d.dir, Scenario: d.sc, Sys: p.Sys, Prediction: d.pred, Drive: driven})
}

// DefaultPredictBudget bounds a drill's prediction when Options does not:
// the usual catalogue scenario takes a second or two on a Raspberry Pi 4;
// a scenario of thousands of arrivals a second could take most of an hour.
const DefaultPredictBudget = 30 * time.Second

// predict simulates the drill's flash-sale figures before it runs (the
// simulation is CPU-bound: it must not share the machine with the load).
// It returns no prediction and no error when there is nothing to predict
// (a service not started from the scenario's settings, or none asked
// for). It gives up when ctx is done (the run is interrupted) and, past
// its budget, goes on without a prediction: the error says why there is
// none.
func (d *drill) predict(ctx context.Context) (*runrecord.Prediction, error) {
	if d.o.Predict == nil || d.o.PredictRuns < 0 || !d.env.Fresh() {
		return nil, nil
	}
	budget := d.o.PredictBudget
	if budget <= 0 {
		budget = DefaultPredictBudget
	}
	pctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	p, err := d.o.Predict(pctx, d.sc, d.seed, d.o.PredictRuns)
	switch {
	case ctx.Err() != nil:
		return nil, errors.New("interrupted")
	case errors.Is(err, context.DeadlineExceeded):
		return nil, fmt.Errorf("the model did not finish within its budget of %s (-predict-budget); the drill went on without one", budget)
	case err != nil:
		return nil, err
	}
	return p, nil
}
