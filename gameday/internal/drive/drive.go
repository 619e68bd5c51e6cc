// Package drive is a drill's drive stage: it sends the scenario's load at
// the system, runs the fault timeline and the shops' moves, samples the
// breakers, the metrics and the host while the load runs, stops on the
// abort guard or the halt condition, removes every fault, and has the
// books settled and read (package ledger).
//
// In: Input, the prepared environment's parts and the armed drive's
// checkout ids and ledgers. Out: Result, what was done and observed
// (judge.Observations among it), errors included. It writes nothing into
// the run's record or directory: the record stage does.
package drive

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gameday-dev/gameday/gameday/books"
	"github.com/gameday-dev/gameday/gameday/env"
	"github.com/gameday-dev/gameday/gameday/fleet"
	"github.com/gameday-dev/gameday/gameday/hostmon"
	"github.com/gameday-dev/gameday/gameday/internal/ledger"
	"github.com/gameday-dev/gameday/gameday/judge"
	"github.com/gameday-dev/gameday/gameday/load"
	"github.com/gameday-dev/gameday/gameday/runrecord"
	"github.com/gameday-dev/gameday/gameday/system"
	"github.com/gameday-dev/gameday/internal/stats"
	"github.com/gameday-dev/gameday/scenarios"
)

// Run drives in: it runs the load with the fault timeline, lifts the
// faults, lets the books settle and reads them (package ledger), and
// returns what it did and saw.
func Run(ctx context.Context, in Input) *Result {
	d := &drill{in}
	return d.drive(ctx)
}

// drive runs the load with the fault timeline, lifts the faults, lets the
// books settle and reads them: what it did and saw is its value.
func (d *drill) drive(ctx context.Context) (dv *Result) {
	dv = &Result{}
	// Faults come off on every way out of here, a panic included: on a
	// Toxiproxy or a container that outlives the runner nobody else would
	// remove them. After the normal removal below this finds none.
	var leftErr error // the removal at the end of the load, when it failed
	defer func() {
		err := d.Inj.RemoveAll()
		switch {
		case err != nil && leftErr == nil:
			dv.note("removing faults: " + err.Error())
		case err == nil && leftErr != nil:
			dv.note("the faults that could not be removed when the load ended were removed once the books were read")
		}
		// A request-aware toxic removed only now was read as it went.
		for i, f := range dv.Faults {
			if c := d.Inj.Cache(f.Name); c != nil {
				dv.Faults[i].Cache = c // final once it is removed
			}
			if f.Hits == nil {
				dv.Faults[i].Hits = d.Inj.Hits(f.Name)
				if err := d.Inj.HitsError(f.Name); err != nil && dv.Faults[i].Hits == nil {
					dv.Faults[i].HitsError = err.Error()
				}
			}
		}
	}()
	var shards *fleet.Coordinator
	if d.Config.Shards != nil {
		c, stop, joined, err := d.joinShards(ctx)
		if err != nil {
			dv.Load.Shards = joined
			if ctx.Err() != nil {
				dv.fail(runrecord.VerdictInconclusive, "interrupted while the load's workers joined")
			} else {
				dv.fail(runrecord.VerdictInconclusive, "the load's workers could not all take part, so nothing was sent: %v", err)
			}
			return dv
		}
		defer stop()
		shards = c
	}
	loadCtx, stopLoad := context.WithCancelCause(ctx)
	defer stopLoad(nil)
	start := time.Now()
	probe := d.newProbe(start)
	if err := probe.baseline(); err != nil {
		dv.fail(runrecord.VerdictError, "read the breakers of %s: %v", d.Sys.Name, err)
		return dv
	}
	host := hostmon.New(start)
	// Where the system runs on this host, its own starvation is evidence
	// too (judge.Starvation.System); where not, the record says why.
	host.WatchSystem(env.SystemProcesses(d.Environment))
	hostCtx, stopHost := context.WithCancel(context.Background())
	var hostDone sync.WaitGroup
	hostDone.Add(1)
	go func() { defer hostDone.Done(); host.Run(hostCtx) }()
	probeCtx, stopProbe := context.WithCancel(context.Background())
	var probeDone sync.WaitGroup
	probeDone.Add(1)
	go func() { defer probeDone.Done(); probe.run(probeCtx) }()

	tl := newTimeline(d.Inj, d.Scenario.Faults, start, d.Seed)
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
	if a := d.Scenario.Abort; a != nil && a.ErrorRatio > 0 {
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
	if d.Config.Progress != nil {
		// The purchases': the live counts are theirs.
		for _, a := range plan.Arrivals() {
			if a.Journey == "" {
				live.schedule = append(live.schedule, a.At)
			}
		}
	}
	stopProgress := d.liveProgress(&live, probe, start)
	onResult := func(s *load.Shopper) {
		if s.Journey != "" {
			// A visit: the guard and the live counts are the purchases'.
			return
		}
		live.add(s.Outcome)
		if guard != nil {
			guard.observe(s.Outcome)
		}
	}
	var report *load.Report
	var loadErr error
	if shards != nil {
		report, loadErr = shards.Send(loadCtx, time.Now().Add(shards.Lead()), onResult)
		dv.Unmatched, dv.EmptyKept = shards.Unmatched(), shards.EmptyKept()
	} else {
		flow := d.Sys.Flow(nil, d.Prefix)
		flow.ScaleThink(d.Scenario.TimeScale())
		report, loadErr = load.Run(loadCtx, plan, flow, load.Options{
			Clock: func() time.Time { return time.Now() }, OnResult: onResult,
		})
		flow.CloseIdleConnections()
		dv.Unmatched, dv.EmptyKept = flow.Unmatched(), flow.EmptyKept()
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
	dv.Loaded = true
	dv.Moves = moving.wait()
	BeforeRemovingFaults()
	// A fault that cannot be removed makes the run an error, decided with
	// the books: money or stock proven wrong in the same run still fails
	// it (judge.Decide).
	leftErr = d.Inj.RemoveAll()
	if leftErr != nil {
		dv.note("removing faults: " + leftErr.Error())
	}
	dv.Faults = tl.records(end)
	// Let the breakers recover and the books settle: holds expire, voids
	// land. Sampling goes on meanwhile.
	d.progress("gameday: %s: settling the books", d.Scenario.Name)
	books, settleErr := ledger.Settle(d.Ledgers, ctx.Err() != nil, d.Prefix)
	facts := books.Facts
	dv.Notes = append(dv.Notes, books.Notes...)
	stopProbe()
	probeDone.Wait()
	stopHost()
	hostDone.Wait()
	dv.Host = host.Record()
	reqs, err := d.requests(ctx, start)
	dv.Requests = reqs
	if err != nil {
		dv.RequestsError = err.Error()
	}

	if report == nil {
		dv.fail(runrecord.VerdictError, "run the load: %v", loadErr)
		return dv
	}
	dv.Answered, dv.Report = true, report
	loadShift := report.Start.Sub(start)
	rebase(report, start)
	dv.TransportErrors = transportErrors(report)
	dv.Load = runrecord.LoadSummary{
		Scheduled: report.Scheduled, Started: report.Started, Dropped: report.Dropped,
		LateP50MS: stats.MS(report.LateP50), LateP99MS: stats.MS(report.LateP99), LateMaxMS: stats.MS(report.LateMax),
		DurationMS: end.Milliseconds(),
	}
	if shards != nil {
		dv.Load.Shards = shards.Shards()
		// The workers' stalls count from the load's start, as their
		// records did before rebase.
		shift := loadShift.Milliseconds()
		for k := range dv.Load.Shards {
			for i := range dv.Load.Shards[k].StarvedSpans {
				dv.Load.Shards[k].StarvedSpans[i].FromMS += shift
				dv.Load.Shards[k].StarvedSpans[i].ToMS += shift
			}
		}
	}
	dv.Outcomes = report.Outcomes()
	for _, v := range report.Visits {
		if v.Outcome == "" {
			continue
		}
		if dv.Visits == nil {
			dv.Visits = map[string]map[string]int{}
		}
		if dv.Visits[v.Journey] == nil {
			dv.Visits[v.Journey] = map[string]int{}
		}
		dv.Visits[v.Journey][v.Outcome]++
	}
	shoppers := shoppers(report)
	if shards != nil {
		// Shard k of n sent the plan's arrivals k, k+n, ... (load.Shard).
		for i, s := range report.Shoppers {
			shoppers[i].Shard = s.Index % d.Config.Shards.N
		}
	}
	dv.Load.CheckoutP95MS = stats.MS(stats.PercentileOf(judge.Latencies(shoppers, judge.Windows{End: end}, "all"), 95))
	dv.Series = buildSeries(report, shoppers, end)
	if d.Scenario.Load.Replay != nil {
		// The plan's seconds count from the load's start, the series'
		// from the drill's, loadShift before it.
		lead := []load.Stage{{Duration: loadShift, Target: 0, Hold: true}}
		dv.Series.Planned = load.PerSecond(append(lead, plan.Stages...), dv.Series.Seconds)
	}
	dv.Pods = d.podSeries(report, shoppers, end, dv.Moves)

	ft := tl.spans(end)
	w := judge.NewWindows(d.Scenario.Faults, ft, end)
	if len(w.Faults) > 0 {
		if during := judge.Latencies(shoppers, w, "during"); len(during) > 0 {
			p := stats.MS(stats.PercentileOf(during, 95))
			dv.Load.CheckoutP95DuringMS = &p
		}
	}

	// What the run saw is all the judge reads: the record stage keeps it
	// in the run directory, so that the run can be judged again (gameday
	// judge).
	obs := &judge.Observations{
		Version: judge.ObservationsVersion, System: d.Sys.Name, SystemFile: d.Sys.File,
		End: end, Faults: ft, Shoppers: shoppers, Visits: visits(report), Breakers: probe.transitions(), Metrics: metrics.taken(),
		Moves: dv.Moves, Unsettled: books.Unsettled, Starvation: d.starvation(dv.Host, dv.Load.Shards), Host: hostmon.Evidence(dv.Host),
	}
	for i, lg := range d.Ledgers {
		obs.Books = append(obs.Books, judge.Books{Shop: lg.Shop, Pod: lg.Pod, Away: lg.Away, Name: lg.Name(), File: lg.Sys.File, Facts: facts[i]})
	}
	obs.Ending = ended(context.Cause(loadCtx), loadErr, guard)
	obs.Ending.Left, obs.Ending.Unread = judge.ErrText(leftErr), judge.ErrText(settleErr)
	obs.Ending.Interrupted, obs.Ending.Halt = ctx.Err() != nil, haltReason
	obs.Ending.Idle = idleFaults(dv.Faults)
	dv.Obs = obs
	// The prediction's figures are read from whole books only.
	if len(facts) == 1 && facts[0] != nil && d.Ledgers[0].Shop == "" && settleErr == nil {
		dv.Facts = facts[0]
	}
	return dv
}

// ended says why the load stopped, as the judge reads it: a fault that
// could not be injected or lifted (errFault), the abort guard or the halt
// condition (errAborted; the guard's reason, when it has one, whatever
// stopped the load, since the halt's takes precedence in judge.Decide), a
// lost load worker (fleet.ErrShard).
func ended(cause, loadErr error, guard *abortGuard) judge.Ended {
	var e judge.Ended
	switch {
	case errors.Is(cause, errFault):
		e.Fault = cause.Error()
	case errors.Is(cause, errAborted):
		e.Aborted = true
	}
	if guard != nil {
		e.Guard = guard.reason()
	}
	if errors.Is(loadErr, fleet.ErrShard) {
		e.ShardLost = loadErr.Error()
	}
	return e
}

// startMetrics samples the scenario's PromQL expressions and the
// counters its promises name every second until ctx ends or done is
// called (which waits for the sampler). Without any, it returns nil.
func (d *drill) startMetrics(ctx context.Context, start time.Time, onHalt func(string)) (*metricSampler, func()) {
	var queries []string
	add := func(q string) {
		// Each once: a counter read twice in a tick would give a rate
		// over milliseconds.
		if !slices.Contains(queries, q) {
			queries = append(queries, q)
		}
	}
	for _, e := range d.Scenario.Expect {
		if e.Metric != nil {
			add(e.Metric.Key())
		}
	}
	var halt *scenarios.MetricBound
	var haltFor time.Duration
	if a := d.Scenario.Abort; a != nil && a.Metric != nil {
		halt, haltFor = a.Metric, a.For.D()
		add(a.Metric.Key())
	}
	if len(queries) == 0 {
		return nil, func() {}
	}
	m := newMetricSampler(d.Sys.Prometheus, start)
	m.openCounters = d.counterReader
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); m.run(ctx, queries, halt, haltFor, onHalt) }()
	return m, func() { cancel(); wg.Wait() }
}

// counterReader reaches the stores of the system's counters (only those:
// the books' own are the ledger's) and reads a counter by name; close
// lets go of them.
func (d *drill) counterReader(ctx context.Context) (read func(context.Context, string) (float64, error), close func(), err error) {
	sys := *d.Sys // the same compiled queries, fewer stores
	sys.Stores = map[string]*system.Store{}
	for _, q := range d.Sys.Counters {
		if st, ok := d.Sys.Stores[q.Store]; ok {
			sys.Stores[q.Store] = st
		}
	}
	r, err := books.Open(ctx, &sys, system.Values{SKU: d.Sys.SKU}, 2*time.Second)
	if err != nil {
		return nil, nil, fmt.Errorf("reach the counters' stores: %w", err)
	}
	read = func(ctx context.Context, name string) (float64, error) {
		q, ok := d.Sys.Counters[name]
		if !ok {
			return 0, fmt.Errorf("%s names no counter %s", d.Sys.File, name)
		}
		return r.Value(ctx, q)
	}
	return read, func() { _ = r.Close() }, nil
}

var (
	errAborted = errors.New("aborted by the abort guard")
	errFault   = errors.New("a fault could not be injected or lifted")
)
