package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/matrix"
)

// matrixExit maps a command's error to its exit code, as run does.
func matrixExit(err error) int {
	if err == nil || errors.Is(err, errHelp) {
		return exitOK
	}
	var ue usageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	var ee exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return exitFailed
}

// inMatrixDir runs the test in a new directory with the clock at
// 2026-12-02 09:00 UTC.
func inMatrixDir(t *testing.T) string {
	t.Helper()
	t.Chdir(t.TempDir())
	old := matrixNow
	matrixNow = func() time.Time { return time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC) }
	t.Cleanup(func() { matrixNow = old })
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func writeMatrix(t *testing.T, name, text string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

const cleanMatrix = `version: 1
rows:
  - dependency: payment
    failure: latency
    cadence: weekly
    scenario: payment-latency
    last: {at: 2026-11-30T02:00:00Z, verdict: pass}
  - dependency: payment
    failure: down
    cadence: weekly
    scenario: payment-down
    status: known_gap
    last: {at: 2026-11-30T02:00:00Z, verdict: fail}
`

// gameday init writes the starter matrix, which matrix show reads and
// matrix check reports as never run; a second init refuses to overwrite.
func TestInitWritesStarterOnce(t *testing.T) {
	inMatrixDir(t)
	var stdout, stderr bytes.Buffer
	if err := initCmd(nil, &stdout, &stderr); err != nil {
		t.Fatalf("init: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "wrote "+matrix.DefaultFile) {
		t.Errorf("stdout: %s", stdout.String())
	}
	written, err := os.ReadFile(matrix.DefaultFile)
	if err != nil {
		t.Fatal(err)
	}
	m, err := matrix.Load(matrix.DefaultFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Rows()) < 9 {
		t.Errorf("%d rows", len(m.Rows()))
	}

	stdout.Reset()
	err = matrixCmd([]string{"check"}, &stdout, &stderr)
	if code := matrixExit(err); code != exitFailed || !strings.Contains(stdout.String(), "row payment/latency (payment-latency): overdue — never run") {
		t.Errorf("check of the starter: exit %d (%v)\n%s", code, err, stdout.String())
	}

	// Refused, and the file is as it was.
	if err := os.WriteFile(matrix.DefaultFile, append(written, "# mine\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	err = initCmd(nil, &stdout, &stderr)
	if code := matrixExit(err); code != exitUsage || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("second init: exit %d, %v", code, err)
	}
	if now, _ := os.ReadFile(matrix.DefaultFile); !bytes.Equal(now, append(written, "# mine\n"...)) {
		t.Error("init overwrote the matrix")
	}

	// --matrix chooses the file; a directory that does not exist is exit 2.
	if err := initCmd([]string{"--matrix", "ops.yaml"}, &stdout, &stderr); err != nil {
		t.Errorf("init --matrix: %v", err)
	}
	if code := matrixExit(initCmd([]string{"--matrix", "no/such/dir/m.yaml"}, &stdout, &stderr)); code != exitUsage {
		t.Errorf("init into a missing directory: exit %d", code)
	}
	if code := matrixExit(initCmd([]string{"extra"}, &stdout, &stderr)); code != exitUsage {
		t.Errorf("init with a drill that is not there: exit %d", code)
	}
}

// gameday init with drill files writes a matrix of those drills: one row
// each, naming its file relative to the matrix, which matrix due reads; a
// drill that does not parse is named and nothing is written.
func TestInitWritesMatrixOfYourDrills(t *testing.T) {
	dir := inMatrixDir(t)
	drill := func(path, name, dep, failure string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		body := fmt.Sprintf("name: %s\ndescription: The shop keeps selling when %s fails.\nsystem: ../gameday.yaml\nmatrix: {dependency: %s, failure: %s}\nstock: 50\nload:\n  stages:\n    - {duration: 10s, target: 5}\n", name, dep, dep, failure)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	drill("drills/first-sale.yaml", "first-sale", "checkout", "none")
	drill("drills/gateway-slow.yaml", "gateway-slow", "gateway", "latency")
	if err := os.Mkdir("ops", 0o755); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if err := initCmd([]string{"-matrix", "ops/matrix.yaml", "drills/first-sale.yaml", "drills/gateway-slow.yaml"}, &stdout, &stderr); err != nil {
		t.Fatalf("init: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "wrote ops/matrix.yaml: 2 rows, one per drill given") {
		t.Errorf("stdout: %s", stdout.String())
	}
	m, err := matrix.Load(filepath.Join(dir, "ops/matrix.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var refs []string
	for _, r := range m.Rows() {
		refs = append(refs, r.Scenario)
	}
	if strings.Join(refs, " ") != "../drills/first-sale.yaml ../drills/gateway-slow.yaml" {
		t.Errorf("rows name %q", refs)
	}
	data, _ := os.ReadFile("ops/matrix.yaml")
	if !strings.Contains(string(data), "expectation: The shop keeps selling when gateway fails.") {
		t.Errorf("the matrix:\n%s", data)
	}

	// A drill that does not parse: named, with its line; nothing written.
	if err := os.WriteFile("drills/bad.yaml", []byte("name: bad\nstock: -1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err = initCmd([]string{"-matrix", "other.yaml", "drills/first-sale.yaml", "drills/bad.yaml"}, &stdout, &stderr)
	if code := matrixExit(err); code != exitUsage || !strings.Contains(err.Error(), "drills/bad.yaml:") {
		t.Errorf("a bad drill: exit %d, %v", code, err)
	}
	if _, err := os.Stat("other.yaml"); err == nil {
		t.Error("a matrix was written beside a bad drill")
	}
}

// matrix check: 0 when clean, 1 with a line per problem, 2 for an invalid
// file (each error on stderr with file:line: field) or an invalid row.
func TestMatrixCheckExitCodes(t *testing.T) {
	inMatrixDir(t)
	writeMatrix(t, matrix.DefaultFile, cleanMatrix)
	writeMatrix(t, "failing.yaml", strings.Replace(cleanMatrix, "verdict: pass", "verdict: fail", 1))
	writeMatrix(t, "bad.yaml", strings.Replace(cleanMatrix, "cadence: weekly", "cadence: weekly\n    ownr: me", 1))
	writeMatrix(t, "mismatch.yaml", strings.Replace(cleanMatrix, "scenario: payment-latency", "scenario: sessions-down", 1))

	cases := []struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{[]string{"check"}, exitOK, matrix.DefaultFile + ": 2 rows, all proven on schedule", ""},
		{[]string{"check", "failing.yaml"}, exitFailed, "row payment/latency (payment-latency): failed — last run 2026-11-30 02:00 UTC failed\n", ""},
		{[]string{"check", "bad.yaml"}, exitUsage, "", "bad.yaml:6: rows[0].ownr: unknown field"},
		{[]string{"check", "mismatch.yaml"}, exitUsage, "row payment/latency (sessions-down): invalid — scenario sessions-down proves sessions/down", ""},
		{[]string{"check", "missing.yaml"}, exitUsage, "", ""},
		{[]string{"check", "a.yaml", "b.yaml"}, exitUsage, "", ""},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := matrixCmd(c.args, &stdout, &stderr)
			if code := matrixExit(err); code != c.code {
				t.Errorf("exit %d (%v), want %d\nstdout: %s\nstderr: %s", code, err, c.code, stdout.String(), stderr.String())
			}
			if !strings.Contains(stdout.String(), c.stdout) || !strings.Contains(stderr.String(), c.stderr) {
				t.Errorf("stdout %q, want %q\nstderr %q, want %q", stdout.String(), c.stdout, stderr.String(), c.stderr)
			}
		})
	}
}

// matrix show prints a table or Markdown; the flag may come after the
// file; a bad format or a missing subcommand is exit 2.
func TestMatrixShow(t *testing.T) {
	dir := inMatrixDir(t)
	writeMatrix(t, "m.yaml", cleanMatrix)
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"show", "m.yaml"}, exitOK, "payment/latency  promise"},
		{[]string{"show", "m.yaml", "--format", "markdown"}, exitOK, "| payment/latency<br>`payment-latency` | promise |"},
		{[]string{"show", "-format=md", filepath.Join(dir, "m.yaml")}, exitOK, "## Resiliency matrix"},
		{[]string{"show", "m.yaml", "--format", "html"}, exitUsage, ""},
		{[]string{"show"}, exitUsage, ""}, // no resiliency-matrix.yaml here
		{nil, exitUsage, ""},
		{[]string{"lint"}, exitUsage, ""},
		{[]string{"help"}, exitOK, "due [FILE]"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := matrixCmd(c.args, &stdout, &stderr)
			if code := matrixExit(err); code != c.code {
				t.Errorf("exit %d (%v), want %d; stderr %s", code, err, c.code, stderr.String())
			}
			if !strings.Contains(stdout.String(), c.want) {
				t.Errorf("stdout lacks %q:\n%s", c.want, stdout.String())
			}
		})
	}
}

// -h of matrix lists its commands; -h of each command and of init says
// how to call it and what it does, on stderr, and exits 0.
func TestMatrixAndInitHelp(t *testing.T) {
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"matrix", "-h"}, []string{"usage: gameday matrix COMMAND", "  check [FILE]", "  show [FILE]", "  due [FILE]"}},
		{[]string{"matrix", "check", "-h"}, []string{"usage: gameday matrix check [FILE]", "Exit 0 when"}},
		{[]string{"matrix", "show", "-h"}, []string{"usage: gameday matrix show [FILE] [-format table|markdown]", "-format string"}},
		{[]string{"matrix", "due", "-h"}, []string{"usage: gameday matrix due [FILE]", "changes nothing"}},
		{[]string{"init", "-h"}, []string{"usage: gameday init [-matrix FILE] [DRILL.yaml...] | gameday init -system FILE", "never overwrites", "-system string"}},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(c.args, &stdout, &stderr); code != exitOK {
				t.Fatalf("exit %d\n%s%s", code, stdout.String(), stderr.String())
			}
			out := stdout.String() + stderr.String()
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}
