package drive

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/gameday-dev/gameday/gameday/faults"
	"github.com/gameday-dev/gameday/gameday/judge"
	"github.com/gameday-dev/gameday/gameday/runrecord"
	"github.com/gameday-dev/gameday/internal/wait"
	"github.com/gameday-dev/gameday/scenarios"
)

// timeline injects each fault at its time and removes it after its
// duration, and records when each was really in place.
type timeline struct {
	inj    *faults.Injector
	faults []scenarios.Fault
	t0     time.Time
	seed   int64 // the run's: a request-aware toxic's draws follow it
	wg     sync.WaitGroup

	// onError, when set, is told of a fault that could not be injected,
	// or lifted at its time: either way the drill no longer tests what
	// the scenario says, and its load must stop.
	onError func(name string, err error)
	// ended, when set, says whether the load has ended: a lift begun
	// after that which fails is left to the removal at the end, not told
	// to onError (the load it would stop is over, and nothing it saw was
	// changed).
	ended func() bool

	mu   sync.Mutex
	recs map[string]*runrecord.FaultRecord
}

func newTimeline(inj *faults.Injector, fs []scenarios.Fault, start time.Time, seed int64) *timeline {
	return &timeline{inj: inj, faults: fs, t0: start, seed: seed, recs: map[string]*runrecord.FaultRecord{}}
}

// start runs one goroutine per fault (a scenario has a handful); each ends
// when its fault is removed or ctx is done. Faults still in place when ctx
// ends are left to the caller's RemoveAll.
func (tl *timeline) start(ctx context.Context) {
	for _, f := range tl.faults {
		tl.wg.Add(1)
		go func() {
			defer tl.wg.Done()
			// A panic applying or lifting a fault stops the load with an
			// error instead of the process, so that the run removes every
			// fault and records why.
			defer func() {
				if p := recover(); p != nil {
					if tl.onError == nil {
						panic(p)
					}
					tl.onError(f.Name, fmt.Errorf("panic: %v", p))
				}
			}()
			tl.one(ctx, f)
		}()
	}
}

func (tl *timeline) one(ctx context.Context, sf scenarios.Fault) {
	if !wait.Until(ctx, tl.t0.Add(sf.At.D())) {
		return
	}
	rec := &runrecord.FaultRecord{Name: sf.Name, Target: sf.Target, Kind: sf.Kind(), StartMS: time.Since(tl.t0).Milliseconds(), EndMS: -1}
	tl.mu.Lock()
	tl.recs[sf.Name] = rec
	tl.mu.Unlock()
	f, err := toFault(sf, tl.seed)
	if err == nil {
		err = tl.inj.Apply(ctx, f)
	}
	if err != nil {
		tl.mu.Lock()
		rec.Error = err.Error()
		rec.EndMS = rec.StartMS
		tl.mu.Unlock()
		if tl.onError != nil && ctx.Err() == nil {
			tl.onError(sf.Name, err)
		}
		return
	}
	if sf.Process == "restart" {
		tl.restarted(rec, sf.For.D())
		return
	}
	if sf.For == 0 {
		return // it stays until the run ends
	}
	wait.Until(ctx, tl.t0.Add(sf.At.D()+sf.For.D()))
	if ctx.Err() != nil {
		return // RemoveAll ends it
	}
	// A breaker may see the dependency back before the runner does (a
	// restarted container answers before its health check says so), so the
	// record keeps when lifting began as well as when it was done.
	lifted := time.Since(tl.t0).Milliseconds()
	late := tl.ended != nil && tl.ended()
	err = tl.inj.Remove(context.Background(), f.Name)
	tl.mu.Lock()
	rec.LiftedMS = &lifted
	if err == nil {
		rec.EndMS = time.Since(tl.t0).Milliseconds()
	} else {
		// Still in place (the injector keeps it, and the journal its
		// entry, for the removal at the end of the load to try again):
		// it ends with the load, which stops now.
		rec.LiftError = err.Error()
	}
	tl.mu.Unlock()
	if err != nil && tl.onError != nil && !late {
		tl.onError(sf.Name, err)
	}
}

// restarted records a restart once Apply has done it: the process killed
// and started again at once (its lift began with the fault), and the
// dependency answering again now (the start's ready check passed, which
// can take longer than the fault's for). Its window lasts that for, or
// until the dependency was back if that is later: the after window and
// breaker_closes never count from a moment it was still down.
func (tl *timeline) restarted(rec *runrecord.FaultRecord, window time.Duration) {
	back := time.Since(tl.t0).Milliseconds()
	tl.mu.Lock()
	defer tl.mu.Unlock()
	lifted := rec.StartMS
	rec.LiftedMS, rec.BackMS = &lifted, &back
	rec.EndMS = max(back, rec.StartMS+window.Milliseconds())
}

func (tl *timeline) wait() { tl.wg.Wait() }

// records lists the faults that started, in scenario order; a fault still
// in place at the end (one meant to stay, or one that could not be
// lifted) is recorded as ending then.
func (tl *timeline) records(end time.Duration) []runrecord.FaultRecord {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	out := []runrecord.FaultRecord{}
	for _, f := range tl.faults {
		if r, ok := tl.recs[f.Name]; ok {
			c := *r
			if c.EndMS < 0 {
				c.EndMS = end.Milliseconds()
			}
			c.Hits = tl.inj.Hits(f.Name)
			c.Cache = tl.inj.Cache(f.Name)
			if err := tl.inj.HitsError(f.Name); err != nil {
				c.HitsError = err.Error()
			}
			out = append(out, c)
		}
	}
	return out
}

func (tl *timeline) spans(end time.Duration) judge.FaultTimes {
	ft := judge.FaultTimes{}
	for _, r := range tl.records(end) {
		if r.Error == "" { // in place from its start, lifted or not
			sp := judge.Span{From: time.Duration(r.StartMS) * time.Millisecond, To: time.Duration(r.EndMS) * time.Millisecond}
			sp.Lifted = sp.To
			if r.LiftedMS != nil {
				sp.Lifted = time.Duration(*r.LiftedMS) * time.Millisecond
			}
			ft[r.Name] = sp
		}
	}
	return ft
}
