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

	// What the run saw is all the judge reads: kept in the run directory,
	// so that the run can be judged again (gameday judge).
	obs := &judge.Observations{
		Version: judge.ObservationsVersion, System: d.sys.Name, SystemFile: d.sys.File,
		End: end, Faults: ft, Shoppers: shoppers, Breakers: probe.transitions(), Metrics: metrics.taken(),
		Moves: d.rec.Moves, Unsettled: d.unsettled, Starvation: d.starvation(), Host: hostmon.Evidence(d.rec.Host),
	}
	for i, lg := range d.ledgers {
		obs.Books = append(obs.Books, judge.Books{Shop: lg.shop, Pod: lg.pod, Away: lg.away, Name: lg.name(), File: lg.sys.File, Facts: facts[i]})
	}
	obs.Ending = ended(context.Cause(loadCtx), loadErr, guard)
	obs.Ending.Left, obs.Ending.Unread = judge.ErrText(leftErr), judge.ErrText(settleErr)
	obs.Ending.Interrupted, obs.Ending.Halt = ctx.Err() != nil, haltReason
	for _, f := range d.rec.Faults {
		if f.Hits != nil && f.Hits.Idle() && f.Error == "" {
			obs.Ending.Idle = append(obs.Ending.Idle, fmt.Sprintf("%s on %s %s", f.Name, f.Target, f.Hits.Text()))
		}
	}
	if err := judge.WriteObservations(filepath.Join(d.dir, judge.ObservationsFile), obs); err != nil {
		d.rec.Notes = append(d.rec.Notes, err.Error())
	}
	d.record(judge.Run(d.sc, obs))
	// The prediction's figures are read from whole books only.
	if len(facts) == 1 && facts[0] != nil && d.ledgers[0].shop == "" && settleErr == nil {
		d.flash(report, facts[0])
	}
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
