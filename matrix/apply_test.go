package matrix

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/runrecord"
)

// runAt is the start of the drills the tests apply.
var runAt = time.Date(2026, 12, 1, 2, 0, 3, 500_000_000, time.UTC)

// drills are four results, one for each kind of row in handwritten.yaml: a
// `last` block replaced, a `last: ~` filled in, a row without `last`
// given one, and a `last` with comments inside and a key after it.
var drills = []Result{
	{Scenario: "payment-latency", At: runAt, Commit: "1234567", Verdict: VerdictPass,
		Figures: Figures{BreakerOpenedAfter: dur("1.234s"), RecoveredAfter: dur("2.5s"), CheckoutP95During: dur("151.2ms")}},
	{Scenario: "payment-down", At: runAt, Commit: "3f2a1c9", Verdict: VerdictFail, Figures: Figures{Oversold: 1, ChargesWithoutOrder: 2}},
	{Scenario: "sessions-down", At: runAt, Verdict: VerdictPass, Figures: Figures{CheckoutP95During: dur("80ms")}},
	{Scenario: "catalogue:inventory-down", At: runAt, Verdict: VerdictInconclusive},
}

// Applying results edits only the `last` blocks (golden file); applying
// them again changes nothing.
func TestApplyGolden(t *testing.T) {
	m := mustParse(t, "handwritten.yaml", readFile(t, "testdata/handwritten.yaml"))
	for _, r := range drills {
		changed, err := m.Apply(r)
		if err != nil || !changed {
			t.Fatalf("Apply(%s) = %v, %v", r.Scenario, changed, err)
		}
	}
	out, _ := m.Marshal()
	golden(t, "applied.golden.yaml", out)

	for _, r := range drills {
		if changed, err := m.Apply(r); err != nil || changed {
			t.Errorf("Apply(%s) again = %v, %v; want no change", r.Scenario, changed, err)
		}
	}
	again, _ := m.Marshal()
	if !bytes.Equal(again, out) {
		t.Errorf("a second Apply changed bytes:\n%s", firstDiff(out, again))
	}
	// The file says what was applied, rounded.
	r := m.Rows()[0]
	if !r.Last.At.Equal(runAt.Truncate(time.Second)) || *r.Last.Figures.BreakerOpenedAfter != 1230*time.Millisecond || *r.Last.Figures.CheckoutP95During != 150*time.Millisecond {
		t.Errorf("rows[0].last = %+v", r.Last)
	}
}

// A result equal to the row's `last` once rounded changes nothing, even
// the first time: re-applying the run record that wrote it.
func TestApplyUnchangedResult(t *testing.T) {
	data := readFile(t, "testdata/handwritten.yaml")
	m := mustParse(t, "handwritten.yaml", data)
	same := Result{Scenario: "payment-latency", At: time.Date(2026, 11, 29, 14, 0, 0, 400_000_000, time.UTC), Commit: "3f2a1c9", Verdict: VerdictPass,
		Figures: Figures{BreakerOpenedAfter: dur("1.2001s"), RecoveredAfter: dur("3.4s"), CheckoutP95During: dur("139.6ms")}}
	if changed, err := m.Apply(same); err != nil || changed {
		t.Errorf("Apply = %v, %v; want no change", changed, err)
	}
	if out, _ := m.Marshal(); !bytes.Equal(out, data) {
		t.Errorf("bytes changed:\n%s", firstDiff(data, out))
	}
}

// A scenario no row names is an error wrapping ErrNoRow that lists the
// rows' scenarios, and changes nothing.
func TestApplyUnknownScenario(t *testing.T) {
	data := readFile(t, "testdata/handwritten.yaml")
	m := mustParse(t, "handwritten.yaml", data)
	_, err := m.Apply(Result{Scenario: "redis-killed", At: runAt, Verdict: VerdictPass})
	if !errors.Is(err, ErrNoRow) || !strings.Contains(err.Error(), "payment-latency, payment-down, sessions-down, inventory-down") {
		t.Errorf("Apply: %v", err)
	}
	if out, _ := m.Marshal(); !bytes.Equal(out, data) {
		t.Error("a refused Apply changed the matrix")
	}
}

// Results that cannot be written are refused.
func TestApplyRefusesBadResults(t *testing.T) {
	m := mustParse(t, "handwritten.yaml", readFile(t, "testdata/handwritten.yaml"))
	for _, r := range []Result{
		{At: runAt, Verdict: VerdictPass},                                                                            // no scenario
		{Scenario: "payment-latency", Verdict: VerdictPass},                                                          // no time
		{Scenario: "payment-latency", At: runAt, Verdict: "passed"},                                                  // unknown verdict
		{Scenario: "payment-latency", At: runAt, Verdict: VerdictPass, Commit: "a\nb"},                               // not a commit
		{Scenario: "payment-latency", At: runAt, Verdict: VerdictPass, Figures: Figures{Oversold: -1}},               // negative count
		{Scenario: "payment-latency", At: runAt, Verdict: VerdictPass, Figures: Figures{RecoveredAfter: dur("-1s")}}, // negative duration
	} {
		if _, err := m.Apply(r); err == nil {
			t.Errorf("Apply(%+v) accepted", r)
		}
	}
}

// A row naming a scenario file matches the run of that file: the row's
// path is relative to the matrix, the run's to the current directory.
func TestApplyMatchesPaths(t *testing.T) {
	src := `version: 1
rows:
  - dependency: payment
    failure: slow
    cadence: weekly
    scenario: drills/custom.yaml
`
	for _, c := range []struct {
		matrix, run string
		match       bool
	}{
		{"m.yaml", "drills/custom.yaml", true},             // both from here
		{"m.yaml", "./drills/../drills/custom.yaml", true}, // cleaned
		{"ops/m.yaml", "ops/drills/custom.yaml", true},     // the row's path is relative to the matrix
		{"ops/m.yaml", "drills/custom.yaml", false},        // another file
		{"m.yaml", "custom", false},                        // a catalogue name never matches a path
	} {
		m := mustParse(t, c.matrix, []byte(src))
		_, err := m.Apply(Result{Scenario: c.run, At: runAt, Verdict: VerdictPass})
		if (err == nil) != c.match {
			t.Errorf("matrix %s, run %s: %v, want match %v", c.matrix, c.run, err, c.match)
		}
	}
	m := mustParse(t, "ops/m.yaml", []byte(src))
	if got := m.ScenarioArg(m.Rows()[0]); got != filepath.Join("ops", "drills", "custom.yaml") {
		t.Errorf("ScenarioArg = %q", got)
	}
}

// Windows line endings are kept, and so is a missing final newline.
func TestApplyKeepsLineEndings(t *testing.T) {
	lf := readFile(t, "testdata/handwritten.yaml")
	crlf := bytes.ReplaceAll(lf, []byte("\n"), []byte("\r\n"))
	m := mustParse(t, "crlf.yaml", crlf)
	for _, r := range drills {
		if _, err := m.Apply(r); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := m.Marshal()
	want := bytes.ReplaceAll(readFile(t, "testdata/applied.golden.yaml"), []byte("\n"), []byte("\r\n"))
	if !bytes.Equal(got, want) {
		t.Errorf("CRLF file:\n%s", firstDiff(want, got))
	}

	src := "version: 1\nrows:\n  - dependency: payment\n    failure: latency\n    cadence: weekly\n    scenario: payment-latency"
	m = mustParse(t, "m.yaml", []byte(src))
	if _, err := m.Apply(drills[0]); err != nil {
		t.Fatal(err)
	}
	out, _ := m.Marshal()
	if !bytes.HasPrefix(out, []byte(src+"\n    last:\n      at: 2026-12-01T02:00:03Z\n")) || bytes.HasSuffix(out, []byte("\n")) {
		t.Errorf("no final newline:\n%s", out)
	}
}

// A row written in flow style cannot be edited by lines: the file is
// written out again, and still holds every row and the new result.
func TestApplyFlowStyleRow(t *testing.T) {
	src := `version: 1
rows:
  # compact rows
  - {dependency: payment, failure: latency, cadence: weekly, scenario: payment-latency}
  - {dependency: payment, failure: down, cadence: weekly, scenario: payment-down, owner: team-checkout}
`
	m := mustParse(t, "m.yaml", []byte(src))
	before := m.Rows()
	if changed, err := m.Apply(drills[1]); err != nil || !changed {
		t.Fatalf("Apply = %v, %v", changed, err)
	}
	out, _ := m.Marshal()
	m2 := mustParse(t, "m.yaml", out)
	after := m2.Rows()
	if !rowEqual(after[0], before[0]) || after[1].Owner != "team-checkout" || after[1].Last == nil || after[1].Last.Verdict != VerdictFail {
		t.Errorf("after the fallback:\n%s", out)
	}
	if !bytes.Contains(out, []byte("# compact rows")) {
		t.Errorf("comment lost:\n%s", out)
	}
	if changed, err := m2.Apply(drills[1]); err != nil || changed {
		t.Errorf("second Apply = %v, %v", changed, err)
	}
}

// Different indentation: a new `last` block follows the file's.
func TestApplyFollowsIndentation(t *testing.T) {
	src := "version: 1\nrows:\n    -   dependency: payment\n        failure: latency\n        cadence: weekly\n        scenario: payment-latency\n"
	m := mustParse(t, "m.yaml", []byte(src))
	if _, err := m.Apply(drills[2]); err == nil {
		t.Fatal("applied sessions-down to a matrix without it")
	}
	if _, err := m.Apply(drills[0]); err != nil {
		t.Fatal(err)
	}
	out, _ := m.Marshal()
	if !bytes.Contains(out, []byte("\n        last:\n            at: 2026-12-01T02:00:03Z\n")) {
		t.Errorf("indentation:\n%s", out)
	}
}

// FromRecord maps run.json onto a Result.
func TestFromRecordMapsRunJSON(t *testing.T) {
	rec, err := runrecord.Read("testdata/run.json")
	if err != nil {
		t.Fatal(err)
	}
	r := FromRecord(rec, "abc1234")
	want := Result{Scenario: "payment-latency", At: time.Date(2026, 11, 29, 14, 0, 0, 123_000_000, time.UTC), Commit: "abc1234", Verdict: VerdictPass,
		Figures: Figures{BreakerOpenedAfter: dur("1.212s"), RecoveredAfter: dur("3.4s"), CheckoutP95During: dur("140.5ms"), DoubleCharges: 1, Dropped: 3}}
	if r.Scenario != want.Scenario || !r.At.Equal(want.At) || r.Commit != want.Commit || r.Verdict != want.Verdict || !r.Figures.equal(want.Figures) {
		t.Errorf("FromRecord = %+v\nwant %+v", r, want)
	}
	rec.File = "drills/mine.yaml"
	if r := FromRecord(rec, ""); r.Scenario != "drills/mine.yaml" {
		t.Errorf("scenario of a file: %q", r.Scenario)
	}
}

// An empty `last:` with a comment, followed by more keys, is filled in
// place, and a row in flow style elsewhere in the file is left alone.
func TestApplyEmptyLast(t *testing.T) {
	src := "version: 1\nrows:\n  - dependency: payment\n    failure: latency\n    last:    # soon\n    cadence: weekly\n    scenario: payment-latency\n" +
		"  - {dependency: payment, failure: down, cadence: weekly, scenario: payment-down}\n"
	m := mustParse(t, "m.yaml", []byte(src))
	if _, err := m.Apply(drills[0]); err != nil {
		t.Fatal(err)
	}
	out, _ := m.Marshal()
	want := "    last:    # soon\n      at: 2026-12-01T02:00:03Z\n"
	if !bytes.Contains(out, []byte(want)) || !bytes.HasSuffix(out, []byte("    cadence: weekly\n    scenario: payment-latency\n"+
		"  - {dependency: payment, failure: down, cadence: weekly, scenario: payment-down}\n")) {
		t.Errorf("got:\n%s", out)
	}
}
