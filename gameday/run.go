// Package gameday is the game-day runner: it brings up an environment, drives
// an open-model flash-sale load at the checkout, injects a scenario's faults
// on their timeline, watches the breakers, reconciles the books and decides
// a verdict, which it writes with everything it saw to run.json.
package gameday

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gameday-dev/gameday/gameday/env"
	"github.com/gameday-dev/gameday/gameday/faults"
	"github.com/gameday-dev/gameday/gameday/fleet"
	"github.com/gameday-dev/gameday/gameday/hostmon"
	"github.com/gameday-dev/gameday/gameday/judge"
	"github.com/gameday-dev/gameday/gameday/load"
	"github.com/gameday-dev/gameday/gameday/runrecord"
	"github.com/gameday-dev/gameday/gameday/system"
	"github.com/gameday-dev/gameday/gameday/toxi"
	defaults "github.com/gameday-dev/gameday/internal/checkoutdefaults"
	"github.com/gameday-dev/gameday/internal/noredirect"
	"github.com/gameday-dev/gameday/internal/redact"
	"github.com/gameday-dev/gameday/internal/stats"
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

// ShardOptions say how a drill's load is sent from several workers: this
// process coordinates them (the faults, the breakers and the books stay
// here) and judges the whole sale.
type ShardOptions struct {
	// N is the number of shards, at least 1.
	N int
	// Remote: the workers are started elsewhere ("gameday worker" in a
	// Swarm job or a Kubernetes Indexed Job) and call in at Listen with
	// Token; else this process starts N local worker processes of
	// Options.Binary.
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

// scaledSystemNote warns that a time-scaled drill of a described system
// shortens what gameday runs, not the system: its leases, timeouts, retry
// waits and settle times are its own. "" at full scale.
func scaledSystemNote(name string, scale float64) string {
	if scale == 1 || scale == 0 {
		return ""
	}
	return fmt.Sprintf("time-scaled by %g: the load, the faults' times, the shoppers' patience and the stock were scaled, but %s's own leases, timeouts, retry waits and settle times were not (gameday cannot shorten what it does not run): a drill that passes at full scale can fail scaled, and the other way round; judge %s at -time-scale 1", scale, name, name)
}

// starter is the environment the reference checkout is drilled in: the
// options', else the scenario's external one, else the local one.
func (d *drill) starter() env.Starter {
	if d.o.Environment != nil {
		return d.o.Environment
	}
	if e := d.sc.Environment; e.Kind == "external" {
		return env.ExternalOptions{Toxiproxy: e.Toxiproxy, Proxies: e.Proxies, CheckoutURL: e.CheckoutURL, PaymentURL: e.PaymentURL}
	}
	return env.LocalOptions{Binary: d.o.Binary, EmbeddedRedis: d.o.EmbeddedRedis}
}

// fresh reports whether the drill starts the reference checkout itself,
// with the scenario's settings and empty books, rather than drilling a
// system that runs anyway (described, external, Compose).
func (d *drill) fresh() bool {
	return d.o.System == nil && d.sc.System == "" && d.starter().Fresh()
}

// Run carries out one drill. It returns the record and the directory it
// was written to; the error is set only when no record could be written.
// A run interrupted through ctx removes its faults and is inconclusive.
func Run(ctx context.Context, sc *scenarios.Scenario, o Options) (*Record, string, error) {
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
	if o.RateScale != 1 || o.TimeScale != 1 {
		sc = sc.Scaled(o.RateScale, o.TimeScale)
	}
	seed := sc.Seed
	if o.Seed != 0 {
		seed = o.Seed
	}
	started := time.Now().UTC()
	dir := filepath.Join(o.RunsDir, started.Format("20060102T150405.000Z")+"-"+sc.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, "", fmt.Errorf("create run directory: %w", err)
	}
	rec := &Record{
		Scenario: sc.Name, File: sc.File, Seed: seed, RateScale: o.RateScale, TimeScale: o.TimeScale,
		StartedAt: started, Matrix: MatrixRef{Dependency: sc.Matrix.Dependency, Failure: sc.Matrix.Failure},
		Outcomes: map[string]int{}, Breakers: map[string]BreakerRecord{}, Faults: []FaultRecord{}, Expectations: []ExpectationResult{},
	}
	d := &drill{sc: sc, o: o, seed: seed, dir: dir, rec: rec}
	d.run(ctx)
	rec.FinishedAt = time.Now().UTC()
	if err := rec.WriteFile(filepath.Join(dir, "run.json")); err != nil {
		return rec, dir, err
	}
	return rec, dir, nil
}

type drill struct {
	sc   *scenarios.Scenario
	o    Options
	seed int64
	dir  string
	rec  *Record
	env  env.Environment
	inj  *faults.Injector
	pred *runrecord.Prediction // nil: none
	// sys is the system under test as described; ledgers are where its
	// books are read: one, or in a sale across shops one per shop, each
	// reader opened (and set up) before any load is sent.
	sys     *system.System
	ledgers []*ledger
	// unsettled: the books were read before they settled (the run was
	// interrupted, or books.settled never answered), so only what no
	// settling can undo is judged.
	unsettled bool
	// loadShift is the load's start minus the drill's (the zero of the
	// faults and the probe): the workers count from the load's.
	loadShift time.Duration
	// prefix starts every checkout id of this run (set once by plan): the
	// provider's books may hold other runs' charges, which are not ours to
	// reconcile.
	prefix string
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

func (d *drill) run(ctx context.Context) {
	d.predict(ctx)
	if ctx.Err() != nil {
		d.fail(VerdictInconclusive, "interrupted before setup")
		return
	}
	if err := d.setup(ctx); err != nil {
		if ctx.Err() != nil {
			d.fail(VerdictInconclusive, "interrupted during setup: %v", err)
		} else {
			d.fail(VerdictError, "set up the environment: %v", err)
		}
		d.closeBooks()
		if d.env != nil {
			_ = d.env.Close()
		}
		return
	}
	defer func() {
		d.closeBooks()
		if err := d.env.Close(); err != nil {
			d.rec.Notes = append(d.rec.Notes, "stopping the environment: "+err.Error())
		}
	}()
	d.drive(ctx)
}

// DefaultPredictBudget bounds a drill's prediction when Options does not:
// the usual catalogue scenario takes a second or two on a Raspberry Pi 4;
// a scenario of thousands of arrivals a second could take most of an hour.
const DefaultPredictBudget = 30 * time.Second

// predict simulates the drill's flash-sale figures before it runs (the
// simulation is CPU-bound: it must not share the machine with the load).
// It gives up when ctx is done (the run is interrupted) and, past its
// budget, goes on without a prediction and says so.
func (d *drill) predict(ctx context.Context) {
	if d.o.Predict == nil || d.o.PredictRuns < 0 || !d.fresh() {
		return // a service not started from the scenario's settings
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
		d.rec.Notes = append(d.rec.Notes, "no prediction: interrupted")
	case errors.Is(err, context.DeadlineExceeded):
		d.rec.Notes = append(d.rec.Notes, fmt.Sprintf("no prediction: the model did not finish within its budget of %s (-predict-budget); the drill went on without one", budget))
	case err != nil:
		d.rec.Notes = append(d.rec.Notes, "no prediction: "+err.Error())
	default:
		d.pred = p
	}
}

// setup brings up the environment, describes the system under test,
// reaches every store of its books and runs its setup: nothing is sent to
// the system before all of that worked.
func (d *drill) setup(ctx context.Context) error {
	journal := d.o.Journal
	if journal == nil {
		journal = faults.OpenJournal(faults.DefaultJournalPath())
		journal.Engine = d.o.Engine
	}
	removed, aside, err := journal.Cleanup(ctx)
	if err != nil {
		return fmt.Errorf("remove faults left by an earlier run: %w", err)
	}
	if len(removed) > 0 {
		d.rec.Notes = append(d.rec.Notes, fmt.Sprintf("removed %d faults left behind by a runner that was killed", len(removed)))
	}
	for _, e := range aside {
		// Not this drill's business unless it is on the same proxy, which
		// steady state then shows; it must not stop the drill.
		d.rec.Notes = append(d.rec.Notes, fmt.Sprintf("a fault left by killed run %s could not be undone and is set aside: %s: %s (gameday cleanup lists it; -drop %s forgets it)", e.RunID, e, e.SetAside, e.RunID))
	}
	runID := strconv.FormatInt(time.Now().UnixNano(), 36)
	sys := d.o.System
	if sys == nil && d.sc.System != "" {
		s, err := system.LoadFile(d.sc.SystemPath(), nil)
		if err != nil {
			return err
		}
		sys = s
	}
	if sys != nil {
		if d.o.Environment != nil {
			return fmt.Errorf("system %s is described (%s): gameday drills it as it runs, through its description, so the %s environment given as well cannot apply: leave it out", sys.Name, sys.File, d.o.Environment.Kind())
		}
		// Refused before anything is started or created on its Toxiproxy.
		if err := CheckScenario(d.sc, sys); err != nil {
			return err
		}
		d.progress("gameday: %s: drilling %s (%s)", d.sc.Name, sys.Name, sys.File)
		e, err := env.StartDescribed(ctx, sys, d.o.Proxies, d.sc.RequestAwareTargets(), d.o.Engine)
		if err != nil {
			return err
		}
		d.env, d.sys = e, sys
		if n := scaledSystemNote(sys.Name, d.o.TimeScale); n != "" {
			d.rec.Notes = append(d.rec.Notes, n)
			d.progress("gameday: %s: warning: %s", d.sc.Name, n)
		}
	} else {
		st := d.starter()
		if k := st.Kind(); d.sc.Environment.Pods > 0 && k != "local" && k != "containers" && k != "compose" {
			return fmt.Errorf("scenario %s asks for %d pods (environment.pods): pods are drilled in the local, containers and compose environments, not in the %s one", d.sc.Name, d.sc.Environment.Pods, k)
		}
		if st.Fresh() {
			d.progress("gameday: %s: starting the %s environment", d.sc.Name, st.Kind())
		}
		e, err := st.Start(ctx, env.Spec{Dir: d.dir, RunID: runID,
			PaymentArgs: paymentArgs(d.sc, d.seed), CheckoutArgs: checkoutArgs(d.sc),
			Pods: d.sc.Environment.Pods, Routes: d.routes(), RequestAware: d.sc.RequestAwareTargets()})
		if err != nil {
			return err
		}
		d.env = e
	}
	// A pause through a system file's own handle (systemd, a command, a
	// pid file) outlives the runner whoever's Toxiproxy it uses: it is
	// journaled before the SIGSTOP.
	env.JournalPauses(d.env, faults.PauseJournal(journal, runID))
	if env.OwnsToxiproxy(d.env) {
		d.inj = faults.NewInjector(d.env, nil, runID) // its Toxiproxy dies with us
		if d.sys != nil {
			// A described system's own containers do not.
			d.inj.JournalContainers(journal)
		}
	} else {
		d.inj = faults.NewInjector(d.env, journal, runID) // its Toxiproxy outlives us
	}
	if d.sys == nil {
		// The reference checkout, described like any system, at the
		// addresses this environment chose.
		vars := map[string]string{
			"CHECKOUT_URL": d.env.CheckoutURL(), "PAYMENT_URL": d.env.PaymentURL(),
			"TOXIPROXY": d.env.Toxiproxy().Addr(), "SETTLE_WITHIN": SettleLimit(d.sc).String(),
		}
		// Unknown to the environment, the token is the runner's own
		// GAMEDAY_ADMIN_TOKEN, if set (the system file's ${} rule).
		if tok := d.env.AdminToken(); tok != "" {
			vars[env.AdminTokenVar] = tok
		}
		s, err := system.Reference(vars)
		if err != nil {
			return err
		}
		d.sys = s
		if env.PodsOf(d.env) != nil {
			// The router answers purchases; the pods' books and breakers
			// are each pod's own: the shops' ledgers read the books, the
			// probe each pod's breakers (podAdmins).
			d.sys.Admin, d.sys.Stores, d.sys.Setup, d.sys.Books = "", nil, nil, system.Books{}
		}
		if d.ledgers, err = d.shopLedgers(vars); err != nil {
			return err
		}
	}
	d.rec.Environment = d.env.Info()
	d.rec.System = d.sys.Name
	if err := d.checkTargets(); err != nil {
		return err
	}
	if err := d.checkRequestAware(ctx); err != nil {
		return err
	}
	// The drill starts on clean proxies: what a dead runner left is
	// removed by the journal's rules; any other fault refuses the drill,
	// changing nothing, rather than measure it as the system's.
	cleaned, err := faults.Preflight(ctx, d.env, journal, d.proxies())
	if err != nil {
		return err
	}
	if len(cleaned) > 0 {
		d.rec.Notes = append(d.rec.Notes, fmt.Sprintf("removed %d faults a killed runner had left on the proxies this drill uses", len(cleaned)))
	}
	if err := errors.Join(needsPrometheus(d.sc, d.sys)...); err != nil {
		return err
	}
	if strings.HasPrefix(d.rec.Environment.Redis, "embedded") {
		for _, f := range d.sc.Faults {
			if f.Process != "" && f.Target != env.Payment {
				return fmt.Errorf("fault %s: a process fault on %s needs a real redis-server (the embedded one has no process, and comes back empty); install redis-server", f.Name, f.Target)
			}
		}
	}
	for _, n := range d.rec.Environment.Notes {
		d.progress("gameday: note: %s", n)
	}
	d.prefix = d.idPrefix()
	d.rec.CheckoutPrefix = d.prefix
	if err := reachCheckout(ctx, d.sys); err != nil {
		return err
	}
	if d.ledgers == nil {
		if d.ledgers, err = d.shopLedgers(nil); err != nil {
			return err
		}
	}
	for _, lg := range d.ledgers {
		if err := lg.open(ctx, d.prefix); err != nil {
			return err
		}
	}
	if admin := newAdminAPI(d.sys); admin.ok() {
		// The most checkouts in progress at once is this drill's, not the
		// checkout's since it started.
		_ = resetAdmissionMax(ctx, admin)
	}
	return nil
}

// CheckScenario checks a scenario against the described system it drills,
// with nothing contacted (gameday validate does it too): every fault's
// target is one of the system's dependencies, a process fault's declares a
// process handle, and PromQL promises and halts have a Prometheus server.
// The errors name the scenario's file, line and field.
func CheckScenario(sc *scenarios.Scenario, sys *system.System) error {
	var errs []error
	errs = append(errs, checkShops(sc, sys)...)
	deps := strings.Join(slices.Sorted(maps.Keys(sys.Dependencies)), ", ")
	for i, f := range sc.Faults {
		field := fmt.Sprintf("faults[%d].target", i)
		dep, ok := sys.Dependencies[f.Target]
		switch {
		case !ok:
			errs = append(errs, &scenarios.Error{File: sc.File, Line: sc.Line(field), Field: field,
				Msg: fmt.Sprintf("%q is not a dependency of %s (%s: %s)", f.Target, sys.Name, sys.File, deps)})
		case f.Process != "" && dep.Process == nil:
			errs = append(errs, &scenarios.Error{File: sc.File, Line: sc.Line(field), Field: field,
				Msg: fmt.Sprintf("a process fault on %s needs a process to act on: %s declares none (dependencies.%s.process)", f.Target, sys.File, f.Target)})
		}
	}
	return errors.Join(append(errs, needsPrometheus(sc, sys)...)...)
}

// needsPrometheus refuses PromQL promises and halts on a system that names
// no Prometheus server.
func needsPrometheus(sc *scenarios.Scenario, sys *system.System) []error {
	if sys.Prometheus != "" {
		return nil
	}
	var errs []error
	for i, e := range sc.Expect {
		if e.Metric != nil {
			field := fmt.Sprintf("expect[%d].metric", i)
			errs = append(errs, &scenarios.Error{File: sc.File, Line: sc.Line(field), Field: field,
				Msg: fmt.Sprintf("a PromQL promise needs a Prometheus server: %s names none (prometheus:)", sys.File)})
		}
	}
	if a := sc.Abort; a != nil && a.Metric != nil {
		errs = append(errs, &scenarios.Error{File: sc.File, Line: sc.Line("abort.metric"), Field: "abort.metric",
			Msg: fmt.Sprintf("a PromQL halt condition needs a Prometheus server: %s names none (prometheus:)", sys.File)})
	}
	return errs
}

// proxies are the names of the proxies the drill uses: every dependency's
// and every fault target's that has one.
func (d *drill) proxies() []string {
	seen := map[string]bool{}
	var out []string
	add := func(dep string) {
		if p, ok := d.env.ProxyName(dep); ok && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, dep := range slices.Sorted(maps.Keys(d.sys.Dependencies)) {
		add(dep)
	}
	for _, f := range d.sc.Faults {
		add(f.Target)
	}
	return out
}

// checkTargets refuses a fault on a dependency the system does not have,
// or that it cannot act on as the fault asks.
func (d *drill) checkTargets() error {
	for i, f := range d.sc.Faults {
		field := fmt.Sprintf("faults[%d].target", i)
		if f.Process != "" {
			if _, ok := d.env.Process(f.Target); ok {
				continue
			}
			if _, ok := d.sys.Dependencies[f.Target]; ok {
				return &scenarios.Error{File: d.sc.File, Line: d.sc.Line(field), Field: field,
					Msg: fmt.Sprintf("a process fault on %s needs a process to act on: %s declares none (dependencies.%s.process)", f.Target, d.sys.File, f.Target)}
			}
		} else if _, ok := d.env.ProxyName(f.Target); ok {
			continue
		} else if _, ok := d.sys.Dependencies[f.Target]; ok {
			return &scenarios.Error{File: d.sc.File, Line: d.sc.Line(field), Field: field,
				Msg: fmt.Sprintf("no Toxiproxy proxy is known in front of %s (name it: environment.proxies, -proxy %s=NAME)", f.Target, f.Target)}
		}
		return &scenarios.Error{File: d.sc.File, Line: d.sc.Line(field), Field: field,
			Msg: fmt.Sprintf("%q is not a dependency of %s (%s: %s)", f.Target, d.sys.Name, d.sys.File, strings.Join(slices.Sorted(maps.Keys(d.sys.Dependencies)), ", "))}
	}
	return nil
}

// checkRequestAware refuses, before anything is sent, a drill whose
// request-aware toxic (lost_reply) the Toxiproxy in front of its target
// cannot serve: a stock Toxiproxy, whose toxics are TCP-level only, or a
// proxy of gameday's without a relay behind it (one created before the
// drill, by someone who did not ask for one).
func (d *drill) checkRequestAware(ctx context.Context) error {
	if len(d.sc.RequestAwareTargets()) == 0 {
		return nil
	}
	c := d.env.Toxiproxy()
	caps, capsErr := c.Capabilities(ctx)
	if capsErr != nil && !errors.Is(capsErr, toxi.ErrNotFound) {
		return fmt.Errorf("toxiproxy at %s: %w", redact.URL(c.Addr()), capsErr)
	}
	for i, f := range d.sc.Faults {
		if f.Toxic == nil || !scenarios.RequestAware(f.Toxic.Type) {
			continue
		}
		field := fmt.Sprintf("faults[%d].toxic.type", i)
		fail := func(msg string) error {
			return &scenarios.Error{File: d.sc.File, Line: d.sc.Line(field), Field: field, Msg: msg}
		}
		if capsErr != nil {
			return fail(fmt.Sprintf("%s is served by gameday's Toxiproxy only, and the one at %s is not gameday's (a stock Toxiproxy's toxics are TCP-level): run gameday serve toxiproxy -request-aware in its place, or name no toxiproxy in the system file for gameday to start its own (docs/faults.md)", f.Toxic.Type, redact.URL(c.Addr())))
		}
		if !slices.Contains(caps.Toxics, f.Toxic.Type) {
			return fail(fmt.Sprintf("the Toxiproxy at %s is gameday's but does not serve %s (it serves %s): run this version of gameday serve toxiproxy there", redact.URL(c.Addr()), f.Toxic.Type, strings.Join(caps.RequestAware, ", ")))
		}
		proxy, _ := d.env.ProxyName(f.Target)
		if !slices.Contains(caps.Relayed, proxy) {
			return fail(fmt.Sprintf("%s needs a relay behind proxy %s (in front of %s), and it has none: it was created without \"request_aware\": true; run gameday serve toxiproxy -request-aware, or delete the proxy for the drill to create it (docs/faults.md)", f.Toxic.Type, proxy, f.Target))
		}
	}
	return nil
}

// beforeRemovingFaults is called just before the faults are removed at the
// end of the load; tests make it panic.
var beforeRemovingFaults = func() {}

// drive runs the load with the fault timeline, then reconciles and judges.
func (d *drill) drive(ctx context.Context) {
	// Faults come off on every way out of here, a panic included: on a
	// Toxiproxy or a container that outlives the runner nobody else would
	// remove them. After the normal removal below this finds none.
	var leftErr error // the removal at the end of the load, when it failed
	defer func() {
		err := d.inj.RemoveAll()
		switch {
		case err != nil && leftErr == nil:
			d.rec.Notes = append(d.rec.Notes, "removing faults: "+err.Error())
		case err == nil && leftErr != nil:
			d.rec.Notes = append(d.rec.Notes, "the faults that could not be removed when the load ended were removed once the books were read")
		}
		// A request-aware toxic removed only now was read as it went.
		for i, f := range d.rec.Faults {
			if f.Hits == nil {
				d.rec.Faults[i].Hits = d.inj.Hits(f.Name)
			}
		}
	}()
	var shards *fleet.Coordinator
	if d.o.Shards != nil {
		c, stop, err := d.joinShards(ctx)
		if err != nil {
			if ctx.Err() != nil {
				d.fail(VerdictInconclusive, "interrupted while the load's workers joined")
			} else {
				d.fail(VerdictInconclusive, "the load's workers could not all take part, so nothing was sent: %v", err)
			}
			return
		}
		defer stop()
		shards = c
	}
	loadCtx, stopLoad := context.WithCancelCause(ctx)
	defer stopLoad(nil)
	start := time.Now()
	probe := d.newProbe(start)
	if err := probe.baseline(); err != nil {
		d.fail(VerdictError, "read the breakers of %s: %v", d.sys.Name, err)
		return
	}
	host := hostmon.New(start)
	hostCtx, stopHost := context.WithCancel(context.Background())
	var hostDone sync.WaitGroup
	hostDone.Add(1)
	go func() { defer hostDone.Done(); host.Run(hostCtx) }()
	probeCtx, stopProbe := context.WithCancel(context.Background())
	var probeDone sync.WaitGroup
	probeDone.Add(1)
	go func() { defer probeDone.Done(); probe.run(probeCtx) }()

	tl := newTimeline(d.inj, d.sc.Faults, start, d.seed)
	// A fault that cannot be injected or lifted at its time stops the
	// load: the system is no longer tested as the scenario says. A lift
	// begun once the load had ended changed nothing the load saw: when it
	// fails, the removal at the end tries again (timeline.ended).
	var loadOver atomic.Bool
	tl.ended = loadOver.Load
	tl.onError = func(name string, err error) { stopLoad(fmt.Errorf("%w: %s: %v", errFault, name, err)) }
	tlCtx, stopTimeline := context.WithCancel(loadCtx)
	tl.start(tlCtx)
	moving := d.startMoves(loadCtx, start)

	var guard *abortGuard
	if a := d.sc.Abort; a != nil && a.ErrorRatio > 0 {
		guard = newAbortGuard(a.ErrorRatio, a.For.D(), func() {
			stopLoad(errAborted)
		})
		go guard.watch(loadCtx)
	}
	var haltReason string
	var haltOnce sync.Once
	metrics, metricsDone := d.startMetrics(loadCtx, start, func(why string) {
		haltOnce.Do(func() { haltReason = why })
		stopLoad(errAborted)
	})
	plan := d.plan()
	live := liveCounts{start: start}
	if d.o.Progress != nil {
		live.schedule = plan.Offsets()
	}
	stopProgress := d.liveProgress(&live, probe, start)
	onResult := func(s *load.Shopper) {
		live.add(s.Outcome)
		if guard != nil {
			guard.observe(s.Outcome)
		}
	}
	var report *load.Report
	var loadErr error
	if shards != nil {
		report, loadErr = shards.Send(loadCtx, time.Now().Add(shards.Lead()), onResult)
		d.rec.Unmatched, d.rec.EmptyKept = shards.Unmatched(), shards.EmptyKept()
	} else {
		flow := d.sys.Flow(nil, d.prefix)
		report, loadErr = load.Run(loadCtx, plan, flow, load.Options{
			Clock: func() time.Time { return time.Now() }, OnResult: onResult,
		})
		flow.CloseIdleConnections()
		d.rec.Unmatched, d.rec.EmptyKept = flow.Unmatched(), flow.EmptyKept()
	}
	loadOver.Store(true)
	stopProgress()
	stopTimeline()
	tl.wait()
	metricsDone()
	end := time.Since(start)
	// A move under way when the load ends finishes (each of its steps is
	// bounded) before the faults come off and the books are read; one not
	// begun never begins.
	d.rec.Moves = moving.wait()
	beforeRemovingFaults()
	// A fault that cannot be removed makes the run an error, decided with
	// the books: money or stock proven wrong in the same run still fails
	// it (judge.Decide).
	leftErr = d.inj.RemoveAll()
	if leftErr != nil {
		d.rec.Notes = append(d.rec.Notes, "removing faults: "+leftErr.Error())
	}
	d.rec.Faults = tl.records(end)
	// Let the breakers recover and the books settle: holds expire, voids
	// land. Sampling goes on meanwhile.
	d.progress("gameday: %s: settling the books", d.sc.Name)
	facts, settleErr := d.settle(ctx.Err() != nil)
	stopProbe()
	probeDone.Wait()
	stopHost()
	hostDone.Wait()
	d.rec.Host = host.Record()

	if report == nil {
		d.fail(VerdictError, "run the load: %v", loadErr)
		return
	}
	d.loadShift = report.Start.Sub(start)
	rebase(report, start)
	d.rec.TransportErrors = transportErrors(report)
	if err := writeAttempts(d.dir, report, d.sys.StepNames()); err != nil {
		d.rec.Notes = append(d.rec.Notes, err.Error())
	}
	d.rec.Load = LoadSummary{
		Scheduled: report.Scheduled, Started: report.Started, Dropped: report.Dropped,
		LateP50MS: stats.MS(report.LateP50), LateP99MS: stats.MS(report.LateP99), LateMaxMS: stats.MS(report.LateMax),
		DurationMS: end.Milliseconds(),
	}
	if shards != nil {
		d.rec.Load.Shards = shards.Shards()
		// The workers' stalls count from the load's start, as their
		// records did before rebase.
		shift := d.loadShift.Milliseconds()
		for k := range d.rec.Load.Shards {
			for i := range d.rec.Load.Shards[k].StarvedSpans {
				d.rec.Load.Shards[k].StarvedSpans[i].FromMS += shift
				d.rec.Load.Shards[k].StarvedSpans[i].ToMS += shift
			}
		}
	}
	d.rec.Outcomes = report.Outcomes()
	shoppers := shoppers(report)
	if shards != nil {
		// Shard k of n sent the plan's arrivals k, k+n, ... (load.Shard).
		for i, s := range report.Shoppers {
			shoppers[i].Shard = s.Index % d.o.Shards.N
		}
	}
	d.rec.Load.CheckoutP95MS = stats.MS(stats.PercentileOf(judge.Latencies(shoppers, judge.Windows{End: end}, "all"), 95))
	d.rec.Series = buildSeries(report, shoppers, end)
	d.rec.Pods = d.podSeries(report, shoppers, end)

	ft := tl.spans(end)
	w := judge.NewWindows(d.sc.Faults, ft, end)
	if len(w.Faults) > 0 {
		if during := judge.Latencies(shoppers, w, "during"); len(during) > 0 {
			p := stats.MS(stats.PercentileOf(during, 95))
			d.rec.Load.CheckoutP95DuringMS = &p
		}
	}
	trans := probe.transitions()
	for dep, br := range judge.Breakers(trans, d.sc.Faults, ft) {
		d.rec.Breakers[dep] = br
	}
	d.rec.Expectations = judge.Evaluate(d.sc, shoppers, w, ft, d.sc.Faults, trans, metrics.taken(), byName(d.rec.Moves))

	// Books that could not be read in whole are judged as far as they
	// were read: an oversell they prove fails the run, and the run is an
	// error otherwise (judge.Decide).
	var checks []ExpectationResult
	if slices.ContainsFunc(facts, func(f *judge.Facts) bool { return f != nil }) {
		notChecked, examples := d.reconcile(facts, shoppers, report)
		checks = judge.InvariantResults(d.rec.Invariants, d.sc.Invariants.Allow, notChecked, examples)
		checks = judge.Provisional(checks, d.unsettled, leftErr)
		d.rec.InvariantChecks = checks
		if len(notChecked) > 0 {
			var names []string
			for n := range notChecked {
				names = append(names, n)
			}
			sort.Strings(names)
			why := "for want of the facts in " + d.sys.File
			if settleErr != nil {
				why = "for want of the facts in " + d.sys.File + " or of those that could not be read"
			}
			d.rec.Notes = append(d.rec.Notes, fmt.Sprintf("not checked, %s: %s", why, strings.Join(names, ", ")))
		}
		// The prediction's figures are read from whole books only.
		if len(facts) == 1 && d.ledgers[0].shop == "" && settleErr == nil {
			d.flash(report, facts[0])
		}
	}

	// A run that could not be carried out is an error already; the rest is
	// decide's.
	if d.rec.Verdict != "" {
		return
	}
	e := ending(context.Cause(loadCtx), loadErr, guard)
	e.Interrupted, e.Halt, e.Unsettled, e.Left, e.Unread = ctx.Err() != nil, haltReason, d.unsettled, leftErr, settleErr
	e.Expectations, e.Checks = d.rec.Expectations, checks
	for _, f := range d.rec.Faults {
		if f.Hits != nil && f.Hits.Idle() && f.Error == "" {
			e.Idle = append(e.Idle, fmt.Sprintf("%s on %s %s", f.Name, f.Target, f.Hits.Text()))
		}
	}
	obs := judge.Observed{Shoppers: shoppers, Windows: w, Faults: ft, Order: d.sc.Faults, Breakers: trans}
	e.Starved = func() ([]string, int) { return judge.Excuse(d.sc, d.rec.Expectations, checks, obs, d.starvation()) }
	e.Host = hostmon.Evidence(d.rec.Host)
	j := judge.Decide(e)
	d.rec.Verdict, d.rec.Reason = j.Verdict, j.Reason
	if j.Starved != nil {
		d.rec.Host.Starved = j.Starved
	}
}

// starvation is the evidence of the machines that measured the run: the
// runner's own stalls, and in a sharded run each worker's, as it reported
// them (a worker that reported none excuses nothing).
func (d *drill) starvation() judge.Starvation {
	var st judge.Starvation
	if h := d.rec.Host; h != nil {
		st.Runner = stalls(h.StarvedSpans)
	}
	if d.o.Shards != nil {
		st.Shards = make([][]judge.Stall, d.o.Shards.N)
		for _, sh := range d.rec.Load.Shards {
			if sh.Index >= 0 && sh.Index < len(st.Shards) {
				st.Shards[sh.Index] = stalls(sh.StarvedSpans)
			}
		}
	}
	return st
}

func stalls(spans []runrecord.StallSpan) []judge.Stall {
	out := make([]judge.Stall, 0, len(spans))
	for _, sp := range spans {
		out = append(out, judge.Stall{From: time.Duration(sp.FromMS) * time.Millisecond, To: time.Duration(sp.ToMS) * time.Millisecond})
	}
	return out
}

// ending says why the load stopped, as judge.Decide reads it: a fault that
// could not be injected or lifted (errFault), the abort guard or the halt
// condition (errAborted; the guard's reason, when it has one, whatever
// stopped the load, since the halt's takes precedence in Decide), a lost
// load worker (fleet.ErrShard).
func ending(cause, loadErr error, guard *abortGuard) judge.Ending {
	var e judge.Ending
	switch {
	case errors.Is(cause, errFault):
		e.Fault = cause
	case errors.Is(cause, errAborted):
		e.Aborted = true
	}
	if guard != nil {
		e.Guard = guard.reason()
	}
	if errors.Is(loadErr, fleet.ErrShard) {
		e.ShardLost = loadErr
	}
	return e
}

// joinShards starts the coordinator of the load's workers (and, unless
// they are remote, the workers) and waits until every one is ready. stop
// ends the workers and the coordinator.
func (d *drill) joinShards(ctx context.Context) (*fleet.Coordinator, func(), error) {
	so := d.o.Shards
	listen := so.Listen
	if listen == "" {
		listen = "127.0.0.1:0"
	}
	if so.Remote && so.Token == "" {
		return nil, nil, fmt.Errorf("remote workers need the run's token (%s) given to them and to the coordinator", fleet.TokenEnv)
	}
	// The workers are sent the purchase flow and its values only: not the
	// books' DSNs, the admin token or anything else of the system file.
	flow, err := d.sys.FlowSource()
	if err != nil {
		return nil, nil, err
	}
	job := fleet.Job{Of: so.N, System: flow, Plan: d.plan()}
	c, err := fleet.Listen(listen, job, so.Token)
	if err != nil {
		return nil, nil, err
	}
	var local *fleet.Local
	stop := func() {
		if local != nil {
			local.Stop()
		}
		_ = c.Close()
	}
	if so.Announce != nil {
		so.Announce(c.URL())
	}
	if so.Remote {
		d.progress("gameday: %s: waiting for %d workers to call in at %s", d.sc.Name, so.N, c.URL())
	} else {
		bin, err := env.ResolveBinary(d.o.Binary)
		if err != nil {
			stop()
			return nil, nil, err
		}
		d.progress("gameday: %s: starting %d local load workers", d.sc.Name, so.N)
		if local, err = fleet.StartLocal(c, bin, d.dir); err != nil {
			stop()
			return nil, nil, err
		}
	}
	if err := c.Join(ctx, so.JoinWithin); err != nil {
		d.rec.Load.Shards = c.Shards()
		stop()
		return nil, nil, err
	}
	return c, stop, nil
}

// startMetrics samples the scenario's PromQL expressions every second
// until ctx ends or done is called (which waits for the sampler). Without
// any, it returns nil.
func (d *drill) startMetrics(ctx context.Context, start time.Time, onHalt func(string)) (*metricSampler, func()) {
	var queries []string
	for _, e := range d.sc.Expect {
		if e.Metric != nil {
			queries = append(queries, e.Metric.Query)
		}
	}
	var halt *scenarios.MetricBound
	var haltFor time.Duration
	if a := d.sc.Abort; a != nil && a.Metric != nil {
		halt, haltFor = a.Metric, a.For.D()
		queries = append(queries, a.Metric.Query)
	}
	if len(queries) == 0 {
		return nil, func() {}
	}
	m := newMetricSampler(d.sys.Prometheus, start)
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); m.run(ctx, queries, halt, haltFor, onHalt) }()
	return m, func() { cancel(); wg.Wait() }
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

var (
	errAborted = errors.New("aborted by the abort guard")
	errFault   = errors.New("a fault could not be injected or lifted")
)

// SettleLimit bounds the wait for the reference checkout's books after
// sc's load (its system file's settle_within): leases expire (the lease
// TTL), the late-claim grace passes (twice the payment timeout), the
// sweeper voids (ten seconds).
func SettleLimit(sc *scenarios.Scenario) time.Duration {
	lease := sc.Checkout.LeaseTTL.D()
	if lease == 0 {
		lease = defaults.LeaseTTL
	}
	pay := sc.Checkout.Payment.Timeout.D()
	if pay == 0 {
		pay = defaults.PaymentTimeout
	}
	return lease + 2*pay + 10*time.Second
}

func queryTimeout(q *system.Query) time.Duration {
	if q == nil {
		return time.Second
	}
	return q.Timeout.D() + time.Second
}

func (d *drill) plan() load.Plan {
	l := d.sc.Load
	p := load.Plan{
		Patience: l.Patience.D(), MaxRetries: l.MaxRetries, MaxShoppers: d.sc.ShopperPool(),
		Seed: d.seed, IDPrefix: d.prefix,
	}
	p.Stages = loadStages(l.Stages)
	for _, sh := range d.sc.Shops {
		p.Shops = append(p.Shops, load.ShopLoad{Name: sh.Name, Stages: loadStages(sh.Stages)})
	}
	if l.RetryJitter != nil {
		p.RetryJitter = *l.RetryJitter
	}
	if l.SessionShare != nil {
		p.SessionShare = *l.SessionShare
	}
	return p
}

func loadStages(sts []scenarios.Stage) []load.Stage {
	var out []load.Stage
	for _, st := range sts {
		out = append(out, load.Stage{Duration: st.Duration.D(), Target: st.Target})
	}
	return out
}

// rebase moves every time of the report to count from start, the zero of
// the fault timeline and the breaker probe (the load starts its own clock a
// moment later, once its shopper pool is ready).
func rebase(r *load.Report, start time.Time) {
	off := r.Start.Sub(start)
	if off == 0 {
		return
	}
	for _, s := range r.Shoppers {
		s.Scheduled += off
		s.Deadline += off
		if s.Started != 0 || s.Outcome != "" {
			s.Started += off
		}
		if s.Outcome != "" {
			s.Finished += off
		}
		for i := range s.Attempts {
			s.Attempts[i].At += off
		}
	}
	r.Start = start
}

// reachCheckout asks the checkout's base_url once (any HTTP answer will
// do) before anything is set up or sent: a checkout that is not there
// would otherwise take the whole load as errors and fail the drill, as if
// it had broken a promise, when the drill could not be carried out.
func reachCheckout(ctx context.Context, sys *system.System) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, sys.BaseURL, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", sys.Where("base_url"), err)
	}
	// Any answer will do, a redirect included (not followed).
	resp, err := noredirect.Client(0).Do(req)
	if err != nil {
		return fmt.Errorf("the checkout does not answer at %s (%s): %w; nothing was set up or sent", redact.URL(sys.BaseURL), sys.Where("base_url"), redact.Error(err))
	}
	resp.Body.Close()
	return nil
}

// idPrefix starts every checkout id. In the local environment, which
// starts empty, it is the seed's, so that the same seed gives the same ids
// and therefore the same payment latencies and declines (the stand-in draws
// them from the seed and the key). Against an external service it also
// carries the time, so a run never meets the orders of an earlier one.
func (d *drill) idPrefix() string {
	p := "s" + strconv.FormatInt(d.seed, 36)
	if !d.fresh() {
		p += "t" + strconv.FormatInt(time.Now().Unix(), 36)
	}
	return p
}

// toFault turns a scenario fault into one the injector can apply. A
// request-aware toxic with no seed of its own draws from the run's seed
// and its fault's name: the same drill hits the same requests, where the
// system sends them in the same order.
func toFault(f scenarios.Fault, seed int64) (faults.Fault, error) {
	out := faults.Fault{Name: f.Name, Target: f.Target, Down: f.Down, Process: f.Process}
	if f.Toxic != nil {
		attrs, err := f.Toxic.APIAttributes()
		if err != nil {
			return out, err
		}
		if _, given := attrs["seed"]; !given && scenarios.RequestAware(f.Toxic.Type) {
			h := fnv.New64a()
			fmt.Fprintf(h, "%d/%s", seed, f.Name)
			attrs["seed"] = h.Sum64() >> 1 // a whole number JSON and YAML readers keep exact in int64
		}
		t := toxi.Toxic{Type: f.Toxic.Type, Stream: f.Toxic.Stream, Toxicity: 1, Attributes: attrs}
		if f.Toxic.Toxicity != nil {
			t.Toxicity = *f.Toxic.Toxicity
		}
		if t.Stream == "" {
			t.Stream = "downstream"
		}
		out.Toxic = &t
	}
	return out, nil
}
