package explore

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/runrecord"
	"github.com/gameday-dev/gameday/scenarios"
)

var update = flag.Bool("update", false, "rewrite testdata/draws.jsonl")

// base is a scenario of a system of two dependencies, its file beside a
// system file the test writes (explore reads no system: the runner here
// is a model).
func base(t *testing.T) *scenarios.Scenario {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "shop.yaml"), []byte("name: shop\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := `name: base
system: shop.yaml
matrix: {dependency: none, failure: explore}
stock: 120
load:
  stages: [{duration: 2s, target: 20}, {duration: 6s, target: 20}]
  patience: 4s
  max_retries: 2
`
	sc, err := scenarios.Parse(filepath.Join(dir, "base.yaml"), []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// space is what a search of a system of two dependencies without process
// handles draws from: every family but the process ones (the command
// leaves them out for such a system).
func space(b *scenarios.Scenario) Space {
	return Space{Targets: []string{"postgres", "redis"}, Families: withoutProcess(FamilyNames()), Phases: Phases(b), MaxFaults: 3, Load: b.TotalDuration()}
}

func withoutProcess(names []string) []string {
	return slices.DeleteFunc(slices.Clone(names), func(n string) bool {
		f, _ := FamilyByName(n)
		return f.Process || f.Cache != nil
	})
}

// model is a system, as a function of a trial's faults: it breaks its
// books (units_created) when bug says so. It stands for the drill: the
// claims here are about the search's own logic.
func model(bug func(fs []scenarios.Fault) bool) Runner {
	return func(_ context.Context, sc *scenarios.Scenario) (Outcome, error) {
		if bug(sc.Faults) {
			return Outcome{Verdict: runrecord.VerdictFail, Broken: []string{"units_created"}, Witnesses: []string{"s1-7"}}, nil
		}
		return Outcome{Verdict: runrecord.VerdictPass}, nil
	}
}

// lostInsert is a compensating shop's bug: a reply lost on the database
// while the sale sells gives a unit back for an order that stands.
func lostInsert(fs []scenarios.Fault) bool {
	return slices.ContainsFunc(fs, func(f scenarios.Fault) bool {
		return f.Target == "postgres" && f.Toxic != nil && f.Toxic.Type == "lost_reply"
	})
}

func search(t *testing.T, b *scenarios.Scenario, seed uint64, trials int, run Runner) (*Result, []byte) {
	t.Helper()
	var log bytes.Buffer
	o := Options{Base: b, Space: space(b), Seed: seed, Trials: trials, Replays: 3, Needed: 2, MaxChecks: 40, Out: t.TempDir(), Log: &log}
	res, err := Search(context.Background(), o, run)
	if err != nil {
		t.Fatal(err)
	}
	return res, log.Bytes()
}

// The same seed draws the same schedules in the same order: the log is
// byte for byte the same; another seed draws others.
func TestDrawIsSeeded(t *testing.T) {
	b := base(t)
	never := model(func([]scenarios.Fault) bool { return false })
	_, a := search(t, b, 7, 30, never)
	_, again := search(t, b, 7, 30, never)
	_, other := search(t, b, 8, 30, never)
	if !bytes.Equal(a, again) || bytes.Equal(a, other) || bytes.Count(a, []byte("\n")) != 30 {
		t.Fatalf("seed 7 twice equal %v, seed 8 differs %v, %d lines", bytes.Equal(a, again), !bytes.Equal(a, other), bytes.Count(a, []byte("\n")))
	}
	// Every fault begins and ends in the load, in its phase.
	sp := space(b)
	for i := range 200 {
		for _, f := range sp.Draw(7, i).Faults {
			ph := sp.Phases[slices.IndexFunc(sp.Phases, func(p Phase) bool { return p.Name == f.Phase })]
			if f.At < ph.From-quantum || f.At > ph.To+quantum || f.At+f.For > sp.Load || f.For <= 0 {
				t.Fatalf("trial %d: fault %+v outside its phase %+v or the load %s", i, f, ph, sp.Load)
			}
		}
	}
}

// A bug reachable through one fault is found, shrunk to that fault alone,
// softened as far as it still fails, and written as a scenario that
// parses and holds that one fault.
func TestSearchFindsAndShrinks(t *testing.T) {
	b := base(t)
	res, _ := search(t, b, 1, 60, model(lostInsert))
	if len(res.Findings) != 1 {
		t.Fatalf("%d findings, want 1 (trials %d)", len(res.Findings), len(res.Trials))
	}
	f := res.Findings[0]
	if len(f.Shrunk.Faults) != 1 || f.Shrunk.Faults[0].Family != "lost_reply" || f.Shrunk.Faults[0].Target != "postgres" {
		t.Fatalf("shrunk to %+v, want the one lost_reply on postgres", f.Shrunk.Faults)
	}
	if g := f.Shrunk.Faults[0]; g.For > f.Found.Faults[slices.IndexFunc(f.Found.Faults, func(x Fault) bool { return x.Family == "lost_reply" && x.Target == "postgres" })].For || g.Intensity >= 0.25 || f.Shrunk.Rate != 0.25 {
		t.Errorf("not shrunk as far as it fails: %+v, rate %g", g, f.Shrunk.Rate)
	}
	if f.After != [2]int{3, 3} || f.Before != [2]int{3, 3} {
		t.Errorf("replays before %v, after %v", f.Before, f.After)
	}
	sc, err := scenarios.LoadFile(f.File)
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.Faults) != 1 || sc.Faults[0].Toxic.Type != "lost_reply" || !strings.Contains(sc.Description, "gameday run "+f.File) {
		t.Errorf("the scenario written: faults %+v, description %q", sc.Faults, sc.Description)
	}
	if !lostInsert(sc.Faults) {
		t.Error("the scenario written does not reproduce the bug")
	}
	var md, page bytes.Buffer
	if err := res.Markdown(&md, space(b)); err != nil || !strings.Contains(md.String(), "| postgres | lost_reply |") {
		t.Errorf("report: %v\n%s", err, md.String())
	}
	// The same, as a page: the finding, and the cells never tried marked.
	if err := res.HTML(&page, space(b)); err != nil || !strings.Contains(page.String(), "<td>postgres</td><td>lost_reply</td>") ||
		!strings.Contains(page.String(), `<td class="never">`) || !strings.Contains(page.String(), "gameday run "+f.File) {
		t.Errorf("HTML report: %v\n%s", err, page.String())
	}
}

// A bug that needs two faults at once keeps both, and only both.
func TestShrinkKeepsWhatTheBugNeeds(t *testing.T) {
	b := base(t)
	both := func(fs []scenarios.Fault) bool {
		has := func(target string) bool {
			return slices.ContainsFunc(fs, func(f scenarios.Fault) bool { return f.Target == target })
		}
		return has("postgres") && has("redis")
	}
	res, _ := search(t, b, 3, 80, model(both))
	if len(res.Findings) != 1 || len(res.Findings[0].Shrunk.Faults) != 2 {
		t.Fatalf("findings %+v", res.Findings)
	}
}

// A system without the bug: nothing found, every trial listed, the
// coverage table filled in.
func TestSearchWithoutABugFindsNothing(t *testing.T) {
	b := base(t)
	res, _ := search(t, b, 1, 40, model(func([]scenarios.Fault) bool { return false }))
	if len(res.Findings) != 0 || len(res.Trials) != 40 || len(res.Coverage) == 0 {
		t.Fatalf("findings %d, trials %d, coverage %d", len(res.Findings), len(res.Trials), len(res.Coverage))
	}
}

// A failure too rare to replay (here once only) is not shrunk and has no
// scenario, but it is a finding: the books were wrong, and the report
// says so rather than "no trial broke the books". Before, the search
// ended with 0 findings (exit 0). And a search interrupted stops between
// trials.
func TestRareFailureAndInterrupt(t *testing.T) {
	b := base(t)
	calls := 0
	once := func(_ context.Context, sc *scenarios.Scenario) (Outcome, error) {
		calls++
		if calls == 1 {
			return Outcome{Verdict: runrecord.VerdictFail, Broken: []string{"double_charges"}, Witnesses: []string{"s1-3"}}, nil
		}
		return Outcome{Verdict: runrecord.VerdictPass}, nil
	}
	res, _ := search(t, b, 1, 5, once)
	if len(res.Findings) != 1 || len(res.Trials) != 5 {
		t.Fatalf("findings %d, trials %d", len(res.Findings), len(res.Trials))
	}
	if f := res.Findings[0]; !f.Rare || f.File != "" || f.Before != [2]int{0, 3} || f.Trial != 0 || len(f.Steps) != 0 {
		t.Fatalf("rare finding %+v", f)
	}
	var md, page bytes.Buffer
	if err := res.Markdown(&md, space(b)); err != nil {
		t.Fatal(err)
	}
	if err := res.HTML(&page, space(b)); err != nil {
		t.Fatal(err)
	}
	for _, r := range []string{md.String(), page.String()} {
		if strings.Contains(r, "None: no trial broke the books") || !strings.Contains(r, "trial 0: seen, too rare to shrink") || !strings.Contains(r, "s1-3") {
			t.Errorf("report of a rare finding:\n%s", r)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	stop := func(_ context.Context, sc *scenarios.Scenario) (Outcome, error) {
		cancel()
		return Outcome{Verdict: runrecord.VerdictPass}, nil
	}
	o := Options{Base: b, Space: space(b), Seed: 1, Within: time.Hour, Replays: 3, Needed: 2, MaxChecks: 10, Out: t.TempDir()}
	res, err := Search(ctx, o, stop)
	// The trial cut short is not done: a resumed search runs it again.
	if err != nil || res.Stopped != "interrupted" || len(res.Trials) != 0 {
		t.Fatalf("interrupted: %v, %+v", err, res)
	}
}

// A search stopped and resumed from its journal is the search run
// through: the same log, byte for byte, the same trials and findings; the
// trials done are not run again. A journal of another search is refused,
// and a last line cut short is run again.
func TestResumeFromJournal(t *testing.T) {
	b := base(t)
	out := t.TempDir()
	calls := 0
	counted := func(ctx context.Context, sc *scenarios.Scenario) (Outcome, error) {
		calls++
		return model(lostInsert)(ctx, sc)
	}
	opts := func(trials int, log, journal *bytes.Buffer) Options {
		return Options{Base: b, Space: space(b), Seed: 1, Trials: trials, Replays: 3, Needed: 2, MaxChecks: 40, Out: out, Log: log, Journal: journal}
	}
	var whole, wholeJournal bytes.Buffer
	all, err := Search(context.Background(), opts(30, &whole, &wholeJournal), counted)
	if err != nil || len(all.Findings) == 0 {
		t.Fatalf("%v, %d findings", err, len(all.Findings))
	}
	wholeCalls := calls
	var firstLog, journal bytes.Buffer
	if _, err := Search(context.Background(), opts(12, &firstLog, &journal), counted); err != nil {
		t.Fatal(err)
	}
	// Killed while writing the next line.
	journal.WriteString(`{"schedule":{"trial":12`)
	done, err := ReadJournal("trials.jsonl", &journal)
	if err != nil || len(done) != 12 {
		t.Fatalf("%v, %d trials read", err, len(done))
	}
	var log bytes.Buffer
	o := opts(30, &log, &bytes.Buffer{})
	o.Done = done
	calls = 0
	res, err := Search(context.Background(), o, counted)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(log.Bytes(), whole.Bytes()) {
		t.Errorf("the resumed search's log differs from the whole search's:\n%s\n%s", log.Bytes(), whole.Bytes())
	}
	if len(res.Trials) != 30 || len(res.Findings) != len(all.Findings) || res.Findings[0].File != all.Findings[0].File || res.Findings[0].After != all.Findings[0].After {
		t.Errorf("resumed: %d trials, findings %+v; whole: findings %+v", len(res.Trials), res.Findings, all.Findings)
	}
	if calls == 0 || calls >= wholeCalls {
		t.Errorf("%d runs in the resumed search, %d in the whole one: the trials done were run again", calls, wholeCalls)
	}
	if again, _ := ReadJournal("j", bytes.NewReader(wholeJournal.Bytes())); len(again) != 30 {
		t.Errorf("the whole search journaled %d trials", len(again))
	}
	// Another seed's journal.
	o = opts(30, &bytes.Buffer{}, nil)
	o.Seed, o.Done = 2, done
	if _, err := Search(context.Background(), o, counted); err == nil || !strings.Contains(err.Error(), "trial 0 of the journal") {
		t.Errorf("another seed's journal: %v", err)
	}
	if _, err := ReadJournal("trials.jsonl", strings.NewReader("{\"verdict\":\"PASS\"}\n")); err == nil || !strings.Contains(err.Error(), "trials.jsonl:1") {
		t.Errorf("a line without its schedule: %v", err)
	}
}

// A finding's name is a scenario's: within 64 characters, whatever it
// broke.
func TestFindingNameIsAScenarioName(t *testing.T) {
	all := scenarios.InvariantNames()
	slices.SortFunc(all, func(a, b string) int { return len(b) - len(a) })
	name := findingName(99999, all)
	if len(name) > 64 || !strings.HasPrefix(name, "explore-99999-") || !strings.HasSuffix(name, "-more") {
		t.Errorf("%q (%d characters)", name, len(name))
	}
}

// A step of the shrinking is decided by as few replays as decide it: a
// schedule that fails is kept after Needed failures, one that does not is
// dropped once the replays left cannot make Needed; the finding's own
// replays and the confirmation run in full, for the rates they report.
func TestShrinkStepsStopOnceDecided(t *testing.T) {
	b := base(t)
	runs := 0
	counted := func(ctx context.Context, sc *scenarios.Scenario) (Outcome, error) {
		runs++
		return model(lostInsert)(ctx, sc)
	}
	o := Options{Base: b, Space: space(b), Trials: 1, Replays: 5, Needed: 3, Confirm: 4, MaxChecks: 6, Out: t.TempDir()}
	o.Space.Families = []string{"lost_reply", "latency"}
	// A seed whose trial 0 has lost_reply on postgres and another fault:
	// shrinking has steps to check.
	for seed := uint64(1); o.Seed == 0 && seed < 500; seed++ {
		s := o.Space.Draw(seed, 0)
		if len(s.Faults) > 1 && slices.ContainsFunc(s.Faults, func(f Fault) bool { return f.Family == "lost_reply" && f.Target == "postgres" }) {
			o.Seed = seed
		}
	}
	if o.Seed == 0 {
		t.Fatal("no seed draws lost_reply on postgres and another fault in trial 0")
	}
	res, err := Search(context.Background(), o, counted)
	if err != nil || len(res.Findings) != 1 {
		t.Fatalf("%v, %d findings", err, len(res.Findings))
	}
	f := res.Findings[0]
	// The trial, its 5 replays, 3 runs for each step (it fails 3 of 3, or
	// passes 3 of 3: decided either way), 4 runs as written.
	if want := 1 + 5 + 3*len(f.Steps) + 4; runs != want || len(f.Steps) == 0 {
		t.Errorf("%d runs for %d shrinking steps, want %d", runs, len(f.Steps), want)
	}
	if f.Before != [2]int{5, 5} || f.After != [2]int{4, 4} {
		t.Errorf("replays before %v, after %v: want every one run", f.Before, f.After)
	}
}

// The draws of a seed are pinned: testdata/draws.jsonl holds what seeds 1
// and 7 draw (50 trials each) from a space without process families, as
// drawn before the process families were known. A change that moves any
// draw (a new family put before the others, a draw reordered) breaks
// every journal a user would resume, and fails here.
func TestDrawsArePinned(t *testing.T) {
	b := base(t)
	sp := space(b)
	var got bytes.Buffer
	for _, seed := range []uint64{1, 7} {
		for i := range 50 {
			got.Write(sp.Draw(seed, i).Encode())
			got.WriteByte('\n')
		}
	}
	file := filepath.Join("testdata", "draws.jsonl")
	if *update {
		if err := os.WriteFile(file, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		gl, wl := strings.Split(got.String(), "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("draw %d moved:\n got  %s\n want %s", i, gl[i], wl[i])
			}
		}
		t.Fatalf("%d draws, want %d", len(gl), len(wl))
	}
}

// Process faults (kill, pause, restart) are drawn only on a dependency
// whose handle can carry them out, the HTTP toxics only on one that speaks
// HTTP; a space naming a process family that no dependency can do is
// refused.
func TestFamiliesDrawnOnlyWhereTheyAct(t *testing.T) {
	b := base(t)
	sp := space(b)
	sp.Targets = []string{"gateway", "postgres", "redis"}
	sp.Families = FamilyNames()
	sp.On = map[string][]string{"kill": {"redis"}, "restart": {"redis"}, "pause": {"postgres", "redis"},
		"http_error": {"gateway"}, "http_latency": {"gateway"}, "http_lost_response": {"gateway"}}
	drawn := map[string]map[string]int{}
	for i := range 400 {
		fs := sp.Draw(5, i).Faults
		for j, f := range fs {
			// One process fault at a time on a process.
			for _, g := range fs[:j] {
				if isProcess(f.Family) && isProcess(g.Family) && f.Target == g.Target && overlaps(f, g) {
					t.Errorf("trial %d: %s and %s of %s at once", i, g.Family, f.Family, f.Target)
				}
			}
			if drawn[f.Family] == nil {
				drawn[f.Family] = map[string]int{}
			}
			drawn[f.Family][f.Target]++
		}
	}
	for fam, on := range sp.On {
		if len(drawn[fam]) == 0 {
			t.Errorf("%s never drawn in 400 trials", fam)
		}
		if len(drawn[fam]) != len(on) {
			t.Errorf("%s drawn on %v, want each of %v", fam, drawn[fam], on)
		}
		for target := range drawn[fam] {
			if !slices.Contains(on, target) {
				t.Errorf("%s drawn on %s, whose handle cannot", fam, target)
			}
		}
	}
	if len(drawn["latency"]) != 3 {
		t.Errorf("latency drawn on %v, want every dependency", drawn["latency"])
	}
	// A schedule of process faults is written as one: process: kill, no
	// toxic, and it parses.
	s := Schedule{Rate: 1, Length: 1, Load: sp.Load, Faults: []Fault{{Target: "redis", Family: "kill", Phase: PhasePeak, At: 2 * time.Second, For: time.Second, Intensity: 1}}}
	data, sc, err := s.Scenario(b, filepath.Join(t.TempDir(), "kill.yaml"), "kill", "")
	if err != nil || len(sc.Faults) != 1 || sc.Faults[0].Process != "kill" || sc.Faults[0].Toxic != nil || !bytes.Contains(data, []byte("process: kill")) {
		t.Fatalf("written %s (%v)", data, err)
	}
	// Refused: a process family no dependency's handle can do.
	bad := sp
	bad.On = map[string][]string{"kill": {"redis"}, "restart": {"redis"}, "http_error": {"gateway"}}
	o := Options{Base: b, Space: bad, Seed: 1, Trials: 1, Replays: 1, Needed: 1, Out: t.TempDir()}
	if _, err := Search(context.Background(), o, model(func([]scenarios.Fault) bool { return false })); err == nil || !strings.Contains(err.Error(), "family pause") {
		t.Fatalf("a space with pause and no handle for it: %v", err)
	}
}

// A bug only a killed process reaches (a store that comes back without
// what it had not yet written down) is found, shrunk to the one kill, and
// never softened: a kill has no intensity.
func TestSearchFindsAProcessFault(t *testing.T) {
	b := base(t)
	sp := space(b)
	sp.Families = slices.DeleteFunc(FamilyNames(), func(n string) bool { f, _ := FamilyByName(n); return f.Cache != nil })
	sp.On = map[string][]string{"kill": {"redis"}, "pause": {"redis"}, "restart": {"redis"}}
	killed := func(fs []scenarios.Fault) bool {
		return slices.ContainsFunc(fs, func(f scenarios.Fault) bool {
			return f.Target == "redis" && (f.Process == "kill" || f.Process == "restart")
		})
	}
	o := Options{Base: b, Space: sp, Seed: 1, Trials: 30, Replays: 3, Needed: 2, MaxChecks: 40, Out: t.TempDir()}
	res, err := Search(context.Background(), o, model(killed))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) != 1 {
		t.Fatalf("%d findings in %d trials, want 1", len(res.Findings), len(res.Trials))
	}
	f := res.Findings[0]
	if len(f.Shrunk.Faults) != 1 || (f.Shrunk.Faults[0].Family != "kill" && f.Shrunk.Faults[0].Family != "restart") || f.Shrunk.Faults[0].Target != "redis" {
		t.Fatalf("shrunk to %+v, want one kill or restart of redis", f.Shrunk.Faults)
	}
	// Faults are dropped before any is softened: what is left to soften
	// is the kill alone, which has nothing to soften.
	for _, st := range f.Steps {
		if strings.Contains(st.Tried, "intensity") {
			t.Errorf("a process fault was softened: %s", st.Tried)
		}
	}
	var md bytes.Buffer
	if err := res.Markdown(&md, sp); err != nil || strings.Contains(md.String(), "| postgres | kill |") || !strings.Contains(md.String(), "| redis | kill |") {
		t.Errorf("coverage: a process family is a row only where a handle can do it\n%s", md.String())
	}
}

// A cache fault is drawn only on the dependencies On lists for it, found
// like any other, and written as the cache fault it was: a scenario that
// parses, with the whole database flushed.
func TestSearchFindsACacheFault(t *testing.T) {
	b := base(t)
	sp := space(b)
	sp.Families = append(withoutProcess(FamilyNames()), "cache_flush", "cache_expire", "cache_limit")
	sp.On = map[string][]string{"cache_flush": {"redis"}, "cache_expire": {"redis"}, "cache_limit": {"redis", "postgres"}}
	flushed := func(fs []scenarios.Fault) bool {
		return slices.ContainsFunc(fs, func(f scenarios.Fault) bool {
			if f.Cache != nil && f.Cache.Clears() && f.Target != "redis" {
				t.Errorf("a cache fault that clears keys drawn on %s", f.Target)
			}
			return f.Cache != nil && f.Cache.Flush == "*"
		})
	}
	o := Options{Base: b, Space: sp, Seed: 2, Trials: 40, Replays: 3, Needed: 2, MaxChecks: 40, Out: t.TempDir()}
	res, err := Search(context.Background(), o, model(flushed))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) != 1 {
		t.Fatalf("%d findings in %d trials, want 1", len(res.Findings), len(res.Trials))
	}
	f := res.Findings[0]
	if len(f.Shrunk.Faults) != 1 || f.Shrunk.Faults[0].Family != "cache_flush" {
		t.Fatalf("shrunk to %+v, want the one flush", f.Shrunk.Faults)
	}
	sc, err := scenarios.LoadFile(f.File)
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.Faults) != 1 || sc.Faults[0].Cache == nil || sc.Faults[0].Cache.Flush != "*" || sc.Faults[0].Kind() != scenarios.KindCacheFlush {
		t.Errorf("written %+v", sc.Faults)
	}
}

// A step is kept on 2 failures of 3 replays, so shrinking can stop at the
// edge of what reproduces. Here a lost reply with a probability of 0.25 or
// more always breaks the books, one between 0.15 and 0.25 every other run,
// and a lower one never: shrinking keeps the marginal step (2 of 3), and
// as written it fails in 3 of 5, under the 4 a step had to. The finding
// backs off to the step before (0.28), which fails 5 of 5, and writes that.
func TestMarginalShrinkBacksOff(t *testing.T) {
	b := base(t)
	sp := space(b)
	sp.Targets, sp.Families, sp.MaxFaults = []string{"postgres"}, []string{"lost_reply"}, 1
	seed := uint64(1)
	for sp.Draw(seed, 0).Faults[0].Intensity < 0.5 {
		seed++
	}
	marginal := 0
	run := func(_ context.Context, sc *scenarios.Scenario) (Outcome, error) {
		if sc.TotalDuration() < b.TotalDuration() || sc.Load.Stages[0].Target < b.Load.Stages[0].Target {
			return Outcome{Verdict: runrecord.VerdictPass}, nil // a smaller sale: not the bug's
		}
		for _, f := range sc.Faults {
			p, _ := f.Toxic.Attributes["probability"].(float64)
			switch {
			case p >= 0.25:
			case p >= 0.15:
				marginal++
				if marginal%2 == 0 {
					continue
				}
			default:
				continue
			}
			return Outcome{Verdict: runrecord.VerdictFail, Broken: []string{"units_created"}}, nil
		}
		return Outcome{Verdict: runrecord.VerdictPass}, nil
	}
	o := Options{Base: b, Space: sp, Seed: seed, Trials: 1, Replays: 3, Needed: 2, Confirm: 5, MaxChecks: 40, Out: t.TempDir()}
	res, err := Search(context.Background(), o, run)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) != 1 {
		t.Fatalf("%d findings", len(res.Findings))
	}
	f := res.Findings[0]
	kept := slices.ContainsFunc(f.Steps, func(s Step) bool { return s.Kept && strings.Contains(s.Tried, "intensity 0.25") })
	back := slices.ContainsFunc(f.Steps, func(s Step) bool {
		return strings.Contains(s.Tried, "as written it failed in 2 of 5 runs, under 4: back to kept step 4 of 5")
	})
	if !kept || !back || f.Shrunk.Faults[0].Intensity != 0.5 || f.After != [2]int{5, 5} {
		t.Fatalf("marginal step kept %v, backed off %v; written at intensity %g, failing %v; steps %+v", kept, back, f.Shrunk.Faults[0].Intensity, f.After, f.Steps)
	}
	sc, err := scenarios.LoadFile(f.File)
	if err != nil || sc.Faults[0].Toxic.Attributes["probability"] != 0.28 || !strings.Contains(sc.Description, "failed in 5 of 5 runs") {
		t.Errorf("the scenario written: %v, %+v, %q", err, sc.Faults, sc.Description)
	}
}

// A trial in error (a fault that could not be lifted, a Toxiproxy that no
// longer answers) stops the search: it is not journaled, the report says
// why, and -resume runs it again. Before, a Toxiproxy stuck in one trial
// made every later trial an error and the search ended with "nothing
// found".
func TestTrialInErrorStopsTheSearch(t *testing.T) {
	b := base(t)
	runs := 0
	broken := func(ctx context.Context, sc *scenarios.Scenario) (Outcome, error) {
		runs++
		if runs == 4 {
			return Outcome{Verdict: runrecord.VerdictError, Reason: "a fault could not be injected or lifted", Dir: "runs/x"}, nil
		}
		return Outcome{Verdict: runrecord.VerdictPass}, nil
	}
	var journal, md bytes.Buffer
	o := Options{Base: b, Space: space(b), Seed: 1, Trials: 10, Replays: 3, Needed: 2, Out: t.TempDir(), Journal: &journal}
	res, err := Search(context.Background(), o, broken)
	if err != nil {
		t.Fatal(err)
	}
	want := "trial 3 could not be carried out: a fault could not be injected or lifted (runs/x)"
	if res.Stopped != want || len(res.Trials) != 3 || runs != 4 {
		t.Fatalf("stopped %q after %d trials (%d runs), want %q after 3", res.Stopped, len(res.Trials), runs, want)
	}
	if err := res.Markdown(&md, o.Space); err != nil || !strings.Contains(md.String(), "Stopped: "+want) {
		t.Errorf("report: %v\n%s", err, md.String())
	}
	done, err := ReadJournal("trials.jsonl", &journal)
	if err != nil || len(done) != 3 {
		t.Fatalf("%v: %d trials journaled, want 3", err, len(done))
	}
	o.Done, o.Journal = done, nil
	res, err = Search(context.Background(), o, broken)
	if err != nil || res.Stopped != "" || len(res.Trials) != 10 || runs != 4+7 {
		t.Fatalf("resumed: %v, stopped %q, %d trials, %d runs", err, res.Stopped, len(res.Trials), runs)
	}
}

// A replay, a shrinking step or a confirmation whose drill ends in error
// stops the search as a trial in error does: a rate with such a run in it
// is the environment's. Before, it counted as a run that did not fail, so
// a finding could be dropped as too rare, or shrunk and backed off on
// rates the system never had. The trial is not journaled, and its faults
// are out of the coverage.
func TestReplayInErrorStopsTheSearch(t *testing.T) {
	b := base(t)
	runs := 0
	broken := func(ctx context.Context, sc *scenarios.Scenario) (Outcome, error) {
		runs++
		switch {
		case runs == 3:
			return Outcome{Verdict: runrecord.VerdictError, Reason: "a fault could not be lifted", Dir: "runs/y"}, nil
		case lostInsert(sc.Faults):
			return Outcome{Verdict: runrecord.VerdictFail, Broken: []string{"units_created"}}, nil
		}
		return Outcome{Verdict: runrecord.VerdictPass}, nil
	}
	// The first trial of seed 1 that breaks the model.
	first := -1
	for i := range 60 {
		if lostInsert(mustScenario(t, b, space(b).Draw(1, i)).Faults) {
			first = i
			break
		}
	}
	if first < 0 {
		t.Fatal("no trial of seed 1 draws the bug in 60")
	}
	runs = -first // the trials before it pass: the error falls on its second replay
	var journal bytes.Buffer
	o := Options{Base: b, Space: space(b), Seed: 1, Trials: 60, Replays: 3, Needed: 2, Out: t.TempDir(), Journal: &journal}
	res, err := Search(context.Background(), o, broken)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("a replay of trial %d could not be carried out: a fault could not be lifted (runs/y)", first)
	if res.Stopped != want || len(res.Findings) != 0 || len(res.Trials) != first {
		t.Fatalf("stopped %q, %d findings, %d trials; want %q after %d", res.Stopped, len(res.Findings), len(res.Trials), want, first)
	}
	if done, err := ReadJournal("trials.jsonl", &journal); err != nil || len(done) != first {
		t.Fatalf("%v: %d trials journaled, want %d", err, len(done), first)
	}
	n := 0
	for _, c := range res.Coverage {
		n += c
	}
	faults := 0
	for _, tr := range res.Trials {
		faults += len(tr.Schedule.Faults)
	}
	if n != faults {
		t.Errorf("coverage counts %d faults, the trials counted have %d", n, faults)
	}
}

// mustScenario is schedule s as the scenario a trial of it runs.
func mustScenario(t *testing.T, b *scenarios.Scenario, s Schedule) *scenarios.Scenario {
	t.Helper()
	_, sc, err := s.Scenario(b, filepath.Join(t.TempDir(), "trial.yaml"), "trial", "")
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// A base whose load replays a recording: a trial replays it too, written
// as the held stages the recording became (a trial's scenario lives
// elsewhere than the base's, where the recording's path would not
// resolve), its length and rate scaled as any stage's.
func TestTrialsOfAReplay(t *testing.T) {
	b := base(t).Clone()
	b.Load.Replay = &scenarios.Replay{File: "recordings/gone.csv", Format: "csv", Speedup: 1}
	b.Load.Stages = []scenarios.Stage{{Duration: scenarios.Duration(2 * time.Second), Target: 5, Hold: true}, {Duration: scenarios.Duration(3 * time.Second), Target: 9, Hold: true}}
	s := space(b).Draw(1, 0)
	sc := mustScenario(t, b, s)
	if sc.Load.Replay != nil || len(sc.Load.Stages) != 2 {
		t.Fatalf("the trial's load %+v, want the held stages and no replay", sc.Load)
	}
	for i, st := range sc.Load.Stages {
		if !st.Hold || st.Target != round3(b.Load.Stages[i].Target*s.Rate) {
			t.Errorf("stage %d: %+v, want held at %g", i, st, round3(b.Load.Stages[i].Target*s.Rate))
		}
	}
}

// A base with streams: a trial's streams follow its length and rate as
// its stages do, trimmed to the load's length, and a replay's recorded
// streams stay recorded (their funnels bring no purchase).
func TestTrialsOfAStoresDay(t *testing.T) {
	b := base(t).Clone()
	retries := 1
	b.Load.Streams = []scenarios.Stream{
		{Name: "steady", Mix: map[string]float64{"browse": 80, "purchase": 20}, Stages: []scenarios.Stage{{Duration: scenarios.Duration(8 * time.Second), Target: 10, Hold: true}}, Patience: b.Load.Patience, MaxRetries: &retries},
		{Name: "replay-cart", Mix: map[string]float64{"cart": 100}, Stages: []scenarios.Stage{{Duration: scenarios.Duration(7999 * time.Millisecond), Target: 3, Hold: true}}, Patience: b.Load.Patience, MaxRetries: &retries, Recorded: true},
	}
	for _, length := range []float64{1, 0.75, 0.333} {
		s := space(b).Draw(1, 0)
		s.Length = length
		sc := mustScenario(t, b, s)
		if len(sc.Load.Streams) != 2 || !sc.Load.Streams[1].Recorded || sc.Load.Streams[0].Recorded {
			t.Fatalf("length %g: the trial's streams %+v", length, sc.Load.Streams)
		}
		for _, st := range sc.Load.Streams {
			if st.Duration() > sc.TotalDuration() {
				t.Errorf("length %g: stream %s lasts %s, the load %s", length, st.Name, st.Duration(), sc.TotalDuration())
			}
		}
		if got, want := sc.Load.Streams[0].Stages[0].Target, round3(10*s.Rate); got != want {
			t.Errorf("length %g: the steady stream at %g, want %g", length, got, want)
		}
	}
}

// A trial and a finding run the base's load, all of it: a bug that only
// shoppers without a session meet is found only if the trials keep the
// base's session_share. Before, session_share, max_shoppers and
// retry_jitter were dropped (every shopper held a session).
func TestTrialsKeepTheWholeLoad(t *testing.T) {
	b := base(t).Clone()
	share, jitter := 0.3, 0.2
	b.Load.SessionShare, b.Load.RetryJitter, b.Load.MaxShoppers = &share, &jitter, 57
	sc := mustScenario(t, b, space(b).Draw(1, 0))
	if sc.Load.SessionShare == nil || *sc.Load.SessionShare != share || sc.Load.RetryJitter == nil || *sc.Load.RetryJitter != jitter || sc.Load.MaxShoppers != 57 {
		t.Fatalf("the trial's load %+v, want the base's session_share, retry_jitter and max_shoppers", sc.Load)
	}
}

// A finding whose trial broke two invariants, each through its own fault,
// can be shrunk (a step keeps any one of them) to a scenario that
// reproduces only one: the finding says what its scenario breaks as
// written, and a later trial that breaks the other is not taken for a
// repeat of it. Before, the finding claimed both, and every later trial
// breaking the same pair was counted and not shrunk: no scenario ever
// reproduced the second.
func TestFindingSaysWhatItsScenarioBreaks(t *testing.T) {
	b := base(t)
	downOnRedis := func(fs []scenarios.Fault) bool {
		return slices.ContainsFunc(fs, func(f scenarios.Fault) bool { return f.Target == "redis" && f.Down })
	}
	two := func(_ context.Context, sc *scenarios.Scenario) (Outcome, error) {
		var broken []string
		if lostInsert(sc.Faults) {
			broken = append(broken, "double_charges")
		}
		if downOnRedis(sc.Faults) {
			broken = append(broken, "units_created")
		}
		if len(broken) == 0 {
			return Outcome{Verdict: runrecord.VerdictPass}, nil
		}
		return Outcome{Verdict: runrecord.VerdictFail, Broken: broken}, nil
	}
	// A seed whose first trial to break anything breaks both.
	seed, first := uint64(0), -1
	for sd := uint64(1); sd <= 200 && first < 0; sd++ {
		for i := range 40 {
			sc := mustScenario(t, b, space(b).Draw(sd, i))
			lost, down := lostInsert(sc.Faults), downOnRedis(sc.Faults)
			if lost || down {
				if lost && down {
					seed, first = sd, i
				}
				break
			}
		}
	}
	if first < 0 {
		t.Fatal("no seed of 200 draws a trial that breaks both first")
	}
	res, _ := search(t, b, seed, 200, two)
	if len(res.Findings) == 0 || res.Findings[0].Trial != first || !sameInvariants(res.Findings[0].Broken, []string{"double_charges", "units_created"}) {
		t.Fatalf("seed %d: the first finding is not trial %d breaking both: %+v", seed, first, res.Findings)
	}
	got := map[string]bool{}
	for _, f := range res.Findings {
		if f.Rare {
			continue
		}
		if len(f.Reproduces) == 0 {
			t.Errorf("finding %s reproduces nothing it says", f.File)
		}
		for _, inv := range f.Reproduces {
			got[inv] = true
		}
		sc, err := scenarios.LoadFile(f.File)
		if err != nil {
			t.Fatal(err)
		}
		if lost, down := lostInsert(sc.Faults), downOnRedis(sc.Faults); slices.Contains(f.Reproduces, "double_charges") != lost || slices.Contains(f.Reproduces, "units_created") != down {
			t.Errorf("finding %s says it breaks %v; its faults: lost reply on postgres %v, redis down %v", f.File, f.Reproduces, lost, down)
		}
	}
	if !got["double_charges"] || !got["units_created"] {
		t.Fatalf("the findings' scenarios reproduce %v, want both invariants (%d findings in %d trials)", got, len(res.Findings), len(res.Trials))
	}
}

func sameInvariants(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// A system that breaks one invariant with no fault at all (a unit created
// in every sale) and another only through a lost reply on the database:
// the finding of the first shrinks to no fault, and a trial that breaks
// both is shrunk toward what is new, the second, to its lost reply.
// Before, a replay, a shrinking step or a confirmation counted a run that
// broke any of the trial's invariants: every trial with the lost reply
// became a finding shrunk to nothing, a duplicate of the first, and no
// scenario ever reproduced the second.
func TestShrinkAimsAtWhatIsNew(t *testing.T) {
	b := base(t)
	always := func(_ context.Context, sc *scenarios.Scenario) (Outcome, error) {
		broken := []string{"units_created"}
		if lostInsert(sc.Faults) {
			broken = []string{"double_charges", "units_created"}
		}
		return Outcome{Verdict: runrecord.VerdictFail, Broken: broken, Witnesses: []string{"s1-1"}}, nil
	}
	res, _ := search(t, b, 1, 40, always)
	if len(res.Findings) != 2 {
		var files []string
		for _, f := range res.Findings {
			files = append(files, fmt.Sprintf("%s (%d faults, reproduces %v)", filepath.Base(f.File), len(f.Shrunk.Faults), f.Reproduces))
		}
		t.Fatalf("%d findings in %d trials, want 2 (one for each invariant): %s", len(res.Findings), len(res.Trials), strings.Join(files, "; "))
	}
	none, lost := res.Findings[0], res.Findings[1]
	if none.Rare || len(none.Shrunk.Faults) != 0 || !slices.Contains(none.Reproduces, "units_created") {
		t.Errorf("the first finding: shrunk to %+v, reproduces %v; want no fault, units_created", none.Shrunk.Faults, none.Reproduces)
	}
	if lost.Rare || !slices.Equal(lost.New, []string{"double_charges"}) || !slices.Contains(lost.Reproduces, "double_charges") {
		t.Fatalf("the second finding: new %v, reproduces %v; want double_charges", lost.New, lost.Reproduces)
	}
	if len(lost.Shrunk.Faults) != 1 || lost.Shrunk.Faults[0].Family != "lost_reply" || lost.Shrunk.Faults[0].Target != "postgres" {
		t.Errorf("the second finding shrunk to %+v, want the lost reply on postgres", lost.Shrunk.Faults)
	}
	// Named after what it aims at, not after the invariant the first
	// finding already reproduces.
	if want := fmt.Sprintf("explore-%d-double-charges.yaml", lost.Trial); filepath.Base(lost.File) != want {
		t.Errorf("the second finding's file %s, want %s", lost.File, want)
	}
}

// The coverage table counts the faults that acted: a request-aware fault
// that acted on no request (here every HTTP toxic drawn on postgres,
// which does not speak HTTP) is not counted, whether its trial was
// inconclusive or another fault of it broke the books; the trials table
// says which it was, and a search resumed from the journal counts the
// same. Before, its cell read as tried.
func TestCoverageCountsWhatActed(t *testing.T) {
	b := base(t)
	idle := func(f scenarios.Fault) bool {
		return f.Target == "postgres" && f.Toxic != nil && strings.HasPrefix(f.Toxic.Type, "http_")
	}
	run := func(_ context.Context, sc *scenarios.Scenario) (Outcome, error) {
		var out Outcome
		for _, f := range sc.Faults {
			if idle(f) {
				out.Idle = append(out.Idle, f.Name)
			}
		}
		switch {
		case lostInsert(sc.Faults):
			out.Verdict, out.Broken = runrecord.VerdictFail, []string{"units_created"}
		case len(out.Idle) > 0:
			out.Verdict = runrecord.VerdictInconclusive
		default:
			out.Verdict = runrecord.VerdictPass
		}
		return out, nil
	}
	var journal bytes.Buffer
	o := Options{Base: b, Space: space(b), Seed: 1, Trials: 40, Replays: 3, Needed: 2, MaxChecks: 10, Out: t.TempDir(), Journal: &journal}
	res, err := Search(context.Background(), o, run)
	if err != nil {
		t.Fatal(err)
	}
	want := map[CoverKey]int{}
	drawnIdle, failedBeside := 0, 0
	for _, tr := range res.Trials {
		sc := mustScenario(t, b, tr.Schedule)
		for i, f := range tr.Schedule.Faults {
			if idle(sc.Faults[i]) {
				drawnIdle++
				if tr.Verdict == runrecord.VerdictFail {
					failedBeside++
				}
				continue
			}
			want[CoverKey{f.Target, f.Family, f.Phase}]++
		}
	}
	if drawnIdle == 0 || failedBeside == 0 {
		t.Fatalf("seed 1 draws %d HTTP toxics on postgres in 40 trials, %d beside a failure: the test needs both", drawnIdle, failedBeside)
	}
	if !maps.Equal(res.Coverage, want) {
		t.Errorf("coverage %v, want only the faults that acted %v", res.Coverage, want)
	}
	var md bytes.Buffer
	if err := res.Markdown(&md, o.Space); err != nil || !strings.Contains(md.String(), "acted on no request") {
		t.Errorf("the trials table does not say which faults acted on no request: %v\n%s", err, md.String())
	}
	done, err := ReadJournal("trials.jsonl", &journal)
	if err != nil {
		t.Fatal(err)
	}
	o.Done, o.Journal, o.Out = done, nil, t.TempDir()
	again, err := Search(context.Background(), o, run)
	if err != nil || !maps.Equal(again.Coverage, want) {
		t.Errorf("resumed: %v, coverage %v, want %v", err, again.Coverage, want)
	}
}

// A fault keeps its identity through shrinking: the lost reply that was
// the trial's second fault is still f1 once the first is dropped, so it
// keeps its default seed (gameday draws a request-aware toxic's from the
// run's seed and the fault's name) and picks the requests the trial's
// did. The model breaks its books only when the lost reply picks those.
// Before, it was renamed f0, picked others, and the fault before it could
// not be dropped.
func TestShrunkFaultKeepsItsIdentity(t *testing.T) {
	b := base(t)
	sp := space(b)
	sp.Families = []string{"latency", "lost_reply"}
	sp.MaxFaults = 2
	// A seed whose trial 0 has another fault, then a lost reply on
	// postgres.
	seed := uint64(0)
	for sd := uint64(1); seed == 0 && sd < 1000; sd++ {
		fs := sp.Draw(sd, 0).Faults
		if len(fs) == 2 && fs[1].Family == "lost_reply" && fs[1].Target == "postgres" && (fs[0].Family != "lost_reply" || fs[0].Target != "postgres") {
			seed = sd
		}
	}
	if seed == 0 {
		t.Fatal("no seed draws another fault, then a lost reply on postgres, in trial 0")
	}
	trial := mustScenario(t, b, sp.Draw(seed, 0))
	picks := func(sc *scenarios.Scenario, f scenarios.Fault) string { return fmt.Sprintf("%d/%s", sc.Seed, f.Name) }
	want := picks(trial, trial.Faults[1])
	run := func(_ context.Context, sc *scenarios.Scenario) (Outcome, error) {
		for _, f := range sc.Faults {
			if lostInsert([]scenarios.Fault{f}) && picks(sc, f) == want {
				return Outcome{Verdict: runrecord.VerdictFail, Broken: []string{"units_created"}}, nil
			}
		}
		return Outcome{Verdict: runrecord.VerdictPass}, nil
	}
	o := Options{Base: b, Space: sp, Seed: seed, Trials: 1, Replays: 3, Needed: 2, MaxChecks: 40, Out: t.TempDir()}
	res, err := Search(context.Background(), o, run)
	if err != nil || len(res.Findings) != 1 {
		t.Fatalf("%v: %d findings", err, len(res.Findings))
	}
	f := res.Findings[0]
	if len(f.Shrunk.Faults) != 1 || f.Shrunk.Faults[0].Family != "lost_reply" {
		var steps []string
		for _, st := range f.Steps {
			steps = append(steps, fmt.Sprintf("%s (kept %v)", st.Tried, st.Kept))
		}
		t.Fatalf("shrunk to %+v, want the lost reply alone; steps: %s", f.Shrunk.Faults, strings.Join(steps, "; "))
	}
	sc, err := scenarios.LoadFile(f.File)
	if err != nil || len(sc.Faults) != 1 || sc.Faults[0].Name != trial.Faults[1].Name || f.After != [2]int{3, 3} {
		t.Errorf("the scenario written: %v, faults %+v, failing %v; want the one fault named %s", err, sc.Faults, f.After, trial.Faults[1].Name)
	}
}

// A search stopped while a finding is being made (replayed, shrunk or
// confirmed) does not say "nothing found" beside the trial that broke the
// books: the finding is listed, unfinished, with what the trial broke and
// no scenario, and the trial is not journaled, so -resume runs it again
// and finishes it. Before, the report listed a failing trial with 0
// findings and "no trial broke the books", and the search exited as
// inconclusive. Nothing of it is left in -out: only findings the report
// lists as written are there to commit (a scenario is written where it
// goes only once confirmed).
func TestStoppedWhileMakingAFinding(t *testing.T) {
	b := base(t)
	for _, c := range []struct {
		name string
		// stop says whether to stop at the nth run of a finding's (the
		// replays are its 1st to 3rd).
		stop func(n int, sc *scenarios.Scenario) bool
	}{
		{"replaying", func(n int, _ *scenarios.Scenario) bool { return n == 2 }},
		{"shrinking", func(n int, _ *scenarios.Scenario) bool { return n == 5 }},
		{"confirming", func(_ int, sc *scenarios.Scenario) bool { return !strings.HasPrefix(sc.Name, "explore-replay-") }},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			n := 0
			run := func(_ context.Context, sc *scenarios.Scenario) (Outcome, error) {
				if !strings.HasPrefix(sc.Name, "explore-trial-") {
					if n++; c.stop(n, sc) {
						cancel()
					}
				}
				if lostInsert(sc.Faults) {
					return Outcome{Verdict: runrecord.VerdictFail, Broken: []string{"units_created"}, Witnesses: []string{"s1-9"}}, nil
				}
				return Outcome{Verdict: runrecord.VerdictPass}, nil
			}
			out := t.TempDir()
			var journal bytes.Buffer
			o := Options{Base: b, Space: space(b), Seed: 1, Trials: 60, Replays: 3, Needed: 2, MaxChecks: 40, Out: out, Journal: &journal}
			res, err := Search(ctx, o, run)
			if err != nil || res.Stopped == "" || len(res.Findings) != 1 {
				t.Fatalf("%v: stopped %q, %d findings, want 1", err, res.Stopped, len(res.Findings))
			}
			f := res.Findings[0]
			if !f.Unfinished || f.File != "" || f.Rare || !slices.Equal(f.Broken, []string{"units_created"}) {
				t.Errorf("the finding %+v, want it unfinished, breaking units_created, with no file", f)
			}
			if last := res.Trials[len(res.Trials)-1]; last.Schedule.Trial != f.Trial || last.Verdict != runrecord.VerdictFail {
				t.Errorf("the last trial listed is %d (%s), want %d, which failed", last.Schedule.Trial, last.Verdict, f.Trial)
			}
			if done, err := ReadJournal("trials.jsonl", &journal); err != nil || len(done) != f.Trial {
				t.Errorf("%v: %d trials journaled, want the %d before the finding's", err, len(done), f.Trial)
			}
			if res.ResumesAt() != f.Trial {
				t.Errorf("a resumed search begins with trial %d, want %d", res.ResumesAt(), f.Trial)
			}
			var md, page bytes.Buffer
			if err := res.Markdown(&md, o.Space); err != nil {
				t.Fatal(err)
			}
			if err := res.HTML(&page, o.Space); err != nil {
				t.Fatal(err)
			}
			for _, r := range []string{md.String(), page.String()} {
				if strings.Contains(r, "None: no trial broke the books") || !strings.Contains(r, fmt.Sprintf("trial %d: stopped before its finding was made", f.Trial)) || !strings.Contains(r, "s1-9") {
					t.Errorf("report:\n%s", r)
				}
			}
			left, err := os.ReadDir(out)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range left {
				t.Errorf("left in -out: %s", e.Name())
			}
		})
	}
}
