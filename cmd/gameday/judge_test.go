package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday"
	"github.com/gameday-dev/gameday/gameday/judge"
	"github.com/gameday-dev/gameday/gameday/runrecord"
	"github.com/gameday-dev/gameday/scenarios"
)

const judgedScenario = `name: judge-me
matrix: {dependency: payment, failure: latency}
stock: 100
load:
  stages:
    - duration: 10s
      target: 2
faults:
  - name: slow
    target: payment
    at: 2s
    for: 4s
    toxic: {type: latency, attributes: {latency: 1s}}
expect:
  - ratio:
      window: all
      outcomes: [confirmed]
      at_least: 0.5
`

// judgedRun writes a run directory as a drill leaves it — run.json,
// scenario.yaml, observations.json.gz, verdict.json — for a sale in which
// every shopper bought and the books balance. The judge command's claims
// are about reading it back; that a drill's own directory is judged again
// byte for byte is shown by every drill of the test command (gameday's
// run helper, the examples' drill helper).
func judgedRun(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	sc, err := scenarios.Parse(filepath.Join(dir, gameday.ScenarioFile), []byte(judgedScenario))
	if err != nil {
		t.Fatal(err)
	}
	initial, available, sold := int64(100), int64(80), int64(20)
	f := &judge.Facts{Initial: &initial, Available: &available, Sold: &sold, OrdersKnown: true, OrderCharges: true, ChargesKnown: true}
	obs := &judge.Observations{Version: judge.ObservationsVersion, System: "shop", SystemFile: "shop.yaml", End: 10 * time.Second,
		Faults: judge.FaultTimes{"slow": {From: 2 * time.Second, Lifted: 6 * time.Second, To: 6 * time.Second}}}
	at := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	for i := range 20 {
		id := fmt.Sprintf("r1-%d", i)
		sched := time.Duration(i) * 500 * time.Millisecond
		obs.Shoppers = append(obs.Shoppers, judge.Shopper{ID: id, Scheduled: sched, Outcome: judge.Confirmed, Told: "confirmed", Finished: sched + 80*time.Millisecond,
			LeftAt: at.Add(sched + 8*time.Second), Attempts: []judge.Attempt{{At: sched, Latency: 80 * time.Millisecond, Status: "confirmed"}}})
		f.Orders = append(f.Orders, judge.Order{CheckoutID: id, Charge: "ch" + id, Units: 1})
		f.Charges = append(f.Charges, judge.Charge{CheckoutID: id, ID: "ch" + id, Status: "approved", At: at.Add(sched)})
	}
	obs.Books = []judge.Books{{Name: "shop", File: "shop.yaml", Facts: f}}
	j := judge.Run(sc, obs)
	if j.Verdict != runrecord.VerdictPass {
		t.Fatalf("the run to judge again: %s (%s)", j.Verdict, j.Reason)
	}
	rec := &runrecord.Record{Scenario: sc.Name, File: sc.File, RateScale: 1, TimeScale: 1, Outcomes: map[string]int{"confirmed": 20},
		Faults: []runrecord.FaultRecord{{Name: "slow", Target: "payment", Kind: "latency"}}}
	rec.Verdict, rec.Reason, rec.Expectations, rec.InvariantChecks = j.Verdict, j.Reason, j.Expectations, j.InvariantChecks
	data, err := gameday.EncodeJudged(j)
	if err != nil {
		t.Fatal(err)
	}
	for name, write := range map[string]func(string) error{
		"run.json":             rec.WriteFile,
		gameday.ScenarioFile:   func(p string) error { return os.WriteFile(p, []byte(judgedScenario), 0o644) },
		judge.ObservationsFile: func(p string) error { return judge.WriteObservations(p, obs) },
		judge.VerdictFile:      func(p string) error { return os.WriteFile(p, data, 0o644) },
	} {
		if err := write(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestJudgeAgain(t *testing.T) {
	t.Run("unchanged", func(t *testing.T) {
		dir := judgedRun(t)
		var stdout, stderr bytes.Buffer
		code := run([]string{"judge", dir}, &stdout, &stderr)
		if code != exitOK || !strings.Contains(stdout.String(), "the run's own judgement, byte for byte") {
			t.Fatalf("exit %d\n%s%s", code, stdout.String(), stderr.String())
		}
		a, _ := os.ReadFile(filepath.Join(dir, judge.VerdictFile))
		b, err := os.ReadFile(filepath.Join(dir, "rejudged.json"))
		if err != nil || !bytes.Equal(a, b) {
			t.Fatalf("rejudged.json: %v\n%s\nwant\n%s", err, b, a)
		}
	})

	// A promise changed after the run: the verdict it would have had,
	// written where -o says; the run's own files untouched.
	t.Run("changed promise", func(t *testing.T) {
		dir := judgedRun(t)
		before, _ := os.ReadFile(filepath.Join(dir, "run.json"))
		changed := filepath.Join(t.TempDir(), "stricter.yaml")
		os.WriteFile(changed, []byte(strings.Replace(judgedScenario, "outcomes: [confirmed]", "outcomes: [unavailable]", 1)), 0o644)
		out := filepath.Join(t.TempDir(), "verdict.json")
		var stdout, stderr bytes.Buffer
		code := run([]string{"judge", "-scenario", changed, "-o", out, dir}, &stdout, &stderr)
		if code != exitFailed || !strings.Contains(stdout.String(), "fail, where the run was pass") {
			t.Fatalf("exit %d\n%s%s", code, stdout.String(), stderr.String())
		}
		if data, err := os.ReadFile(out); err != nil || !strings.Contains(string(data), `"verdict": "fail"`) {
			t.Fatalf("-o: %v %s", err, data)
		}
		after, _ := os.ReadFile(filepath.Join(dir, "run.json"))
		if !bytes.Equal(before, after) {
			t.Fatal("run.json changed")
		}
		if _, err := os.Stat(filepath.Join(dir, "rejudged.json")); err == nil {
			t.Fatal("rejudged.json written beside -o")
		}
	})

	// What cannot be judged again is refused, exit 2, saying why.
	for _, c := range []struct {
		name, want string
		spoil      func(t *testing.T, dir string) []string
	}{
		{"other faults", "faults slower (latency on payment), but the run injected slow (latency on payment)", func(t *testing.T, dir string) []string {
			p := filepath.Join(t.TempDir(), "other.yaml")
			os.WriteFile(p, []byte(strings.Replace(judgedScenario, "name: slow\n", "name: slower\n", 1)), 0o644)
			return []string{"-scenario", p}
		}},
		{"no observations", "has no observations.json.gz", func(t *testing.T, dir string) []string {
			os.Remove(filepath.Join(dir, judge.ObservationsFile))
			return nil
		}},
		{"later version", "version 2, but this gameday reads version 1", func(t *testing.T, dir string) []string {
			obs, err := judge.ReadObservations(filepath.Join(dir, judge.ObservationsFile))
			if err != nil {
				t.Fatal(err)
			}
			obs.Version = 2
			if err := judge.WriteObservations(filepath.Join(dir, judge.ObservationsFile), obs); err != nil {
				t.Fatal(err)
			}
			return nil
		}},
		{"no scenario", "name the scenario to judge it with (-scenario FILE)", func(t *testing.T, dir string) []string {
			os.Remove(filepath.Join(dir, gameday.ScenarioFile))
			return nil
		}},
		{"bad scenario", "stricter.yaml:1", func(t *testing.T, dir string) []string {
			p := filepath.Join(t.TempDir(), "stricter.yaml")
			os.WriteFile(p, []byte("name: [\n"), 0o644)
			return []string{"-scenario", p}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := judgedRun(t)
			args := append([]string{"judge"}, c.spoil(t, dir)...)
			var stdout, stderr bytes.Buffer
			code := run(append(args, dir), &stdout, &stderr)
			if code != exitUsage || !strings.Contains(stderr.String(), c.want) {
				t.Fatalf("exit %d, stderr %q, want 2 and %q", code, stderr.String(), c.want)
			}
			if _, err := os.Stat(filepath.Join(dir, "rejudged.json")); err == nil {
				t.Fatal("rejudged.json written")
			}
		})
	}
}
