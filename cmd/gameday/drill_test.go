package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A fire drill end to end: the due row runs (a real drill), its result is
// written into the matrix beside the hand-written text, and the next drill
// finds nothing due and checks clean.
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
