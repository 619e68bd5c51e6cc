package gameday

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"path/filepath"
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
	"github.com/gameday-dev/gameday/internal/stats"
	"github.com/gameday-dev/gameday/scenarios"
)

// beforeRemovingFaults is called just before the faults are removed at the
// end of the load; tests make it panic.
var beforeRemovingFaults = func() {}

// driven is the drive stage's value: what the load, the fault timeline and
// the observers did and saw. The record stage (record.go) puts it into the
// run's record and has its observations judged; the drive writes nothing
// of the record itself.
type driven struct {
	// verdict and reason, when verdict is not "", say why the drive ended
	// without observations to judge.
	verdict Verdict
	reason  string
	// notes are the drive's, in the order they arose.
	notes []string
	// loaded: the load was sent (or tried), the faults lifted and the
	// books read; moves, faults and host are filled.
	loaded bool
	moves  []runrecord.Move
	faults []FaultRecord
	host   *runrecord.Host
	// Filled as far as the load went (its shards also when they could not
	// all join).
	load      LoadSummary
	unmatched []runrecord.Unmatched
	emptyKept []runrecord.EmptyKept
	// answered: the load gave its report; the fields below are filled.
	answered        bool
	transportErrors []runrecord.TransportError
	outcomes        map[string]int
	series          Series
	pods            []runrecord.Pod
	// obs is what the judge reads (nil when the drive ended before it
	// observed the run). report and facts give the flash-sale figures,
	// when facts is not nil: the books of one shop, read whole and
	// settled.
	obs    *judge.Observations
	report *load.Report
	facts  *judge.Facts
}

func (dv *driven) fail(verdict Verdict, format string, args ...any) {
	dv.verdict, dv.reason = verdict, fmt.Sprintf(format, args...)
}

func (dv *driven) note(n string) { dv.notes = append(dv.notes, n) }

// drive runs the load with the fault timeline, lifts the faults, lets the
// books settle and reads them: what it did and saw is its value.
func (d *drill) drive(ctx context.Context) (dv *driven) {
	dv = &driven{}
	// Faults come off on every way out of here, a panic included: on a
	// Toxiproxy or a container that outlives the runner nobody else would
	// remove them. After the normal removal below this finds none.
	var leftErr error // the removal at the end of the load, when it failed
	defer func() {
		err := d.inj.RemoveAll()
		switch {
		case err != nil && leftErr == nil:
			dv.note("removing faults: " + err.Error())
		case err == nil && leftErr != nil:
			dv.note("the faults that could not be removed when the load ended were removed once the books were read")
		}
		// A request-aware toxic removed only now was read as it went.
		for i, f := range dv.faults {
			if f.Hits == nil {
				dv.faults[i].Hits = d.inj.Hits(f.Name)
				if err := d.inj.HitsError(f.Name); err != nil && dv.faults[i].Hits == nil {
					dv.faults[i].HitsError = err.Error()
				}
			}
		}
	}()
	var shards *fleet.Coordinator
	if d.o.Shards != nil {
		c, stop, joined, err := d.joinShards(ctx)
		if err != nil {
			dv.load.Shards = joined
			if ctx.Err() != nil {
				dv.fail(VerdictInconclusive, "interrupted while the load's workers joined")
			} else {
				dv.fail(VerdictInconclusive, "the load's workers could not all take part, so nothing was sent: %v", err)
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
		dv.fail(VerdictError, "read the breakers of %s: %v", d.sys.Name, err)
		return dv
	}
	host := hostmon.New(start)
	// Where the system runs on this host, its own starvation is evidence
	// too (judge.Starvation.System); where not, the record says why.
	host.WatchSystem(env.SystemProcesses(d.env))
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
		dv.unmatched, dv.emptyKept = shards.Unmatched(), shards.EmptyKept()
	} else {
		flow := d.sys.Flow(nil, d.prefix)
		report, loadErr = load.Run(loadCtx, plan, flow, load.Options{
			Clock: func() time.Time { return time.Now() }, OnResult: onResult,
		})
		flow.CloseIdleConnections()
		dv.unmatched, dv.emptyKept = flow.Unmatched(), flow.EmptyKept()
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
	dv.loaded = true
	dv.moves = moving.wait()
	beforeRemovingFaults()
	// A fault that cannot be removed makes the run an error, decided with
	// the books: money or stock proven wrong in the same run still fails
	// it (judge.Decide).
	leftErr = d.inj.RemoveAll()
	if leftErr != nil {
		dv.note("removing faults: " + leftErr.Error())
	}
	dv.faults = tl.records(end)
	// Let the breakers recover and the books settle: holds expire, voids
	// land. Sampling goes on meanwhile.
	d.progress("gameday: %s: settling the books", d.sc.Name)
	facts, settleNotes, settleErr := d.settle(ctx.Err() != nil)
	dv.notes = append(dv.notes, settleNotes...)
	stopProbe()
	probeDone.Wait()
	stopHost()
	hostDone.Wait()
	dv.host = host.Record()

	if report == nil {
		dv.fail(VerdictError, "run the load: %v", loadErr)
		return dv
	}
	dv.answered = true
	loadShift := report.Start.Sub(start)
	rebase(report, start)
	dv.transportErrors = transportErrors(report)
	if err := writeAttempts(d.dir, report, d.sys.StepNames()); err != nil {
		dv.note(err.Error())
	}
	dv.load = LoadSummary{
		Scheduled: report.Scheduled, Started: report.Started, Dropped: report.Dropped,
		LateP50MS: stats.MS(report.LateP50), LateP99MS: stats.MS(report.LateP99), LateMaxMS: stats.MS(report.LateMax),
		DurationMS: end.Milliseconds(),
	}
	if shards != nil {
		dv.load.Shards = shards.Shards()
		// The workers' stalls count from the load's start, as their
		// records did before rebase.
		shift := loadShift.Milliseconds()
		for k := range dv.load.Shards {
			for i := range dv.load.Shards[k].StarvedSpans {
				dv.load.Shards[k].StarvedSpans[i].FromMS += shift
				dv.load.Shards[k].StarvedSpans[i].ToMS += shift
			}
		}
	}
	dv.outcomes = report.Outcomes()
	shoppers := shoppers(report)
	if shards != nil {
		// Shard k of n sent the plan's arrivals k, k+n, ... (load.Shard).
		for i, s := range report.Shoppers {
			shoppers[i].Shard = s.Index % d.o.Shards.N
		}
	}
	dv.load.CheckoutP95MS = stats.MS(stats.PercentileOf(judge.Latencies(shoppers, judge.Windows{End: end}, "all"), 95))
	dv.series = buildSeries(report, shoppers, end)
	dv.pods = d.podSeries(report, shoppers, end, dv.moves)

	ft := tl.spans(end)
	w := judge.NewWindows(d.sc.Faults, ft, end)
	if len(w.Faults) > 0 {
		if during := judge.Latencies(shoppers, w, "during"); len(during) > 0 {
			p := stats.MS(stats.PercentileOf(during, 95))
			dv.load.CheckoutP95DuringMS = &p
		}
	}

	// What the run saw is all the judge reads: kept in the run directory,
	// so that the run can be judged again (gameday judge).
	obs := &judge.Observations{
		Version: judge.ObservationsVersion, System: d.sys.Name, SystemFile: d.sys.File,
		End: end, Faults: ft, Shoppers: shoppers, Breakers: probe.transitions(), Metrics: metrics.taken(),
		Moves: dv.moves, Unsettled: d.unsettled, Starvation: d.starvation(dv.host, dv.load.Shards), Host: hostmon.Evidence(dv.host),
	}
	for i, lg := range d.ledgers {
		obs.Books = append(obs.Books, judge.Books{Shop: lg.shop, Pod: lg.pod, Away: lg.away, Name: lg.name(), File: lg.sys.File, Facts: facts[i]})
	}
	obs.Ending = ended(context.Cause(loadCtx), loadErr, guard)
	obs.Ending.Left, obs.Ending.Unread = judge.ErrText(leftErr), judge.ErrText(settleErr)
	obs.Ending.Interrupted, obs.Ending.Halt = ctx.Err() != nil, haltReason
	obs.Ending.Idle = idleFaults(dv.faults)
	if err := judge.WriteObservations(filepath.Join(d.dir, judge.ObservationsFile), obs); err != nil {
		dv.note(err.Error())
	}
	dv.obs, dv.report = obs, report
	// The prediction's figures are read from whole books only.
	if len(facts) == 1 && facts[0] != nil && d.ledgers[0].shop == "" && settleErr == nil {
		dv.facts = facts[0]
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

// starvation is the evidence of the machines that measured the run: the
// runner's own stalls (host), and in a sharded run each worker's, as it
// reported them (a worker that reported none excuses nothing); and the
// system's own, where it runs on the runner's host (host.System).
func (d *drill) starvation(host *runrecord.Host, shards []runrecord.Shard) judge.Starvation {
	var st judge.Starvation
	if host != nil {
		st.Runner = stalls(host.StarvedSpans)
		if host.System != nil {
			st.System = stalls(host.System.StarvedSpans)
		}
	}
	if d.o.Shards != nil {
		st.Shards = make([][]judge.Stall, d.o.Shards.N)
		for _, sh := range shards {
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
		out = append(out, judge.Stall{From: time.Duration(sp.FromMS) * time.Millisecond, To: time.Duration(sp.ToMS) * time.Millisecond,
			Waited: time.Duration(sp.WaitedMS) * time.Millisecond})
	}
	return out
}

// joinShards starts the coordinator of the load's workers (and, unless
// they are remote, the workers) and waits until every one is ready. stop
// ends the workers and the coordinator. When they do not all join, the
// workers are stopped and what each reported is returned with the error.
func (d *drill) joinShards(ctx context.Context) (*fleet.Coordinator, func(), []runrecord.Shard, error) {
	so := d.o.Shards
	listen := so.Listen
	if listen == "" {
		listen = "127.0.0.1:0"
	}
	if so.Remote && so.Token == "" {
		return nil, nil, nil, fmt.Errorf("remote workers need the run's token (%s) given to them and to the coordinator", fleet.TokenEnv)
	}
	// The workers are sent the purchase flow and its values only: not the
	// books' DSNs, the admin token or anything else of the system file.
	flow, err := d.sys.FlowSource()
	if err != nil {
		return nil, nil, nil, err
	}
	job := fleet.Job{Of: so.N, System: flow, Plan: d.plan()}
	c, err := fleet.Listen(listen, job, so.Token)
	if err != nil {
		return nil, nil, nil, err
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
			return nil, nil, nil, err
		}
		d.progress("gameday: %s: starting %d local load workers", d.sc.Name, so.N)
		if local, err = fleet.StartLocal(c, bin, d.dir); err != nil {
			stop()
			return nil, nil, nil, err
		}
	}
	if err := c.Join(ctx, so.JoinWithin); err != nil {
		joined := c.Shards()
		stop()
		return nil, nil, joined, err
	}
	return c, stop, nil, nil
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

// idleFaults are the request-aware faults that were in place and cannot
// be said to have acted (FaultRecord.Idle), each with why.
func idleFaults(faults []FaultRecord) []string {
	var out []string
	for _, f := range faults {
		if why := f.Idle(); why != "" {
			out = append(out, fmt.Sprintf("%s on %s %s", f.Name, f.Target, why))
		}
	}
	return out
}
