// Package faults injects and removes a drill's faults: Toxiproxy toxics, a
// proxy disabled (the dependency down), a process killed, paused or
// restarted, and a Redis dependency's data flushed, expired or limited in
// memory. Every fault is removed when the run ends, whatever the reason;
// faults on a Toxiproxy that outlives the runner are written to a journal
// first, so a runner killed outright leaves a record that the next start
// uses to remove them.
package faults

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/gameday-dev/gameday/gameday/env"
	"github.com/gameday-dev/gameday/gameday/runrecord"
	"github.com/gameday-dev/gameday/gameday/toxi"
	"github.com/gameday-dev/gameday/scenarios"
)

// Fault is one fault, ready to inject.
type Fault struct {
	Name   string
	Target string // payment, inventory, sessions
	// Exactly one of Toxic, Down, Process and Cache.
	Toxic   *toxi.Toxic // attributes in Toxiproxy's units
	Down    bool
	Process string // kill, pause, restart
	Cache   *scenarios.Cache
}

// callTimeout bounds every Toxiproxy call: removing a toxic under heavy
// traffic has been reported to hang Toxiproxy's API. processTimeout bounds a
// process action, which may start a container and wait for its health check
// (seconds on a small or busy machine).
const (
	callTimeout    = 5 * time.Second
	processTimeout = time.Minute
	// cacheTimeout bounds a cache fault's round: a scan of up to
	// maxScanKeys keys.
	cacheTimeout = 30 * time.Second
)

// timeoutFor is how long one action on f may take.
func timeoutFor(f Fault) time.Duration {
	switch {
	case f.Process != "":
		return processTimeout
	case f.Cache != nil:
		return cacheTimeout
	}
	return callTimeout
}

// Injector applies faults to an environment and remembers what is active.
type Injector struct {
	env     env.Environment
	journal *Journal // nil: nothing outlives the runner
	// containers journals process faults on containers (nil: journal's):
	// a system file's own container outlives the runner even when the
	// Toxiproxy is the runner's.
	containers *Journal
	runID      string

	mu      sync.Mutex
	active  map[string]Fault // to remove: applied, or maybe applied
	inPlace map[string]bool  // applied for sure
	hits    map[string]*runrecord.RequestHits
	hitsErr map[string]error
	caches  map[string]*cacheRun
}

// NewInjector returns an injector. journal may be nil for an environment
// whose Toxiproxy dies with the runner.
func NewInjector(e env.Environment, journal *Journal, runID string) *Injector {
	return &Injector{env: e, journal: journal, runID: runID, active: map[string]Fault{}, inPlace: map[string]bool{}, hits: map[string]*runrecord.RequestHits{}, hitsErr: map[string]error{}, caches: map[string]*cacheRun{}}
}

// JournalContainers journals the process faults on containers in j even
// though the environment's Toxiproxy dies with the runner (NewInjector
// was given no journal): a system file's own containers outlive it.
func (in *Injector) JournalContainers(j *Journal) { in.containers = j }

// containerJournal is where process faults on containers are journaled;
// nil: nowhere.
func (in *Injector) containerJournal() *Journal {
	if in.containers != nil {
		return in.containers
	}
	return in.journal
}

// ToxicName is the name a fault's toxic has on the proxy: prefixed with
// the run, so that cleanup removes this run's toxics and nobody else's.
func (in *Injector) ToxicName(f Fault) string { return "gameday-" + in.runID + "-" + f.Name }

// Apply injects f. The fault counts as active from before the first call:
// a call that fails (or times out) may still have taken effect, so on error
// Apply tries to undo it at once, and if that fails too the fault stays
// active for RemoveAll to try again.
func (in *Injector) Apply(ctx context.Context, f Fault) error {
	in.mu.Lock()
	in.active[f.Name] = f
	in.mu.Unlock()
	actx, cancel := context.WithTimeout(ctx, timeoutFor(f))
	defer cancel()
	var err error
	switch {
	case f.Toxic != nil || f.Down:
		err = in.applyProxy(actx, f)
	case f.Process != "":
		err = in.applyProcess(actx, f)
	case f.Cache != nil:
		err = in.applyCache(actx, f)
	default:
		err = errors.New("fault has no kind")
	}
	if err != nil {
		if rerr := in.Remove(context.Background(), f.Name); rerr != nil {
			err = errors.Join(err, rerr)
		}
		return fmt.Errorf("inject fault %s: %w", f.Name, err)
	}
	if f.Process == "restart" {
		// Killed and running again: nothing to undo, and nothing for the
		// journal to hold (its entry would otherwise outlive the run).
		if p, ok := in.env.Process(f.Target); ok {
			if e, ok := in.containerEntry(f, p); ok {
				if err := in.containerJournal().Remove(e); err != nil {
					return fmt.Errorf("inject fault %s: %w", f.Name, err)
				}
			}
		}
		in.forget(f.Name)
		return nil
	}
	in.mu.Lock()
	in.inPlace[f.Name] = true
	in.mu.Unlock()
	return nil
}

func (in *Injector) forget(name string) {
	in.mu.Lock()
	delete(in.active, name)
	delete(in.inPlace, name)
	in.mu.Unlock()
}

func (in *Injector) applyProxy(ctx context.Context, f Fault) error {
	proxy, ok := in.env.ProxyName(f.Target)
	if !ok {
		return fmt.Errorf("no proxy in front of %s", f.Target)
	}
	entry := Entry{RunID: in.runID, Toxiproxy: in.env.Toxiproxy().Addr(), Proxy: proxy}
	if f.Down {
		entry.Disabled = true
	} else {
		entry.Toxic = in.ToxicName(f)
	}
	// Journal first: if the runner dies between the two steps, cleanup
	// finds an entry for a fault that may exist, and removing a fault that
	// does not exist is harmless.
	if in.journal != nil {
		if err := in.journal.Add(entry); err != nil {
			return err
		}
	}
	if f.Down {
		return in.env.Toxiproxy().SetEnabled(ctx, proxy, false)
	}
	t := *f.Toxic
	t.Name = entry.Toxic
	_, err := in.env.Toxiproxy().AddToxic(ctx, proxy, t)
	return err
}

func (in *Injector) applyProcess(ctx context.Context, f Fault) error {
	p, ok := in.env.Process(f.Target)
	if !ok {
		return fmt.Errorf("%s: %w", f.Target, env.ErrNoProcess)
	}
	// A container that outlives the runner (a Compose project's) is
	// journaled first, as a toxic is: a runner killed while it is stopped
	// or frozen leaves an entry that cleanup undoes.
	if e, ok := in.containerEntry(f, p); ok {
		if err := in.containerJournal().Add(e); err != nil {
			return err
		}
	}
	switch f.Process {
	case "kill":
		return p.Kill()
	case "pause":
		return p.Pause()
	case "restart":
		if err := p.Kill(); err != nil {
			return err
		}
		return p.Start(ctx)
	}
	return fmt.Errorf("unknown process action %q", f.Process)
}

// containerEntry is the journal entry of a process fault on a container,
// when the injector keeps a journal (the environment outlives the runner).
func (in *Injector) containerEntry(f Fault, p env.Process) (Entry, bool) {
	c, ok := p.(interface{ ContainerID() string })
	if !ok || c.ContainerID() == "" || in.containerJournal() == nil {
		return Entry{}, false
	}
	action := "kill"
	if f.Process == "pause" {
		action = "pause"
	}
	return Entry{RunID: in.runID, Container: c.ContainerID(), Action: action}, true
}

// Remove ends f: removes its toxic, enables its proxy, starts a killed
// process again or resumes a paused one. Removing a fault that is not
// active does nothing.
func (in *Injector) Remove(ctx context.Context, name string) error {
	in.mu.Lock()
	f, ok := in.active[name]
	in.mu.Unlock()
	if !ok {
		return nil
	}
	if proxy, ok := in.env.ProxyName(f.Target); ok && f.Toxic != nil {
		in.readHits(ctx, proxy, f)
	}
	ctx, cancel := context.WithTimeout(ctx, timeoutFor(f))
	defer cancel()
	var err error
	switch {
	case f.Toxic != nil || f.Down:
		proxy, ok := in.env.ProxyName(f.Target)
		if !ok {
			in.forget(name) // there is no proxy it could be on
			return nil
		}
		if f.Down {
			err = in.env.Toxiproxy().SetEnabled(ctx, proxy, true)
		} else {
			err = in.env.Toxiproxy().RemoveToxic(ctx, proxy, in.ToxicName(f))
			if errors.Is(err, toxi.ErrNotFound) {
				err = nil
			}
		}
		if err == nil && in.journal != nil {
			err = in.journal.Remove(Entry{RunID: in.runID, Toxiproxy: in.env.Toxiproxy().Addr(), Proxy: proxy, Toxic: toxicOf(in, f), Disabled: f.Down})
		}
	case f.Process == "kill" || f.Process == "restart":
		// A restart only stays active when its start failed.
		p, _ := in.env.Process(f.Target)
		err = p.Start(ctx)
		if e, ok := in.containerEntry(f, p); ok && err == nil {
			err = in.containerJournal().Remove(e)
		}
	case f.Process == "pause":
		p, _ := in.env.Process(f.Target)
		err = p.Resume()
		if e, ok := in.containerEntry(f, p); ok && err == nil {
			err = in.containerJournal().Remove(e)
		}
	case f.Cache != nil:
		err = in.removeCache(ctx, f)
	}
	if err != nil {
		return fmt.Errorf("remove fault %s: %w", f.Name, err)
	}
	in.forget(name)
	return nil
}

// readHits keeps what a request-aware toxic did, read back from the
// Toxiproxy before the toxic goes, within a bound of its own (the
// removal's is the removal's). A read that fails leaves the hits unknown,
// with why (HitsError), and never stops the removal.
func (in *Injector) readHits(ctx context.Context, proxy string, f Fault) {
	if !scenarios.RequestAware(f.Toxic.Type) {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, hitsTimeout)
	defer cancel()
	h, err := in.hitsOf(ctx, proxy, f)
	in.mu.Lock()
	defer in.mu.Unlock()
	if err != nil {
		// A removal tried again reads again: what an earlier read found
		// stands.
		if in.hits[f.Name] == nil {
			in.hitsErr[f.Name] = fmt.Errorf("read what %s did from the Toxiproxy at %s: %w", f.Name, in.env.Toxiproxy().Addr(), err)
		}
		return
	}
	in.hits[f.Name] = h
	delete(in.hitsErr, f.Name)
}

// hitsOf reads the hits of f's toxic on proxy.
func (in *Injector) hitsOf(ctx context.Context, proxy string, f Fault) (*runrecord.RequestHits, error) {
	ts, err := in.env.Toxiproxy().Toxics(ctx, proxy)
	if err != nil {
		return nil, err
	}
	for _, t := range ts {
		if t.Name != in.ToxicName(f) {
			continue
		}
		raw, ok := t.Attributes["hits"]
		if !ok {
			return nil, fmt.Errorf("toxic %s gives no hits (a Toxiproxy that does not serve gameday's toxics?)", t.Name)
		}
		b, err := json.Marshal(raw)
		var h runrecord.RequestHits
		if err == nil {
			err = json.Unmarshal(b, &h)
		}
		if err != nil {
			return nil, fmt.Errorf("toxic %s: its hits: %w", t.Name, err)
		}
		return &h, nil
	}
	return nil, fmt.Errorf("no toxic %s on proxy %s", in.ToxicName(f), proxy)
}

// hitsTimeout bounds the read of a request-aware toxic's hits.
const hitsTimeout = 2 * time.Second

// Hits is what the request-aware toxic of fault name did, as read when it
// was removed; nil for any other fault, or when it could not be read
// (HitsError says why).
func (in *Injector) Hits(name string) *runrecord.RequestHits {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.hits[name]
}

// HitsError is why what the request-aware toxic of fault name did could
// not be read when it was removed; nil when it was, or for any other fault.
func (in *Injector) HitsError(name string) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.hitsErr[name]
}

func toxicOf(in *Injector, f Fault) string {
	if f.Down {
		return ""
	}
	return in.ToxicName(f)
}

// removeTries bounds RemoveAll's rounds over the faults still in place,
// and removeBackoff is the wait before the second (doubled before each
// next): a Toxiproxy API that answered 500 or timed out once may answer
// the next call.
const removeTries = 3

var removeBackoff = 500 * time.Millisecond

// RemoveAll removes every active fault, trying each even when one fails,
// on a fresh context: it runs when the run's own context is already done.
// Faults it could not remove are tried again, up to removeTries rounds in
// all; what still fails stays active (and journaled, where the Toxiproxy
// outlives the runner, for the next run's cleanup), and the error says so.
func (in *Injector) RemoveAll() error {
	var errs []error
	for try := range removeTries {
		if try > 0 {
			time.Sleep(removeBackoff << (try - 1))
		}
		in.mu.Lock()
		names := make([]string, 0, len(in.active))
		for n := range in.active {
			names = append(names, n)
		}
		in.mu.Unlock()
		sort.Strings(names)
		errs = errs[:0]
		for _, n := range names {
			if err := in.Remove(context.Background(), n); err != nil {
				errs = append(errs, err)
			}
		}
		if len(errs) == 0 {
			return nil
		}
	}
	left := "it is still in place"
	if in.journal != nil {
		left += ", and journaled: the next gameday run, or gameday cleanup, removes it once this runner is gone"
	}
	return fmt.Errorf("%w (tried %d times; %s)", errors.Join(errs...), removeTries, left)
}

// Active lists the names of the faults known to be in place.
func (in *Injector) Active() []string {
	in.mu.Lock()
	defer in.mu.Unlock()
	out := make([]string, 0, len(in.inPlace))
	for n := range in.inPlace {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
