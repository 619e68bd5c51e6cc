package examples_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gameday-dev/gameday/internal/testenv"
	"github.com/gameday-dev/gameday/scenarios"
)

// gameday explore, run as a user runs it, against ticketshop: in its
// -fresh-key-retry mode (a charge whose answer was lost is sent again
// under a new idempotency key) a search finds the double charge, shrinks
// it, and writes a scenario that replays it; in its correct mode the same
// search finds nothing. The search is the default one (seed 1, every
// family) on a short sale (a base of 4 s) with few replays, to fit the
// test command: two trials, a finding replayed and shrunk 2 of 2.
func TestExploreTicketshop(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "gameday")
	if err := testenv.GoBuild(bin, "../cmd/gameday"); err != nil {
		t.Fatal(err)
	}
	system, err := filepath.Abs("ticketshop/gameday.yaml")
	if err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(t.TempDir(), "short-sale.yaml")
	if err := os.WriteFile(base, []byte(`name: short-sale
system: `+system+`
matrix: {dependency: none, failure: explore}
stock: 60
load:
  stages: [{duration: 1s, target: 20}, {duration: 3s, target: 20}]
  patience: 4s
  max_retries: 2
`), 0o644); err != nil {
		t.Fatal(err)
	}
	explore := func(t *testing.T, mode ...string) (string, string, int) {
		t.Helper()
		vars := ticketshop(t, true, mode...)
		out := t.TempDir()
		cmd := exec.Command(bin, "explore", "-budget", "2", "-seed", "1",
			"-replays", "2", "-needed", "2", "-max-checks", "4", "-out", out, "-runs-dir", filepath.Join(t.TempDir(), "runs"),
			"-journal", filepath.Join(t.TempDir(), "journal.json"), "-quiet", base)
		cmd.Env = os.Environ()
		for k, v := range vars {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		b, err := cmd.CombinedOutput()
		code := 0
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out, string(b), code
	}

	t.Run("fresh key retry", func(t *testing.T) {
		out, output, code := explore(t, "-fresh-key-retry")
		found, _ := filepath.Glob(filepath.Join(out, "explore-*double-charges*.yaml"))
		if code != 1 || len(found) == 0 {
			t.Fatalf("exit %d, findings %v, want the double charge found:\n%s", code, found, output)
		}
		sc, err := scenarios.LoadFile(found[0])
		if err != nil {
			t.Fatal(err)
		}
		// The shrunk scenario has the one fault the bug needs, a lost
		// answer of the gateway.
		if len(sc.Faults) != 1 || sc.Faults[0].Target != "gateway" || sc.Faults[0].Toxic == nil || !strings.HasPrefix(sc.Faults[0].Toxic.Type, "http_lost_response") {
			t.Errorf("the scenario written has faults %+v, want one lost answer of the gateway", sc.Faults)
		}
		report, err := os.ReadFile(filepath.Join(out, "report.md"))
		if err != nil || !strings.Contains(string(report), "| gateway | http_lost_response |") || !strings.Contains(string(report), "broke: double_charges") {
			t.Errorf("report: %v\n%s", err, report)
		}
		log, err := os.ReadFile(filepath.Join(out, "log.jsonl"))
		if err != nil || strings.Count(string(log), "\n") != 2 {
			t.Errorf("log: %v\n%s", err, log)
		}
	})
	t.Run("correct", func(t *testing.T) {
		out, output, code := explore(t)
		found, _ := filepath.Glob(filepath.Join(out, "explore-*.yaml"))
		if code != 0 || len(found) != 0 {
			t.Fatalf("exit %d, findings %v, want none:\n%s", code, found, output)
		}
	})
}
