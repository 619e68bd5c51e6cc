package faults

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gameday-dev/gameday/gameday/env"
	"github.com/gameday-dev/gameday/gameday/toxi"
	"github.com/gameday-dev/gameday/internal/durable"
	"github.com/gameday-dev/gameday/internal/filelock"
	"github.com/gameday-dev/gameday/internal/owner"
	"github.com/gameday-dev/gameday/internal/redact"
)

// Entry is one fault that outlives the runner: on a Toxiproxy it did not
// start, on a Compose project's container, or a process paused through a
// system file's handle.
type Entry struct {
	RunID string `json:"run_id"`
	// Pid, Started (the process's start time in clock ticks since boot)
	// and Boot (the kernel's boot id) identify the runner: a pid alone is
	// reused, by a later process or, in a container, by every runner (1).
	Pid     int    `json:"pid"`
	Started string `json:"started,omitempty"`
	Boot    string `json:"boot,omitempty"`
	// Where is the runner's host and pid namespace, as containers are
	// labelled (package owner): its pid is judged only there, and a
	// runner elsewhere sharing the journal by its Lease. "" in entries
	// written before it.
	Where     string `json:"where,omitempty"`
	Toxiproxy string `json:"toxiproxy"`
	Proxy     string `json:"proxy"`
	// Toxic is the toxic's name; "" with Disabled for a proxy taken down.
	Toxic    string `json:"toxic,omitempty"`
	Disabled bool   `json:"disabled,omitempty"`
	// Container, with Action (kill or pause), is a container of a Compose
	// project that a process fault stopped or froze: cleanup starts or
	// unpauses it. Toxiproxy and Proxy are empty then.
	Container string `json:"container,omitempty"`
	Action    string `json:"action,omitempty"`
	// Dependency, with Action "pause" and Paused, is a dependency of a
	// described system paused through its own process handle (systemd,
	// command, pid_file): cleanup resumes it as Paused says, on the host
	// that paused it. Toxiproxy, Proxy and Container are empty then.
	Dependency string      `json:"dependency,omitempty"`
	Paused     *env.Paused `json:"paused,omitempty"`
	// Redis, with MaxMemory and Policy, is the address of a dependency's
	// Redis whose memory a cache fault limited: cleanup puts back
	// maxmemory MaxMemory and maxmemory-policy Policy, with the password
	// in GAMEDAY_REDIS_PASSWORD (the journal keeps no secret).
	Redis     string `json:"redis,omitempty"`
	MaxMemory *int64 `json:"maxmemory,omitempty"`
	Policy    string `json:"policy,omitempty"`
	// Lease is the time (RFC 3339, UTC) until which the runner is known
	// to run: a live runner renews it every renewEvery while it has
	// entries in the journal. Past it and leaseMargin (for clocks that
	// differ between the hosts sharing a journal) the runner is judged
	// gone wherever it ran. "" in entries written before leases: only
	// the same host and pid namespace can judge those.
	Lease string `json:"lease,omitempty"`
	// SetAside says why cleanup could not undo the fault of a dead runner
	// (its Toxiproxy unreachable, its container gone), and since when.
	// Such an entry no longer stops anything: every cleanup tries it
	// again, reports it, and "gameday cleanup -drop" forgets it.
	SetAside string `json:"set_aside,omitempty"`
}

// String names the fault for messages.
func (e Entry) String() string {
	switch {
	case e.Redis != "":
		return "memory limit of " + e.Dependency + " (Redis at " + e.Redis + ")"
	case e.Paused != nil:
		return "pause of " + e.Dependency + " (" + e.Paused.String() + ")"
	case e.Container != "":
		return e.Action + " of container " + e.Container
	case e.Disabled:
		return "disabled proxy " + redact.URL(e.Toxiproxy) + "/" + e.Proxy
	}
	return "toxic " + e.Toxic + " on " + redact.URL(e.Toxiproxy) + "/" + e.Proxy
}

// The lease of a runner's entries: renewed every renewEvery to run
// leaseFor ahead, and judged run out leaseMargin after it ends, so that a
// runner whose clock is up to leaseMargin ahead of the judge's, or which
// could not renew for a while (a starved machine, a slow disk), is not
// judged gone. A runner killed elsewhere is judged gone at most
// leaseFor+leaseMargin (a minute) after its last renewal.
var (
	renewEvery  = 5 * time.Second
	leaseFor    = 30 * time.Second
	leaseMargin = 30 * time.Second
)

// newLease is a lease that runs leaseFor from now.
func newLease() string { return time.Now().Add(leaseFor).UTC().Format(time.RFC3339Nano) }

// Runner says who wrote e and how cleanup judges it, at now: for
// messages about entries left alone.
func (e Entry) Runner(now time.Time) string {
	o := e.owner()
	switch {
	case o.Here():
		state := "still running"
		if !o.Alive() {
			state = "gone"
		}
		return fmt.Sprintf("pid %d here, %s", e.Pid, state)
	case e.Lease == "":
		return fmt.Sprintf("pid %d on %s, written without a lease (an older gameday): only a cleanup there can judge it", e.Pid, o.Host())
	}
	until, err := time.Parse(time.RFC3339Nano, e.Lease)
	if err != nil {
		return fmt.Sprintf("pid %d on %s, with a lease that does not read (%q): only a cleanup there can judge it", e.Pid, o.Host(), e.Lease)
	}
	if now.After(until.Add(leaseMargin)) {
		return fmt.Sprintf("pid %d on %s, gone: its lease ran out at %s", e.Pid, o.Host(), e.Lease)
	}
	return fmt.Sprintf("pid %d on %s, alive: its lease runs until %s (judged gone %s after that, for clock skew)", e.Pid, o.Host(), e.Lease, leaseMargin)
}

// Journal is a small JSON file of the faults in place that outlive their
// runner (Entry). Every change is written atomically (temporary file, fsync,
// rename) under an exclusive lock (flock on the file's name with ".lock"
// added), so concurrent runners do not lose each other's entries. The
// journal exists only while it records a fault, and the lock file only
// while a runner holds it: a cleanup with nothing to clean leaves nothing.
type Journal struct {
	path string
	// Engine brings back the containers a killed runner's process faults
	// left stopped or frozen (Compose drills journal them); nil sets such
	// a fault aside, saying that a container engine is needed (the gameday
	// command gives Docker's).
	Engine env.Engine

	// mu orders Add against the heartbeat's decision to stop: beating
	// says a goroutine renews this process's leases.
	mu      sync.Mutex
	beating bool
	stop    chan struct{} // closed by StopRenewing
}

// DefaultJournalPath is $GAMEDAY_JOURNAL, else
// $XDG_STATE_HOME/gameday/journal.json, else ~/.local/state/gameday/journal.json.
func DefaultJournalPath() string {
	if p := os.Getenv("GAMEDAY_JOURNAL"); p != "" {
		return p
	}
	dir := os.Getenv("XDG_STATE_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			home = os.TempDir()
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "gameday", "journal.json")
}

// OpenJournal returns the journal at path. The file (and its directory) is
// created by the first Add; the file is removed when its last entry goes,
// the directory stays.
func OpenJournal(path string) *Journal { return &Journal{path: path} }

// Add records e for this process, with a lease that this process renews
// (every renewEvery, from a goroutine) while it has entries in the
// journal.
func (j *Journal) Add(e Entry) error {
	self := owner.Self()
	e.Pid, e.Started, e.Boot, e.Where = self.Pid, self.Started, self.Boot, self.Where
	e.Lease = newLease()
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.update(true, func(es []Entry) []Entry { return append(es, e) }); err != nil {
		return err
	}
	if !j.beating {
		j.beating, j.stop = true, make(chan struct{})
		go j.heartbeat(self, j.stop, renewEvery)
	}
	return nil
}

// heartbeat renews self's leases every renewEvery, and ends once the
// journal holds none of self's entries, or StopRenewing is called. A
// renewal that fails is tried again at the next beat: the lease has
// leaseFor to spare.
func (j *Journal) heartbeat(self owner.Owner, stop <-chan struct{}, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		j.mu.Lock()
		select {
		case <-stop: // StopRenewing ran while this beat waited
			j.mu.Unlock()
			return
		default:
		}
		n, err := j.renew(self)
		if err == nil && n == 0 {
			j.beating, j.stop = false, nil
			j.mu.Unlock()
			return
		}
		j.mu.Unlock()
	}
}

// StopRenewing ends the renewal of this process's leases, at once: its
// entries keep the leases they have, which run out as a dead runner's do
// (on this host the process is still judged by its pid). Once it
// returns, no renewal runs or will run. For a program (or a test) that is
// done with the journal while entries of its own remain in it; the next
// Add starts renewing again.
func (j *Journal) StopRenewing() {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.beating {
		close(j.stop)
		j.beating, j.stop = false, nil
	}
}

// renew moves the lease of self's entries to leaseFor from now, and
// counts them.
func (j *Journal) renew(self owner.Owner) (n int, err error) {
	lease := newLease()
	err = j.update(false, func(es []Entry) []Entry {
		for i := range es {
			if es[i].owner() == self {
				es[i].Lease = lease
				n++
			}
		}
		return es
	})
	return n, err
}

func (e Entry) owner() owner.Owner {
	return owner.Owner{Pid: e.Pid, Started: e.Started, Boot: e.Boot, Where: e.Where}
}

// Remove forgets e (matched on everything but the pid).
func (j *Journal) Remove(e Entry) error {
	return j.update(false, func(es []Entry) []Entry {
		out := es[:0]
		for _, x := range es {
			if !(x.RunID == e.RunID && x.Toxiproxy == e.Toxiproxy && x.Proxy == e.Proxy && x.Toxic == e.Toxic && x.Disabled == e.Disabled && x.Container == e.Container && x.Dependency == e.Dependency && x.Redis == e.Redis) {
				out = append(out, x)
			}
		}
		return out
	})
}

// Entries lists what the journal holds.
func (j *Journal) Entries() ([]Entry, error) {
	var out []Entry
	err := j.update(false, func(es []Entry) []Entry { out = append(out, es...); return es })
	return out, err
}

// Cleanup undoes the faults of runners that are gone and forgets them;
// it leaves the entries of live runners, and of runners it cannot judge
// (on another host or in another pid namespace, with no lease), alone. A
// fault it cannot undo (its Toxiproxy unreachable, its container removed,
// a process paused on another host) is set aside: kept with the reason,
// tried again at every cleanup, returned in setAside, and never an error,
// so that it does not stop unrelated drills. The error is the journal's
// own (unreadable, unwritable).
func (j *Journal) Cleanup(ctx context.Context) (removed, setAside []Entry, err error) {
	return j.cleanup(ctx, nil)
}

// cleanup is Cleanup of the entries only picks (nil: all).
func (j *Journal) cleanup(ctx context.Context, only func(Entry) bool) (removed, setAside []Entry, err error) {
	now := time.Now()
	stamp := now.UTC().Format(time.RFC3339)
	err = j.update(false, func(es []Entry) []Entry {
		keep := es[:0]
		down := map[string]error{} // a Toxiproxy that did not answer is not asked again
		for _, e := range es {
			if (only != nil && !only(e)) || !gone(e, now) {
				keep = append(keep, e)
				continue
			}
			uerr := down[e.Toxiproxy]
			if uerr == nil {
				uerr = undo(ctx, j.Engine, e)
				var apiErr *toxi.APIError
				if uerr != nil && e.Toxiproxy != "" && !errors.As(uerr, &apiErr) {
					down[e.Toxiproxy] = uerr
				}
			}
			if uerr == nil {
				removed = append(removed, e)
				continue
			}
			since := stamp
			if i := strings.LastIndex(e.SetAside, " (since "); i >= 0 {
				since = strings.TrimSuffix(e.SetAside[i+len(" (since "):], ")")
			}
			e.SetAside = fmt.Sprintf("%v (since %s)", uerr, since)
			setAside = append(setAside, e)
			keep = append(keep, e)
		}
		return keep
	})
	return removed, setAside, err
}

// Drop forgets set-aside entries without undoing them: those of run, or
// every one with run "all". The operator has dealt with the faults (or
// their Toxiproxy or container is gone for good). Entries not set aside
// are never dropped.
func (j *Journal) Drop(run string) ([]Entry, error) {
	var dropped []Entry
	err := j.update(false, func(es []Entry) []Entry {
		keep := es[:0]
		for _, e := range es {
			if e.SetAside != "" && (run == "all" || e.RunID == run) {
				dropped = append(dropped, e)
				continue
			}
			keep = append(keep, e)
		}
		return keep
	})
	return dropped, err
}

func undo(ctx context.Context, engine env.Engine, e Entry) error {
	if e.Redis != "" {
		return undoLimit(ctx, e)
	}
	if e.Paused != nil {
		ctx, cancel := context.WithTimeout(ctx, processTimeout)
		defer cancel()
		return e.Paused.Resume(ctx)
	}
	if e.Container != "" {
		if engine == nil {
			return env.ErrNoEngine
		}
		ctx, cancel := context.WithTimeout(ctx, processTimeout)
		defer cancel()
		c, err := engine.Container(ctx, e.Container)
		if err != nil {
			return err
		}
		defer c.Close()
		if e.Action == "pause" {
			return c.Resume()
		}
		return c.Start(ctx)
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	c := toxi.NewClient(e.Toxiproxy)
	var err error
	if e.Disabled {
		err = c.SetEnabled(ctx, e.Proxy, true)
	} else {
		err = c.RemoveToxic(ctx, e.Proxy, e.Toxic)
	}
	if errors.Is(err, toxi.ErrNotFound) {
		return nil // already gone
	}
	return err
}

// gone reports whether the runner that wrote e is judged gone at now:
// it ran here (same host and pid namespace) and its pid, started at the
// same time since the same boot, no longer runs; or it ran elsewhere (a
// pod, a container, another host sharing the journal) and its lease ran
// out more than leaseMargin ago. A runner elsewhere without a lease (an
// older gameday's entry) cannot be judged from here.
func gone(e Entry, now time.Time) bool {
	if o := e.owner(); o.Here() {
		return !o.Alive()
	}
	if e.Lease == "" {
		return false
	}
	until, err := time.Parse(time.RFC3339Nano, e.Lease)
	return err == nil && now.After(until.Add(leaseMargin))
}

// update applies f to the journal's entries under its lock and writes
// the result: a journal left with no entry is removed, so the file exists
// only while it records a fault. A journal that does not exist holds no
// entry; unless grow (f may add entries), f is then given none without
// the lock and nothing is created, so that a cleanup with nothing to clean
// leaves nothing behind.
//
// Looking for the file without the lock is safe: the file appears and
// goes by rename and unlink, each atomic, so an update that finds none is
// ordered before the write that creates it. Only f that adds entries (an
// Add, of a live runner) creates the journal.
func (j *Journal) update(grow bool, f func([]Entry) []Entry) error {
	if !grow {
		if _, err := os.Stat(j.path); errors.Is(err, fs.ErrNotExist) {
			f(nil)
			return nil
		}
	}
	if err := os.MkdirAll(filepath.Dir(j.path), 0o755); err != nil {
		return fmt.Errorf("create journal directory: %w", err)
	}
	unlock, err := filelock.Lock(j.path + ".lock")
	if err != nil {
		return fmt.Errorf("lock journal: %w", err)
	}
	defer unlock()

	var es []Entry
	data, err := os.ReadFile(j.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("read journal: %w", err)
	default:
		if err := json.Unmarshal(data, &es); err != nil {
			return fmt.Errorf("read journal %s: %w", j.path, err)
		}
	}
	es = f(es)
	if len(es) == 0 {
		if err := os.Remove(j.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove empty journal: %w", err)
		}
		return durable.SyncDir(filepath.Dir(j.path))
	}
	return writeAtomic(j.path, es)
}

func writeAtomic(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".journal-*")
	if err != nil {
		return fmt.Errorf("write journal: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("write journal: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("sync journal: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write journal: %w", err)
	}
	// A fault journaled must still be there after a power cut, or cleanup
	// would never find it.
	return durable.SyncDir(filepath.Dir(path))
}
