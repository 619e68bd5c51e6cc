package explore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gameday-dev/gameday/gameday/runrecord"
	"github.com/gameday-dev/gameday/scenarios"
)

// Outcome is what one trial found.
type Outcome struct {
	Verdict runrecord.Verdict
	// Broken are the invariants the books broke (their names), Witnesses
	// the checkout ids of the first cases, for a failed trial.
	Broken    []string
	Witnesses []string
	// Idle are the names of the scenario's faults that did nothing: a
	// request-aware fault that acted on no request, or a fault never put
	// in place. The coverage does not count them.
	Idle []string
	// Dir is the trial's run directory; Reason its verdict's reason.
	Dir, Reason string
	// Observed is what the trial showed beyond its verdict: the kinds of
	// request each dependency received, what each fault acted on, its
	// behaviour. A guided search learns from it.
	Observed Observed
}

// Runner carries out one trial: a drill of sc.
type Runner func(ctx context.Context, sc *scenarios.Scenario) (Outcome, error)

// Options are a search's settings.
type Options struct {
	// Base is the scenario whose system, load and stock every trial
	// shares; Space what the trials draw from.
	Base  *scenarios.Scenario
	Space Space
	Seed  uint64
	// Strategy is how trials are drawn: StrategyRandom (Draw) or
	// StrategyGuided (Guide); "" is random.
	Strategy string
	// StopAtFirst ends the search at the first trial that breaks an
	// invariant (one of StopAt, when given), with no finding made of it:
	// what a comparison of strategies counts.
	StopAtFirst bool
	StopAt      []string
	// Trials bounds how many trials are drawn; Within how long the search
	// may take (0: no bound). One of the two must be set.
	Trials int
	Within time.Duration
	// Replays is n, Needed k: a finding, and each step of its shrinking,
	// must fail in at least k of n replays.
	Replays, Needed int
	// Confirm is how many times the scenario written for a finding is
	// run, as written, to say how often it fails (0: Replays).
	Confirm int
	// MaxChecks bounds the shrinking of one finding, in schedules checked.
	MaxChecks int
	// Out is where findings are written (explore/); Log receives one line
	// of JSON per trial drawn, byte for byte the same for a seed.
	Out string
	Log io.Writer
	// Journal receives one line of JSON per trial done (TrialRecord):
	// what a search resumed from it needs. Done are the trials of an
	// earlier search with the same seed, space and base, read from its
	// journal: they are not run again, and the search goes on after them.
	Journal io.Writer
	Done    []TrialRecord
	// Progress receives a line per trial; nil means none.
	Progress io.Writer
}

// Finding is one failure found, replayed and shrunk.
type Finding struct {
	Trial int `json:"trial"`
	// Broken are the invariants it broke, Witnesses checkout ids of the
	// trial that found it.
	Broken    []string `json:"broken"`
	Witnesses []string `json:"witnesses"`
	// Found is the schedule drawn, Shrunk the smallest that still fails.
	Found  Schedule `json:"found"`
	Shrunk Schedule `json:"shrunk"`
	Steps  []Step   `json:"steps"`
	// Before is how often the found schedule failed on replay, After how
	// often the scenario written for the shrunk one did: failures of
	// runs.
	Before [2]int `json:"before"`
	After  [2]int `json:"after"`
	// File is the scenario written for it; Reproduces the invariants it
	// broke as written, in the runs that confirmed it (a step is kept on
	// any one of Broken, so it can be fewer).
	File       string   `json:"file"`
	Reproduces []string `json:"reproduces,omitempty"`
	// Rare is a trial that broke the books and then failed in fewer than
	// Needed of its replays: not shrunk and no scenario written, but a
	// finding all the same (books proven wrong once are a bug of the
	// system, however rarely a schedule meets it). Shrunk is the schedule
	// drawn.
	Rare bool `json:"rare,omitempty"`
	// New are the invariants of Broken that no earlier finding's
	// scenario reproduces: what it is replayed, shrunk and confirmed on
	// (a run counts when it breaks one of them), and what its file is
	// named after. Empty in a finding journaled before New was kept.
	New []string `json:"new,omitempty"`
	// Unfinished is a finding the search was stopped while making
	// (replaying, shrinking or confirming it): its trial broke the books,
	// but nothing is shrunk and no scenario written. It is never
	// journaled: a search resumed runs its trial again.
	Unfinished bool `json:"-"`
}

// notCarriedOut is a run of a replay, a shrinking step or a confirmation
// whose drill ended in error: gameday or the environment failed, so the
// rate it would count in says nothing of the system.
type notCarriedOut struct{ out Outcome }

func (e notCarriedOut) Error() string {
	return fmt.Sprintf("%s (%s)", e.out.Reason, e.out.Dir)
}

// TrialRecord is one trial done, as a search's journal keeps it: its
// schedule (as the log has it), what it found, and the finding made of it.
type TrialRecord struct {
	Schedule json.RawMessage   `json:"schedule"`
	Verdict  runrecord.Verdict `json:"verdict"`
	Broken   []string          `json:"broken,omitempty"`
	Idle     []string          `json:"idle,omitempty"`
	Finding  *Finding          `json:"finding,omitempty"`
	// Observed is what the trial showed: a guided search resumed learns
	// it again, and so draws what the search run through drew. Strategy
	// is the search's ("": random, as journals before it was kept).
	Observed *Observed `json:"observed,omitempty"`
	Strategy string    `json:"strategy,omitempty"`
}

func orRandom(strategy string) string {
	if strategy == "" {
		return StrategyRandom
	}
	return strategy
}

// ReadJournal reads the trials a search's journal (trials.jsonl) records,
// in order. A last line cut short (the search killed while writing it) is
// left out: that trial is run again. name is the journal's file, for
// errors.
func ReadJournal(name string, r io.Reader) ([]TrialRecord, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var out []TrialRecord
	lines := strings.SplitAfter(string(data), "\n")
	for i, line := range lines {
		if line == "" {
			continue
		}
		if !strings.HasSuffix(line, "\n") && i == len(lines)-1 {
			break // cut short
		}
		var tr TrialRecord
		if err := json.Unmarshal([]byte(line), &tr); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, i+1, err)
		}
		if len(tr.Schedule) == 0 || tr.Verdict == "" {
			return nil, fmt.Errorf("%s:%d: a trial needs its schedule and verdict", name, i+1)
		}
		out = append(out, tr)
	}
	return out, nil
}

// Tried is one trial as the report lists it; Idle are the names of its
// faults that did nothing (Outcome.Idle).
type Tried struct {
	Schedule Schedule
	Verdict  runrecord.Verdict
	Broken   []string
	Idle     []string
	// Observed is what it showed; New the features of behaviour no trial
	// before it showed (a guided search puts its schedule in the corpus).
	Observed Observed
	New      []string
}

// Result is a search's trials, findings and coverage.
type Result struct {
	Seed     uint64
	Trials   []Tried
	Findings []Finding
	// Coverage counts the faults that acted by dependency, family and
	// phase: a fault that did nothing (Tried.Idle) is not counted.
	Coverage map[CoverKey]int
	// Stopped says why the search ended before its budget ("" when it
	// did not).
	Stopped string
	// Strategy is how the trials were drawn; Corpus how many schedules a
	// guided search's corpus held at its end.
	Strategy string
	Corpus   int
	// FirstBroken is the first trial that broke an invariant, -1 when
	// none did.
	FirstBroken int
}

// CoverKey is one cell of the coverage table.
type CoverKey struct{ Target, Family, Phase string }

// Search draws trials until the budget is spent, runs each, and turns
// each failure of the books into a finding: replayed (Replays times, to
// say how often it fails), shrunk, and written as a scenario under Out. A
// failure whose invariants an earlier finding's scenario reproduces is
// counted, not shrunk again; one that breaks some of those and others is
// shrunk toward the others. An inconclusive or erroring trial is not a
// finding.
func Search(ctx context.Context, o Options, run Runner) (*Result, error) {
	if o.Trials <= 0 && o.Within <= 0 {
		return nil, fmt.Errorf("explore: give a budget: a number of trials or a duration")
	}
	if err := o.Space.check(); err != nil {
		return nil, fmt.Errorf("explore: %w", err)
	}
	strategy := o.Strategy
	switch strategy {
	case "":
		strategy = StrategyRandom
	case StrategyRandom, StrategyGuided:
	default:
		return nil, fmt.Errorf("explore: no strategy %q: random or guided", o.Strategy)
	}
	res := &Result{Seed: o.Seed, Coverage: map[CoverKey]int{}, Strategy: strategy, FirstBroken: -1}
	var guide *Guide
	draw := func(i int) Schedule { return o.Space.Draw(o.Seed, i) }
	if strategy == StrategyGuided {
		guide = NewGuide()
		draw = func(i int) Schedule { return guide.Next(o.Space, o.Seed, i) }
	}
	// learn takes in what trial s showed: what a guided search's next
	// draws follow.
	learn := func(s Schedule, ob Observed) []string {
		if guide == nil {
			return nil
		}
		fresh := guide.Learn(s, ob)
		res.Corpus = guide.Corpus()
		return fresh
	}
	start := time.Now()
	// A trial's scenario is parsed as if it were a file in Out (its system
	// named from there); only findings are written.
	trialScenario := func(s Schedule, name string) (*scenarios.Scenario, error) {
		_, sc, err := s.Scenario(o.Base, filepath.Join(o.Out, name+".yaml"), name, "")
		return sc, err
	}
	// fails runs s n times and counts the runs that break an invariant of
	// want (any, when want is empty).
	fails := func(ctx context.Context, s Schedule, n, need int, want []string) (int, error) {
		sc, err := trialScenario(s, fmt.Sprintf("explore-replay-%d", s.Trial))
		if err != nil {
			return 0, err
		}
		got, _, err := failures(ctx, run, sc, n, need, want)
		return got, err
	}
	// The trials of the search resumed: each must be the trial this
	// search draws in its place, or the journal is another search's.
	for i, tr := range o.Done {
		if tr.Strategy != strategy && !(tr.Strategy == "" && strategy == StrategyRandom) {
			return nil, fmt.Errorf("explore: trial %d of the journal was drawn by a %s search, and this one is %s (start afresh, or resume with -strategy %s)", i, orRandom(tr.Strategy), strategy, orRandom(tr.Strategy))
		}
		s := draw(i)
		if enc := s.Encode(); !bytes.Equal(enc, tr.Schedule) {
			return nil, fmt.Errorf("explore: trial %d of the journal is not what seed %d draws %s from this space and base (another search's journal? start afresh): journal %s, drawn %s", i, o.Seed, strategy, tr.Schedule, enc)
		}
		if err := o.logDrawn(s); err != nil {
			return res, err
		}
		var ob Observed
		if tr.Observed != nil {
			ob = *tr.Observed
		}
		res.tried(Tried{Schedule: s, Verdict: tr.Verdict, Broken: tr.Broken, Idle: tr.Idle, Observed: ob, New: learn(s, ob)})
		if breaksAny(tr.Broken, o.StopAt) && tr.Verdict == runrecord.VerdictFail && res.FirstBroken < 0 {
			res.FirstBroken = i
			if o.StopAtFirst {
				return res, nil
			}
		}
		if tr.Finding != nil {
			res.Findings = append(res.Findings, *tr.Finding)
		}
	}
	if len(o.Done) > 0 {
		progress(o.Progress, "explore: resumed after trial %d (%d findings)", len(o.Done)-1, len(res.Findings))
	}
	for i := len(o.Done); ; i++ {
		switch {
		case ctx.Err() != nil:
			res.Stopped = "interrupted"
			return res, nil
		case o.Trials > 0 && i >= o.Trials:
			return res, nil
		case o.Within > 0 && time.Since(start) >= o.Within:
			return res, nil
		}
		s := draw(i)
		if err := o.logDrawn(s); err != nil {
			return res, err
		}
		sc, err := trialScenario(s, fmt.Sprintf("explore-trial-%d", i))
		if err != nil {
			return res, err
		}
		out, err := run(ctx, sc)
		if err != nil {
			return res, err
		}
		if ctx.Err() != nil {
			// Cut short: not a trial done, and not journaled; a
			// resumed search runs it again.
			res.Stopped = "interrupted"
			return res, nil
		}
		if out.Verdict == runrecord.VerdictError {
			// gameday or the environment failed, not the system (a
			// fault that could not be injected or lifted, a store or a
			// Toxiproxy that does not answer): trials drawn on after it
			// would say nothing, and a search that "found nothing" must
			// have run its trials. Not journaled: -resume runs it again
			// once the cause is mended.
			res.Stopped = fmt.Sprintf("trial %d could not be carried out: %s", i, notCarriedOut{out})
			progress(o.Progress, "explore: %s", res.Stopped)
			return res, nil
		}
		res.tried(Tried{Schedule: s, Verdict: out.Verdict, Broken: out.Broken, Idle: out.Idle, Observed: out.Observed, New: learn(s, out.Observed)})
		progress(o.Progress, "explore: trial %d: %s %s", i, out.Verdict, strings.Join(out.Broken, ", "))
		if out.Verdict == runrecord.VerdictFail && breaksAny(out.Broken, o.StopAt) && res.FirstBroken < 0 {
			res.FirstBroken = i
			if o.StopAtFirst {
				return res, nil
			}
		}
		if o.StopAtFirst {
			// Counting trials to a bug: nothing else is made a finding.
			continue
		}
		f, err := o.finding(ctx, s.withHits(out.Observed.Hit), out, res.Findings, run, fails)
		var nc notCarriedOut
		if errors.As(err, &nc) {
			// The same for a run of its replays, its shrinking or its
			// confirmation: a rate with such a run in it is not the
			// system's. The trial is not journaled either.
			res.untried()
			res.Stopped = fmt.Sprintf("a replay of trial %d could not be carried out: %s", i, nc)
			progress(o.Progress, "explore: %s", res.Stopped)
			return res, nil
		}
		if err != nil {
			return res, err
		}
		if f != nil && f.Unfinished {
			// Stopped while its finding was made: listed, since the
			// trial broke the books and the report must not say
			// "nothing found", but not journaled: -resume runs the trial
			// again and makes its finding whole.
			res.Findings = append(res.Findings, *f)
			res.Stopped = fmt.Sprintf("interrupted while making the finding of trial %d", i)
			return res, nil
		}
		// A finding made whole is journaled even if the search was
		// stopped meanwhile (its scenario is in Out); the next turn of
		// the loop sees the interruption.
		tr := TrialRecord{Schedule: s.Encode(), Verdict: out.Verdict, Broken: out.Broken, Idle: out.Idle, Finding: f, Observed: &out.Observed, Strategy: strategy}
		if f != nil {
			res.Findings = append(res.Findings, *f)
		}
		if o.Journal != nil {
			line, err := json.Marshal(tr)
			if err == nil {
				_, err = o.Journal.Write(append(line, '\n'))
			}
			if err != nil {
				return res, fmt.Errorf("explore: write the journal: %w", err)
			}
		}
	}
}

// strategy is o's strategy's name ("" is random).
func (o Options) strategy() string {
	if o.Strategy == "" {
		return StrategyRandom
	}
	return o.Strategy
}

// withHits is s with each fault's hit (the kinds of request it acted on)
// from hit, by fault name: what shrinking may narrow it to.
func (s Schedule) withHits(hit map[string][]string) Schedule {
	c := s.clone()
	for i := range c.Faults {
		c.Faults[i].hit = hit[c.faultName(i)]
	}
	return c
}

// logDrawn writes schedule s to the search's log.
func (o Options) logDrawn(s Schedule) error {
	if o.Log == nil {
		return nil
	}
	if _, err := o.Log.Write(append(s.Encode(), '\n')); err != nil {
		return fmt.Errorf("explore: write the log: %w", err)
	}
	return nil
}

// tried adds a trial done to the result, and the faults of it that acted
// to the coverage: one that did nothing (a request-aware fault that met
// no request) was not tried, whatever the trial's verdict.
func (r *Result) tried(t Tried) {
	for _, k := range t.acted() {
		r.Coverage[k]++
	}
	r.Trials = append(r.Trials, t)
}

// untried takes the last trial added by tried out of the result and its
// coverage again: a trial that is not counted after all.
func (r *Result) untried() {
	t := r.Trials[len(r.Trials)-1]
	r.Trials = r.Trials[:len(r.Trials)-1]
	for _, k := range t.acted() {
		if r.Coverage[k]--; r.Coverage[k] <= 0 {
			delete(r.Coverage, k)
		}
	}
}

// acted are the coverage cells of trial t's faults that acted, one per
// fault.
func (t Tried) acted() []CoverKey {
	var out []CoverKey
	for i, f := range t.Schedule.Faults {
		if !slices.Contains(t.Idle, t.Schedule.faultName(i)) {
			out = append(out, CoverKey{f.Target, f.Family, f.Phase})
		}
	}
	return out
}

// ResumesAt is the trial a search resumed from this one's journal begins
// with: the first not journaled, which is the trial of an unfinished
// finding when the search was stopped while making it.
func (r *Result) ResumesAt() int {
	if n := len(r.Findings); n > 0 && r.Findings[n-1].Unfinished {
		return r.Findings[n-1].Trial
	}
	return len(r.Trials)
}

// finding makes a finding of trial s, whose run found out, unless it is
// none: a trial that broke no invariant, or only ones an earlier
// finding's scenario reproduces (counted, not shrunk again). What it
// broke that none reproduces is its aim (New): a replay, a shrinking step
// and a confirmation count a run that breaks one of those, so that a bug
// already found (one the system has with no fault at all) neither pulls
// the shrinking away from the new one's fault nor makes a duplicate. It
// is replayed; one that fails too rarely on replay to shrink is a rare
// finding, with no scenario; else it is shrunk, written as a scenario
// under Out, and that scenario run Confirm times as written. A search
// stopped meanwhile makes it an unfinished finding.
func (o Options) finding(ctx context.Context, s Schedule, out Outcome, earlier []Finding, run Runner, fails func(context.Context, Schedule, int, int, []string) (int, error)) (*Finding, error) {
	if out.Verdict != runrecord.VerdictFail || len(out.Broken) == 0 {
		return nil, nil
	}
	// Counted, not shrunk again, when every invariant it broke is one an
	// earlier finding's scenario reproduces.
	var covered []string
	for _, f := range earlier {
		if !f.Rare && !f.Unfinished {
			covered = append(covered, f.reproduces()...)
		}
	}
	aim := slices.DeleteFunc(slices.Clone(out.Broken), func(b string) bool { return slices.Contains(covered, b) })
	if len(aim) == 0 {
		return nil, nil
	}
	i := s.Trial
	f := Finding{Trial: i, Broken: out.Broken, New: aim, Witnesses: out.Witnesses, Found: s}
	// Stopped before it is whole: what the trial broke, and nothing of
	// the replays, the steps or a scenario.
	unfinished := func(err error) (*Finding, error) {
		if err != nil {
			return nil, err
		}
		return &Finding{Trial: i, Broken: out.Broken, New: aim, Witnesses: out.Witnesses, Found: s, Shrunk: s, Unfinished: true}, nil
	}
	n, err := fails(ctx, s, o.Replays, 0, aim)
	if err != nil || ctx.Err() != nil {
		return unfinished(err)
	}
	f.Before = [2]int{n, o.Replays}
	progress(o.Progress, "explore: trial %d failed again in %d of %d replays", i, n, o.Replays)
	if n < o.Needed {
		// Too rare to shrink by replays, but the books were wrong.
		f.Rare, f.Shrunk = true, s
		return &f, nil
	}
	// A step of the shrinking is decided as soon as its replays can
	// decide it: Needed failures, or too few replays left to reach them.
	check := func(ctx context.Context, c Schedule) (bool, error) {
		got, err := fails(ctx, c, o.Replays, o.Needed, aim)
		return got >= o.Needed, err
	}
	if f.Shrunk, f.Steps, err = Shrink(ctx, s, check, o.MaxChecks); err != nil || ctx.Err() != nil {
		return unfinished(err)
	}
	name := findingName(i, aim)
	f.File = filepath.Join(o.Out, name+".yaml")
	// Until it is confirmed the scenario is written beside where it goes,
	// under a name no glob of findings matches, and taken away if the
	// search stops first: -out holds only findings the report lists.
	pending := filepath.Join(o.Out, "."+name+".unconfirmed.yaml")
	defer os.Remove(pending)
	write := func(desc string) (*scenarios.Scenario, error) {
		data, sc, err := f.Shrunk.Scenario(o.Base, f.File, name, desc)
		if err == nil {
			err = runrecord.WriteFileAtomic(pending, data)
		}
		return sc, err
	}
	confirm := o.Confirm
	if confirm <= 0 {
		confirm = o.Replays
	}
	// A step is kept on Needed failures of Replays, so the smallest kept
	// can sit at the edge of what reproduces (kept on a lucky 2 of 3). As
	// written, a finding must fail as often as a step had to: in at least
	// want of its confirm runs. When it does not, the schedules kept
	// before it are confirmed in turn — the two before it, then the one
	// drawn — and the first that does is written (the one drawn, if none
	// does, with the rate it has).
	want := (confirm*o.Needed + o.Replays - 1) / o.Replays
	chain := []Schedule{s}
	for _, st := range f.Steps {
		if st.Kept {
			chain = append(chain, st.schedule)
		}
	}
	var tries []int
	for _, k := range []int{len(chain) - 1, len(chain) - 2, len(chain) - 3, 0} {
		if k >= 0 && !slices.Contains(tries, k) {
			tries = append(tries, k)
		}
	}
	var found string
	for n, k := range tries {
		f.Shrunk = chain[k]
		found = fmt.Sprintf("Found by gameday explore (search seed %d, %s, trial %d; the seed below is the drill's, which the trial ran with): breaks %s%s. Shrunk from %d faults to %d",
			o.Seed, o.strategy(), i, strings.Join(out.Broken, ", "), aimText(out.Broken, aim), len(s.Faults), len(f.Shrunk.Faults))
		if _, err := write(found + ".\nReplay: gameday run " + f.File); err != nil {
			return nil, err
		}
		// The scenario as written, read back and run: what a user who
		// replays it gets.
		sc, err := scenarios.LoadFile(pending)
		if err != nil {
			return nil, err
		}
		got, seen, err := failures(ctx, run, sc, confirm, 0, aim)
		if err != nil || ctx.Err() != nil {
			return unfinished(err)
		}
		f.After, f.Reproduces = [2]int{got, confirm}, seen
		if got >= want || n == len(tries)-1 {
			break
		}
		back := fmt.Sprintf("as written it failed in %d of %d runs, under %d: back to kept step %d of %d", got, confirm, want, tries[n+1], len(chain)-1)
		if tries[n+1] == 0 {
			back = fmt.Sprintf("as written it failed in %d of %d runs, under %d: back to the schedule drawn", got, confirm, want)
		}
		f.Steps = append(f.Steps, Step{Tried: back, Kept: true})
		progress(o.Progress, "explore: finding %s: %s", f.File, back)
	}
	if _, err := write(fmt.Sprintf("%s; as written it failed in %d of %d runs, breaking %s (%d of %d replays before shrinking).\nReplay: gameday run %s",
		found, f.After[0], f.After[1], orNone(f.Reproduces), f.Before[0], f.Before[1], f.File)); err != nil {
		return nil, err
	}
	if err := os.Rename(pending, f.File); err != nil {
		return nil, err
	}
	progress(o.Progress, "explore: finding %s: %d faults, fails in %d of %d runs as written", f.File, len(f.Shrunk.Faults), f.After[0], f.After[1])
	return &f, nil
}

// failures runs sc n times and counts the runs that break an invariant of
// want (any, when want is empty), and says which invariants those runs
// broke (sorted). With need above 0 it stops as soon as need runs failed,
// or the runs left cannot make need.
func failures(ctx context.Context, run Runner, sc *scenarios.Scenario, n, need int, want []string) (int, []string, error) {
	got := 0
	var seen []string
	for i := range n {
		if need > 0 && (got >= need || got+n-i < need) {
			break
		}
		out, err := run(ctx, sc)
		if err != nil {
			return got, seen, err
		}
		if out.Verdict == runrecord.VerdictError {
			return got, seen, notCarriedOut{out}
		}
		if out.Verdict == runrecord.VerdictFail && breaksAny(out.Broken, want) {
			got++
			for _, b := range out.Broken {
				if !slices.Contains(seen, b) {
					seen = append(seen, b)
				}
			}
		}
	}
	slices.Sort(seen)
	return got, seen, nil
}

// reproduces is what finding f's scenario breaks as written: Reproduces
// (none when it failed in none of its runs), or, for a finding journaled
// before Reproduces was kept, Broken.
func (f Finding) reproduces() []string {
	if len(f.Reproduces) > 0 || f.After[0] == 0 {
		return f.Reproduces
	}
	return f.Broken
}

// aimText says which invariants a finding is shrunk toward (aim), when
// its trial also broke some an earlier finding reproduces; "" when not.
func aimText(broken, aim []string) string {
	if len(aim) == len(broken) {
		return ""
	}
	return fmt.Sprintf(" (shrunk toward %s; an earlier finding reproduces the others)", strings.Join(aim, ", "))
}

// findingName names the finding of trial i: its first invariant, and how
// many more it broke, within a scenario name's 64 characters.
func findingName(i int, broken []string) string {
	name := fmt.Sprintf("explore-%d-%s", i, strings.ReplaceAll(broken[0], "_", "-"))
	if len(broken) > 1 {
		name += fmt.Sprintf("-and-%d-more", len(broken)-1)
	}
	return name
}

func breaksAny(broken, want []string) bool {
	if len(want) == 0 {
		return len(broken) > 0
	}
	return slices.ContainsFunc(broken, func(b string) bool { return slices.Contains(want, b) })
}

func progress(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format+"\n", args...)
	}
}
