package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gameday-dev/gameday/internal/testenv"
	"github.com/gameday-dev/gameday/matrix"
)

// A fire drill end to end: the drill says what is due, the due row runs
// (a real drill), its result is written into the matrix beside the
// hand-written text, and the next drill finds nothing due and checks clean.
func TestDrillRecordsDueRows(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a drill")
	}
	bin := buildBinary(t)
	dir := t.TempDir()
	const handwritten = `# Our promises.
version: 1
rows:
  - dependency: none
    failure: baseline
    expectation: Shoppers buy, fast, and the books balance.
    cadence: weekly   # a hand-written comment
    scenario: baseline
`
	file := filepath.Join(dir, "resiliency-matrix.yaml")
	if err := os.WriteFile(file, []byte(handwritten), 0o644); err != nil {
		t.Fatal(err)
	}
	drill := func(args ...string) (string, int) {
		cmd := exec.Command(bin, append([]string{"drill", "-quiet", "-runs-dir", filepath.Join(dir, "runs"),
			"-journal", filepath.Join(dir, "journal.json"), "-commit", "abc1234"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}
	out, code := drill("-time-scale", "0.2")
	if code != 0 || !strings.Contains(out, "PASS  baseline") || !strings.Contains(out, "recorded in") {
		t.Fatalf("first drill: exit %d\n%s", code, out)
	}
	// It said what it would run, and roughly how long, before it ran.
	plan := strings.Index(out, "resiliency-matrix.yaml: 1 row due; 1 drill, in this order:\n  none/baseline  baseline  never run (cadence weekly)\ntime: about 6s, the scenarios' load stages at -time-scale 0.2")
	if plan < 0 || plan > strings.Index(out, "PASS  baseline") {
		t.Errorf("first drill: no plan before the drill:\n%s", out)
	}
	got, _ := os.ReadFile(file)
	if !strings.HasPrefix(string(got), handwritten) || !strings.Contains(string(got), "commit: abc1234") || !strings.Contains(string(got), "verdict: pass") {
		t.Fatalf("matrix after the drill:\n%s", got)
	}
	out, code = drill()
	if code != 0 || !strings.Contains(out, "no drill is due") || !strings.Contains(out, "all proven on schedule") {
		t.Fatalf("second drill: exit %d\n%s", code, out)
	}
	if again, _ := os.ReadFile(file); string(again) != string(got) {
		t.Errorf("a drill with nothing due changed the matrix")
	}

	// A drill that cannot be carried out (its checkout unreachable) is not
	// recorded, and the drill exits 2 although the matrix checks clean.
	out, code = drill("-all", "-env", "external", "-toxiproxy", "127.0.0.1:1", "-checkout-url", "http://127.0.0.1:1")
	if code != 2 || !strings.Contains(out, "ERROR") {
		t.Fatalf("drill against an unreachable service: exit %d\n%s", code, out)
	}
	if again, _ := os.ReadFile(file); string(again) != string(got) {
		t.Errorf("an errored drill changed the matrix")
	}
}

// dueMatrix has one row not due, one never run and one past its cadence,
// at the clock of inMatrixDir (2026-12-02 09:00 UTC).
const dueMatrix = `# Our promises.
version: 1
rows:
  - dependency: payment
    failure: latency
    cadence: weekly
    scenario: payment-latency
    last: {at: 2026-11-30T02:00:00Z, verdict: pass}  # two days old: not due
  - dependency: payment
    failure: down
    cadence: weekly
    scenario: payment-down  # never run
  - dependency: none
    failure: baseline
    cadence: daily
    scenario: baseline
    last: {at: 2026-11-30T02:00:00Z, verdict: pass}  # two days old: due
`

// gameday matrix due and gameday drill -dry-run list the due rows, why,
// and the estimate (load stages; settle limits: the lease, twice the
// payment timeout and 10s each), one piece of code for both; nothing runs:
// no runs directory, no journal, the matrix unchanged byte for byte.
func TestDrillDryRunAndMatrixDue(t *testing.T) {
	dir := inMatrixDir(t)
	t.Setenv("GAMEDAY_JOURNAL", filepath.Join(dir, "state", "journal.json"))
	writeMatrix(t, matrix.DefaultFile, dueMatrix)
	const rows = `resiliency-matrix.yaml: 2 rows due; 2 drills, in this order:
  payment/down   payment-down  never run (cadence weekly)
  none/baseline  baseline      last run 2026-11-30 02:00 UTC, 2d7h ago; cadence daily: due after 21h36m
`
	cases := []struct {
		cmd  func([]string, io.Writer, io.Writer) error
		args []string
		want string
	}{
		{matrixCmd, []string{"due"}, rows + // 30s + 30s of load; 30s+2×1s+10s and 30s+2×2s+10s
			"time: about 1m, the scenarios' load stages (approximate: setup, the prediction and settling the books add seconds a drill as a rule; at most 1m26s more if every drill waits its full limit for its books to settle)\n"},
		{matrixCmd, []string{"due", matrix.DefaultFile}, rows + // the file named
			"time: about 1m, the scenarios' load stages (approximate: setup, the prediction and settling the books add seconds a drill as a rule; at most 1m26s more if every drill waits its full limit for its books to settle)\n"},
		{drillCmd, []string{"-dry-run", "-time-scale", "0.5"}, rows + // half the load, half the lease
			"time: about 30s, the scenarios' load stages at -time-scale 0.5 (approximate: setup, the prediction and settling the books add seconds a drill as a rule; at most 56s more if every drill waits its full limit for its books to settle)\n" +
			"dry run: nothing was run, the matrix is unchanged\n"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if err := c.cmd(c.args, &stdout, &stderr); err != nil {
				t.Fatalf("%v\n%s", err, stderr.String())
			}
			if got := stdout.String(); got != c.want {
				t.Errorf("stdout:\n%s\nwant:\n%s", got, c.want)
			}
			if got, _ := os.ReadFile(matrix.DefaultFile); string(got) != dueMatrix {
				t.Errorf("the matrix changed:\n%s", got)
			}
			if left := testenv.DirNames(t, dir); len(left) != 1 || left[0] != matrix.DefaultFile {
				t.Errorf("the directory holds %v; want the matrix alone (no runs, no journal)", left)
			}
		})
	}

	// -all lists every row, saying which are not due.
	var stdout, stderr bytes.Buffer
	if err := drillCmd([]string{"-dry-run", "-all"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if out := stdout.String(); !strings.Contains(out, "3 rows to drill (-all); 3 drills") ||
		!strings.Contains(out, "payment/latency  payment-latency  not due (last run 2026-11-30 02:00 UTC, cadence weekly): -all") {
		t.Errorf("drill -dry-run -all:\n%s", out)
	}

	// Nothing due: said so, exit 0.
	writeMatrix(t, "done.yaml", strings.ReplaceAll(strings.Replace(dueMatrix, "scenario: payment-down  # never run", "scenario: payment-down\n    last: {at: 2026-12-02T02:00:00Z, verdict: fail}", 1), "2026-11-30T02", "2026-12-02T02"))
	stdout.Reset()
	if err := matrixCmd([]string{"due", "done.yaml"}, &stdout, &stderr); err != nil || stdout.String() != "done.yaml: no drill is due\n" {
		t.Errorf("matrix due with nothing due: %v\n%s", err, stdout.String())
	}

	// A due row whose scenario cannot run is listed, and the drill would
	// refuse to start: exit 2 from matrix due and drill -dry-run alike.
	writeMatrix(t, "broken.yaml", strings.Replace(dueMatrix, "scenario: payment-down", "scenario: gone/payment-down.yaml", 1))
	for _, c := range []struct {
		cmd  func([]string, io.Writer, io.Writer) error
		args []string
	}{
		{matrixCmd, []string{"due", "broken.yaml"}},
		{drillCmd, []string{"-dry-run", "-matrix", "broken.yaml"}},
	} {
		stdout.Reset()
		err := c.cmd(c.args, &stdout, &stderr)
		if code := matrixExit(err); code != exitUsage || !strings.Contains(err.Error(), "broken.yaml:9: scenario:") {
			t.Errorf("%v: exit %d, %v", c.args, code, err)
		}
		if out := stdout.String(); !strings.Contains(out, "payment/down   gone/payment-down.yaml  never run (cadence weekly); cannot run: ") || !strings.Contains(out, "time: about 30s") {
			t.Errorf("%v:\n%s", c.args, out)
		}
	}
}

// -h of drill and cleanup says how to call them, what they do, and their
// flags, and exits 0.
func TestDrillAndCleanupHelp(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"drill", "-h"}, []string{"usage: gameday drill [-matrix FILE] [-all] [-dry-run] [flags of gameday run]", "prints the rows it will run", "-dry-run\n", "-time-scale float"}},
		{[]string{"cleanup", "-h"}, []string{"usage: gameday cleanup [-journal FILE] [-containers=false] [-drop RUN_ID|all]", "leaves no file behind", "-drop string"}},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(c.args, &stdout, &stderr); code != exitOK {
			t.Fatalf("%v: exit %d\n%s", c.args, code, stderr.String())
		}
		for _, w := range c.want {
			if !strings.Contains(stderr.String(), w) {
				t.Errorf("%v: output lacks %q:\n%s", c.args, w, stderr.String())
			}
		}
	}
}

// gameday cleanup with nothing to clean up leaves nothing behind: no
// journal, no lock file, no directory; an empty journal it finds is
// removed; -drop on no journal is exit 2 and creates nothing.
func TestCleanupWithNothingLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	journal := filepath.Join(dir, "state", "gameday", "journal.json")
	for _, args := range [][]string{
		{"cleanup", "-containers=false", "-journal", journal},
		{"cleanup", "-containers=false", "-journal", filepath.Join(dir, "journal.json")},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(args, &stdout, &stderr); code != exitOK || stdout.String() != "nothing to clean up\n" {
			t.Errorf("%v: exit %d\n%s%s", args, code, stdout.String(), stderr.String())
		}
		if left := testenv.DirNames(t, dir); len(left) != 0 {
			t.Errorf("%v left %v in a fresh directory", args, left)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"cleanup", "-containers=false", "-journal", journal, "-drop", "all"}, &stdout, &stderr); code != exitUsage {
		t.Errorf("cleanup -drop with no journal: exit %d, want 2", code)
	}
	if left := testenv.DirNames(t, dir); len(left) != 0 {
		t.Errorf("cleanup -drop left %v", left)
	}

	// An empty journal, as an older gameday left it, goes.
	empty := filepath.Join(dir, "journal.json")
	if err := os.WriteFile(empty, []byte("[]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code := run([]string{"cleanup", "-containers=false", "-journal", empty}, &stdout, &stderr); code != exitOK {
		t.Errorf("cleanup of an empty journal: exit %d\n%s", code, stderr.String())
	}
	if left := testenv.DirNames(t, dir); len(left) != 0 {
		t.Errorf("cleanup of an empty journal left %v", left)
	}
}
