package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gameday-dev/gameday/gameday"
	"github.com/gameday-dev/gameday/gameday/explore"
	"github.com/gameday-dev/gameday/gameday/faults"
	"github.com/gameday-dev/gameday/gameday/runrecord"
	"github.com/gameday-dev/gameday/gameday/system"
	"github.com/gameday-dev/gameday/gameday/toxi"
	"github.com/gameday-dev/gameday/internal/redact"
	"github.com/gameday-dev/gameday/scenarios"
)

const exploreWhat = `
Searches the fault space of a described system for what breaks its books.
Each trial is a short drill of the system: BASE's load, stock and patience
(without BASE, 8 s of 20 arrivals a second, 100 units, 2 retries, and 4 s
of patience, or books.settle_within for a system whose purchase is polled),
with a fault schedule drawn from the seed: 1 to -max-faults
faults, each of a family turned on for that trial (a random half of
-families), on one of the system's dependencies, beginning in a phase of
the sale (before the peak, at the peak, as it sells out, while payments
settle), with a length and an intensity. A trial that breaks an invariant
of the books is replayed -replays times; if it fails in at least -needed of
them it is shrunk (fewer faults, shorter, softer, a lower rate, a shorter
load; each step kept only if it still fails in -needed of -replays) and
written to -out as a scenario that gameday run replays. The environment is
prepared once and driven for every trial. The same seed draws the same
schedules in the same order on any machine (-out/log.jsonl); the report
(-out/report.md and report.html) lists the findings, the trials and what
was tried where. Each trial done is journaled (-out/trials.jsonl): a
search stopped goes on where it stopped with the same command and -resume;
without it, a search refuses an -out that holds an earlier search's
journal (-fresh replaces it).

Exit 0 when nothing was found, 1 when something was, 2 when the search
could not be carried out, 3 when it was stopped before its budget was
spent with nothing found (inconclusive). Ctrl-C stops it between or inside a trial, with every fault
removed (docs/explore.md).`

// exploreCmd is "gameday explore [flags] [BASE.yaml]".
func exploreCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("explore", stderr)
	sysFile := fs.String("system", "", "the system file (gameday.yaml) to explore; default BASE's system")
	budget := fs.String("budget", "50", "how many trials (50) or how long (20m)")
	seed := fs.Uint64("seed", 1, "the seed of every draw")
	strategy := fs.String("strategy", explore.StrategyRandom, "how trials are drawn: guided (from the seed and what earlier trials showed: a corpus of schedules that showed new behaviour, mutated, and faults aimed at the kinds of request the system sends) or random (each drawn blind from the seed)")
	fams := fs.String("families", "", "the fault families to draw from, comma-separated (default all: "+fmt.Sprint(explore.FamilyNames())+")")
	maxFaults := fs.Int("max-faults", 3, "at most this many faults in a trial")
	replays := fs.Int("replays", 5, "replays of a finding, and of each step of its shrinking")
	needed := fs.Int("needed", 3, "a finding, and each step of its shrinking, must fail in at least this many of -replays")
	maxChecks := fs.Int("max-checks", 40, "at most this many schedules checked while shrinking one finding")
	confirm := fs.Int("confirm", 5, "runs of the scenario written for a finding, as written, to say how often it fails")
	resume := fs.Bool("resume", false, "go on with the search whose journal (-out/trials.jsonl) is there: the same seed, base and flags; the trials it did are not run again")
	fresh := fs.Bool("fresh", false, "start afresh where -out holds an earlier search's journal (-out/trials.jsonl), replacing it, its log and its report")
	out := fs.String("out", "explore", "the directory findings, the log and the report are written to")
	runsDir := fs.String("runs-dir", "runs", "directory that receives each trial's run directory")
	journal := fs.String("journal", faults.DefaultJournalPath(), "file recording, until they are removed, the faults on a Toxiproxy that outlives the runner")
	quiet := fs.Bool("quiet", false, "no progress lines on stderr")
	first := fs.String("first", "", "stop at the first trial that breaks the books (any) or one of these invariants (oversold,lost_units), with no finding made of it (not replayed, shrunk or written): for comparing strategies and seeds (docs/benchmarks.md)")
	describe(fs, "gameday explore [-system FILE] [-budget N|DURATION] [-seed S] [-families a,b] [BASE.yaml]", exploreWhat)
	rest, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 1 {
		return usagef("explore: at most one base scenario, got %d", len(rest))
	}
	if *strategy != explore.StrategyGuided && *strategy != explore.StrategyRandom {
		return usagef("explore: -strategy %q: guided or random", *strategy)
	}
	var stopAt []string
	if *first != "" && *first != "any" {
		for _, n := range strings.Split(*first, ",") {
			if n = strings.TrimSpace(n); !slices.Contains(scenarios.InvariantNames(), n) {
				return usagef("explore: -first %q: %q is no invariant (any, or of %s)", *first, n, strings.Join(scenarios.InvariantNames(), ", "))
			}
			stopAt = append(stopAt, strings.TrimSpace(n))
		}
	}
	o := explore.Options{Seed: *seed, Strategy: *strategy, StopAtFirst: *first != "", StopAt: stopAt, Replays: *replays, Needed: *needed, Confirm: *confirm, MaxChecks: *maxChecks, Out: *out}
	if n, err := strconv.Atoi(*budget); err == nil && n > 0 {
		o.Trials = n
	} else if d, err := time.ParseDuration(*budget); err == nil && d > 0 {
		o.Within = d
	} else {
		return usagef("explore: -budget %q: want a number of trials (50) or a duration (20m)", *budget)
	}
	if *replays < 1 || *needed < 1 || *needed > *replays {
		return usagef("explore: -needed %d of -replays %d: want 1 <= needed <= replays", *needed, *replays)
	}
	if *confirm < 1 {
		return usagef("explore: -confirm %d: want at least 1", *confirm)
	}
	if *resume && *fresh {
		return usagef("explore: -resume and -fresh: go on with the search there, or start afresh, not both")
	}
	families, err := explore.ParseFamilies(*fams)
	if err != nil {
		return usagef("explore: -families: %v", err)
	}
	var base *scenarios.Scenario
	if len(rest) == 1 {
		if base, err = scenarios.LoadFile(rest[0]); err != nil {
			return usageError{err}
		}
	}
	if *sysFile == "" && (base == nil || base.System == "") {
		return usagef("explore: which system? name its file (-system gameday.yaml), or a base scenario that names one (system:)")
	}
	if *sysFile != "" {
		if base, err = baseFor(*sysFile, base); err != nil {
			return usageError{err}
		}
	}
	sys, err := system.LoadFile(base.SystemPath(), nil)
	if err != nil {
		return usageError{err}
	}
	if len(rest) == 0 {
		// The default trial's patience, from the system: a purchase it
		// accepts and the shopper then polls waits as long as the books
		// may take to finish it.
		base.Load.Patience = scenarios.Duration(defaultPatience(sys))
	}
	for _, d := range slices.Sorted(maps.Keys(sys.Dependencies)) {
		o.Space.Targets = append(o.Space.Targets, d)
	}
	if len(o.Space.Targets) == 0 {
		return usagef("explore: %s names no dependency: there is nothing to put a fault on", sys.File)
	}
	families, cannot, on, err := drawable(sys, o.Space.Targets, families, *fams != "")
	if err != nil {
		return usageError{err}
	}
	if len(cannot) > 0 {
		fmt.Fprintf(stderr, "explore: %s: %s left out of the search\n", whyNot(sys, cannot), strings.Join(cannot, ", "))
	}
	families, dropped, err := servedFamilies(context.Background(), sys, families, *fams != "")
	if err != nil {
		return usageError{err}
	}
	if len(dropped) > 0 {
		fmt.Fprintf(stderr, "explore: the Toxiproxy at %s does not serve %s: left out of the search (gameday serve toxiproxy -request-aware serves them)\n", redact.URL(sys.Toxiproxy), strings.Join(dropped, ", "))
	}
	o.Base = base
	o.Space.Families, o.Space.Phases, o.Space.MaxFaults, o.Space.Load = families, explore.Phases(base), *maxFaults, base.TotalDuration()
	o.Space.On = on
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return usageError{fmt.Errorf("explore: %w", err)}
	}
	journalFile := filepath.Join(*out, "trials.jsonl")
	if !*resume && !*fresh {
		// An earlier search's trials are not thrown away unasked: it may
		// be one that was stopped, which -resume would finish.
		if data, err := os.ReadFile(journalFile); err == nil && len(bytes.TrimSpace(data)) > 0 {
			return usagef("explore: %s holds the %d trials of an earlier search: go on with it (-resume), or start afresh and replace it (-fresh)", journalFile, bytes.Count(data, []byte("\n")))
		}
	}
	if *resume {
		f, err := os.Open(journalFile)
		if err != nil {
			return usagef("explore: -resume: %v", err)
		}
		o.Done, err = explore.ReadJournal(journalFile, f)
		f.Close()
		if err != nil {
			return usageError{fmt.Errorf("explore: -resume: %w", err)}
		}
	}
	// The log is written again whole (the trials resumed drawn first);
	// the journal is rewritten with the trials read from it, so that a
	// line cut short is gone.
	logFile, err := os.Create(filepath.Join(*out, "log.jsonl"))
	if err != nil {
		return usageError{fmt.Errorf("explore: %w", err)}
	}
	defer logFile.Close()
	o.Log = logFile
	// Rewritten whole and atomically: a kill here leaves the journal as
	// it was, never half of it.
	var done bytes.Buffer
	for _, tr := range o.Done {
		line, _ := json.Marshal(tr)
		done.Write(append(line, '\n'))
	}
	if err := runrecord.WriteFileAtomic(journalFile, done.Bytes()); err != nil {
		return usageError{fmt.Errorf("explore: %w", err)}
	}
	trials, err := os.OpenFile(journalFile, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return usageError{fmt.Errorf("explore: %w", err)}
	}
	defer trials.Close()
	o.Journal = trials
	if !*quiet {
		o.Progress = stderr
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Prepared for every family the search may draw: a request-aware one
	// needs a relay behind the proxy of each dependency it may be drawn
	// on, which only preparing creates. Where the Toxiproxy is gameday's
	// own (the system file names none), every dependency's proxy gets
	// one, so that each trial sees the kinds of request every dependency
	// receives (docs/explore.md#request-kinds).
	prep := base.Clone()
	prep.Faults = nil
	// Only on gameday's own Toxiproxy: on one the user runs, a proxy
	// made without a relay keeps none, and only the dependencies a
	// request-aware family is drawn on need one.
	relayAll := sys.Toxiproxy == ""
	for _, t := range o.Space.Targets {
		if !sys.Dependencies[t].Proxied() {
			continue // a process alone: no proxy
		}
		need := relayAll
		for _, f := range families {
			if fam, _ := explore.FamilyByName(f); fam.RequestAware && slices.Contains(o.Space.TargetsOf(f), t) {
				need = true
				break
			}
		}
		if need {
			prep.Faults = append(prep.Faults, scenarios.Fault{Name: "relay-" + t, Target: t, Toxic: &scenarios.Toxic{Type: "lost_reply"}})
		}
	}
	jr := faults.OpenJournal(*journal)
	defer jr.StopRenewing()
	p, err := gameday.Prepare(ctx, prep, gameday.Options{System: sys, RunsDir: *runsDir, Journal: jr})
	if err != nil {
		return usageError{fmt.Errorf("explore: prepare %s: %w", sys.Name, err)}
	}
	defer p.Close()
	run := func(ctx context.Context, sc *scenarios.Scenario) (explore.Outcome, error) {
		rec, dir, err := p.Drive(ctx, sc)
		if err != nil {
			return explore.Outcome{}, err
		}
		out := explore.Outcome{Verdict: rec.Verdict, Dir: dir, Reason: rec.Reason, Idle: idleFaults(sc, rec), Observed: explore.Observe(rec, sc, o.Space.Phases)}
		for _, c := range rec.InvariantChecks {
			// Dropped arrivals are the generator's, not the system's.
			if !c.Held && !c.NotChecked && c.Unjudged == "" && c.Invariant != "dropped" {
				out.Broken = append(out.Broken, c.Invariant)
				out.Witnesses = append(out.Witnesses, c.Examples...)
			}
		}
		if len(out.Broken) == 0 && out.Verdict == gameday.VerdictFail {
			out.Verdict = gameday.VerdictPass // no promise but the books'
		}
		return out, nil
	}
	res, err := explore.Search(ctx, o, run)
	if err != nil {
		return usageError{fmt.Errorf("explore: %w", err)}
	}
	reportFile := filepath.Join(*out, "report.md")
	for file, write := range map[string]func(io.Writer, explore.Space) error{reportFile: res.Markdown, filepath.Join(*out, "report.html"): res.HTML} {
		var b bytes.Buffer
		if err := write(&b, o.Space); err != nil {
			return usageError{fmt.Errorf("explore: %w", err)}
		}
		if err := runrecord.WriteFileAtomic(file, b.Bytes()); err != nil {
			return usageError{fmt.Errorf("explore: %w", err)}
		}
	}
	fmt.Fprintf(stdout, "explore: %d trials, %d findings; report %s (and .html)\n", len(res.Trials), len(res.Findings), reportFile)
	if res.Stopped != "" {
		fmt.Fprintf(stdout, "explore: stopped (%s): go on with the same command and -resume, which begins with trial %d\n", res.Stopped, res.ResumesAt())
	}
	if *first != "" && res.FirstBroken >= 0 {
		tr := res.Trials[res.FirstBroken]
		fmt.Fprintf(stdout, "explore: trial %d broke %s (the first; %d trials drawn %s): no finding made of it (-first)\n", res.FirstBroken, strings.Join(tr.Broken, ", "), res.FirstBroken+1, res.Strategy)
		return exitError{exitFailed, "explore found what breaks the books"}
	}
	for _, fd := range res.Findings {
		switch {
		case fd.Unfinished:
			fmt.Fprintf(stdout, "  trial %d: breaks %v (%s); the search stopped before its finding was made: no scenario written, -resume runs the trial again\n", fd.Trial, fd.Broken, explore.WitnessText(fd.Witnesses))
			continue
		case fd.Rare:
			fmt.Fprintf(stdout, "  trial %d: breaks %v (%s); failed again in %d of %d replays: too rare to shrink, no scenario written\n", fd.Trial, fd.Broken, explore.WitnessText(fd.Witnesses), fd.Before[0], fd.Before[1])
			continue
		}
		fmt.Fprintf(stdout, "  %s: breaks %v; as written it failed in %d of %d runs; gameday run %s\n", fd.File, fd.Reproduces, fd.After[0], fd.After[1], fd.File)
	}
	switch {
	case len(res.Findings) > 0:
		return exitError{exitFailed, "explore found what breaks the books"}
	case res.Stopped != "":
		// Not "nothing found": the search did not do what it was asked.
		return exitError{exitInconclusive, "explore stopped before its budget was spent"}
	}
	return nil
}

// idleFaults are the faults of trial sc that did nothing in the run rec
// records, by name: a request-aware one that acted on no request or whose
// hits could not be read (runrecord.FaultRecord.Idle), or one never put in
// place. explore's coverage does not count them.
func idleFaults(sc *scenarios.Scenario, rec *runrecord.Record) []string {
	var idle []string
	for _, f := range sc.Faults {
		i := slices.IndexFunc(rec.Faults, func(r runrecord.FaultRecord) bool { return r.Name == f.Name })
		if i < 0 || rec.Faults[i].Error != "" || rec.Faults[i].Idle() != "" {
			idle = append(idle, f.Name)
		}
	}
	return idle
}

// defaultPatience is how long a shopper of the default trial waits for
// sys to answer: 4 s, a buyer's patience with a checkout that answers at
// once; for a system that accepts a purchase and has the shopper poll for
// it (a step answers retry_later: queued, pending), as long as its books
// may take to finish one (books.settle_within, 30 s unless the file says
// otherwise), so that a purchase still in the queue is not given up on
// before the system could have done it.
func defaultPatience(sys *system.System) time.Duration {
	for _, st := range sys.Purchase.Steps {
		for _, r := range st.Answers {
			if r.Outcome == "retry_later" {
				return max(defaultShopperPatience, sys.Books.SettleWithin.D())
			}
		}
	}
	return defaultShopperPatience
}

// defaultShopperPatience is the default trial's patience for a system
// that answers a purchase at once.
const defaultShopperPatience = 4 * time.Second

// baseFor is the base scenario of a search of the system in sysFile:
// base with its system replaced, or without one the default trial.
func baseFor(sysFile string, base *scenarios.Scenario) (*scenarios.Scenario, error) {
	abs, err := filepath.Abs(sysFile)
	if err != nil {
		return nil, err
	}
	if base != nil {
		c := base.Clone()
		c.System = abs
		return c, nil
	}
	src := fmt.Sprintf(`name: explore
system: %q
matrix: {dependency: none, failure: explore}
stock: 100
load:
  stages: [{duration: 1s, target: 20}, {duration: 7s, target: 20}]
  patience: 4s
  max_retries: 2
`, abs)
	return scenarios.Parse(filepath.Join(filepath.Dir(abs), "explore-base.yaml"), []byte(src))
}

// drawable are the families of a search whose faults can act on the
// system, and on which dependencies each may be drawn (on): a process
// family (kill, pause, restart) only where a dependency's process handle
// can carry it out; an HTTP family only where the dependency speaks plain
// HTTP or its file does not say (dependencies.NAME.protocol); a cache
// family only where it speaks Redis, and one that clears keys never where
// the books are read from (dependencies.NAME.books); a network family (a
// toxic, down, a request-aware one) never on a process alone (proxy:
// none). A family given with -families (given) that can act on no dependency is refused,
// naming it; of the default, every family, those are left out (dropped)
// and the search goes on without them. A system that declares neither
// handles nor protocols so draws exactly what it would have drawn had
// process faults and protocols not been known.
func drawable(sys *system.System, targets, families []string, given bool) (kept, dropped []string, on map[string][]string, err error) {
	on = map[string][]string{}
	proxied := slices.DeleteFunc(slices.Clone(targets), func(t string) bool {
		return sys.Dependencies[t] != nil && !sys.Dependencies[t].Proxied()
	})
	for _, f := range families {
		fam, _ := explore.FamilyByName(f)
		if !fam.Process && !fam.HTTP() && fam.Cache == nil {
			switch {
			case len(proxied) == len(targets):
				// Every dependency: drawn on the targets as listed.
			case len(proxied) == 0:
				dropped = append(dropped, f)
				continue
			default:
				// Not on a process alone (proxy: none), which carries
				// process faults only.
				on[f] = proxied
			}
			kept = append(kept, f)
			continue
		}
		var can []string
		for _, t := range targets {
			d := sys.Dependencies[t]
			switch {
			case d == nil, fam.Cache != nil && !d.Proxied(), fam.HTTP() && !d.Proxied():
			case fam.Process && d.Process.Can(f), fam.HTTP() && d.SpeaksHTTP():
				can = append(can, t)
			case fam.Cache != nil && d.Protocol == "redis" && !(fam.Clears() && sys.HoldsBooks(t)):
				// A search never clears the books it judges by.
				can = append(can, t)
			}
		}
		if len(can) == 0 {
			dropped = append(dropped, f)
			continue
		}
		on[f] = can
		kept = append(kept, f)
	}
	switch {
	case len(dropped) > 0 && given:
		return nil, nil, nil, fmt.Errorf("explore: -families: %s", whyNot(sys, dropped))
	case len(kept) == 0:
		return nil, nil, nil, fmt.Errorf("explore: no family searched can act on %s: %s", sys.Name, whyNot(sys, dropped))
	}
	return kept, dropped, on, nil
}

// whyNot says why the families dropped act on no dependency of sys.
func whyNot(sys *system.System, dropped []string) string {
	var proc, reads, caches, network []string
	for _, f := range dropped {
		switch fam, _ := explore.FamilyByName(f); {
		case fam.Process:
			proc = append(proc, f)
		case fam.Cache != nil:
			caches = append(caches, f)
		case fam.HTTP():
			reads = append(reads, f)
		default:
			network = append(network, f)
		}
	}
	var why []string
	if len(network) > 0 {
		why = append(why, fmt.Sprintf("every dependency of %s is a process alone (proxy: none in %s), which %s cannot act on", sys.Name, sys.File, strings.Join(network, ", ")))
	}
	if len(proc) > 0 {
		why = append(why, fmt.Sprintf("no dependency of %s has a process handle that can %s (dependencies.NAME.process in %s)", sys.Name, strings.Join(proc, " or "), sys.File))
	}
	if len(reads) > 0 {
		why = append(why, fmt.Sprintf("no dependency of %s speaks plain HTTP, which %s read (dependencies.NAME.protocol in %s)", sys.Name, strings.Join(reads, ", "), sys.File))
	}
	if len(caches) > 0 {
		why = append(why, fmt.Sprintf("no dependency of %s speaks Redis (protocol: redis in %s) that %s may act on: keys are never cleared where the books are read", sys.Name, sys.File, strings.Join(caches, ", ")))
	}
	return strings.Join(why, "; ")
}

// servedFamilies are the families of a search that the system's Toxiproxy
// can serve. Where the system file names none, gameday starts its own,
// which serves every family. Where it names one, the request-aware
// families are those it says it serves: a stock Toxiproxy (no
// capabilities route) serves none. A family given with -families (given)
// that it cannot serve is refused, naming it; of the default, every
// family, those are left out (dropped) and the search goes on without
// them.
func servedFamilies(ctx context.Context, sys *system.System, families []string, given bool) (kept, dropped []string, err error) {
	if sys.Toxiproxy == "" || !slices.ContainsFunc(families, func(f string) bool {
		fam, _ := explore.FamilyByName(f)
		return fam.RequestAware
	}) {
		return families, nil, nil
	}
	c := toxi.NewClient(sys.Toxiproxy)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	caps, _, err := c.Served(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("explore: toxiproxy at %s: %w", redact.URL(c.Addr()), err)
	}
	for _, f := range families {
		if fam, _ := explore.FamilyByName(f); fam.RequestAware && !slices.Contains(caps.Toxics, f) {
			dropped = append(dropped, f)
			continue
		}
		kept = append(kept, f)
	}
	switch {
	case len(dropped) > 0 && given:
		return nil, nil, fmt.Errorf("explore: -families: the Toxiproxy at %s does not serve %s (a stock Toxiproxy's toxics are TCP-level): run gameday serve toxiproxy -request-aware in its place, or leave them out", redact.URL(c.Addr()), strings.Join(dropped, ", "))
	case len(kept) == 0:
		return nil, nil, fmt.Errorf("explore: the Toxiproxy at %s serves none of the families searched", redact.URL(c.Addr()))
	}
	return kept, dropped, nil
}
