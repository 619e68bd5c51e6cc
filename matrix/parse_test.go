package matrix

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/internal/testenv"
)

// A hand-edited matrix, with comments in odd places, block scalars, quoted
// keys' values, a `last: ~` and rows without `last`, comes back byte for
// byte, and reads as written.
func TestRoundTripHandwritten(t *testing.T) {
	data := readFile(t, "testdata/handwritten.yaml")
	m := mustParse(t, "handwritten.yaml", data)
	out, err := m.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, data) {
		t.Errorf("Marshal changed the file:\n%s", firstDiff(data, out))
	}

	rows := m.Rows()
	if len(rows) != 4 {
		t.Fatalf("%d rows, want 4", len(rows))
	}
	pl := rows[0]
	want := Row{
		Dependency: "payment", Failure: "latency",
		Expectation:       "Shoppers are refused fast (503, Retry-After) while payment is slow; the breaker opens within 2 s.",
		RecoveryObjective: "10s", Runbook: "https://wiki.example/runbooks/payment-latency", Owner: "team-checkout",
		Cadence: "weekly", Scenario: "payment-latency", Status: StatusPromise, Line: 8,
		Last: &Last{
			At: time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC), Commit: "3f2a1c9", Verdict: VerdictPass,
			Figures: Figures{BreakerOpenedAfter: dur("1.2s"), RecoveredAfter: dur("3.4s"), CheckoutP95During: dur("140ms")},
		},
	}
	if !rowEqual(pl, want) || pl.Line != want.Line {
		t.Errorf("rows[0] = %+v\nwant %+v", pl, want)
	}
	if r := rows[1]; r.Expectation != "Payment unreachable: shoppers are refused at once, units go back on sale, nobody is charged without an order.\n" || r.Last != nil || r.Cadence != "72h" {
		t.Errorf("rows[1] = %+v", r)
	}
	if r := rows[2]; r.Status != StatusKnownGap || r.Last != nil || r.Runbook != "TODO" {
		t.Errorf("rows[2] = %+v", r)
	}
	if r := rows[3]; r.Last == nil || r.Last.Figures.Oversold != 2 || r.Owner != "team-inventory" {
		t.Errorf("rows[3] = %+v", r)
	}
	// Rows returns copies.
	rows[0].Last.Figures.Oversold = 99
	if m.Rows()[0].Last.Figures.Oversold != 0 {
		t.Error("Rows shares its Last with the matrix")
	}
}

// Bad files are refused with an error naming file, line and field, and an
// Update leaves them byte for byte as they were, never calling fn.
func TestRefusals(t *testing.T) {
	cases := []struct {
		file string
		want string // the start of the first error
	}{
		// Two runs merged on two branches, each with its `last`.
		{"conflict.yaml", "conflict.yaml:8: rows[0].last: merge-conflict marker \"<<<<<<< HEAD\""},
		// A typo in a hand-written field.
		{"unknown-key.yaml", "unknown-key.yaml:7: rows[0].ownr: unknown field"},
		// A row must name the scenario that proves it.
		{"no-scenario.yaml", "no-scenario.yaml:3: rows[0].scenario: missing: the scenario that proves the row"},
		// The same key twice: the second would silently win.
		{"duplicate-key.yaml", "duplicate-key.yaml:8: rows[0].owner: given twice (first on line 5)"},
		// A count that is not a number.
		{"wrong-type.yaml", "wrong-type.yaml:11: rows[0].last.figures.oversold: want a whole number, got string \"many\""},
		// Durations are strings with a unit.
		{"bare-duration.yaml", "bare-duration.yaml:5: rows[0].recovery_objective: 10 is a bare number, not a duration (write \"10s\")"},
		// Anchors and aliases are refused (no alias bombs, no shared rows).
		{"alias.yaml", "alias.yaml:3: rows[0]: anchors (&row) are not allowed"},
		// A catalogue name with a typo.
		{"unknown-scenario.yaml", "unknown-scenario.yaml:6: rows[0].scenario: \"paymnet-latency\" is not in the catalogue"},
		// Cadences are daily, weekly, monthly or a duration.
		{"bad-cadence.yaml", "bad-cadence.yaml:5: rows[0].cadence: \"fortnightly\" is not a cadence"},
		// One row per dependency and failure.
		{"duplicate-row.yaml", "duplicate-row.yaml:7: rows[1]: payment/latency is also rows[0] (line 3)"},
		// One document per file.
		{"two-documents.yaml", "two-documents.yaml:3: more than one YAML document"},
		// Nothing at all.
		{"empty.yaml", "empty.yaml: empty"},
		// A future format.
		{"version.yaml", "version.yaml:1: version: version 2 is not one this gameday reads"},
		// A list instead of the mapping.
		{"not-a-mapping.yaml", "not-a-mapping.yaml:1: want a mapping with version and rows, got a list"},
		// Verdicts are run.json's.
		{"bad-verdict.yaml", "bad-verdict.yaml:9: rows[0].last.verdict: want pass, fail, error or inconclusive, got \"passed\""},
		// Times are RFC 3339.
		{"bad-time.yaml", "bad-time.yaml:8: rows[0].last.at: \"last tuesday\" is not an RFC 3339 time"},
		// A tab in the indentation, pointed at.
		{"tab.yaml", "tab.yaml:4: rows[0].failure: bad YAML"},
		// known_gap, not known-gap.
		{"bad-status.yaml", "bad-status.yaml:7: rows[0].status: want promise or known_gap, got \"known-gap\""},
		// Merge keys would hide fields.
		{"merge-key.yaml", "merge-key.yaml:3: rows[0]: merge keys (<<) are not allowed"},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			path := fixture(t, "bad/"+c.file)
			before := readFile(t, path)
			_, perr := Parse(c.file, before)
			if perr == nil {
				t.Fatal("Parse accepted it")
			}
			errs := Errors(perr)
			if len(errs) == 0 || !strings.HasPrefix(errs[0].Error(), c.want) {
				t.Errorf("Parse: %v\nwant an error starting %q", perr, c.want)
			}
			err := Update(path, func(*Matrix) error {
				t.Error("Update called fn on an invalid file")
				return nil
			})
			if err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(c.want, c.file)) {
				t.Errorf("Update: %v\nwant %q", err, c.want)
			}
			if after := readFile(t, path); !bytes.Equal(after, before) {
				t.Error("Update changed the refused file")
			}
			if names := testenv.DirNames(t, filepath.Dir(path)); len(names) != 1 {
				t.Errorf("Update left files behind: %v", names)
			}
		})
	}
}

// Every problem in a file is reported at once, in line order.
func TestParseReportsEveryProblem(t *testing.T) {
	src := `version: 1
rows:
  - dependency: payment
    failure: latency
    cadence: sometimes
    scenario: payment-latency
    ownr: x
  - dependency: payment
    failure: down
`
	_, err := Parse("m.yaml", []byte(src))
	var lines []int
	for _, e := range Errors(err) {
		lines = append(lines, e.Line)
	}
	if want := []int{5, 7, 8, 8}; !slices.Equal(lines, want) {
		t.Errorf("error lines %v, want %v:\n%v", lines, want, err)
	}
}

// A file over 1 MiB is refused before it is parsed; Load reads no more
// than one byte past the limit.
func TestParseRefusesLargeFile(t *testing.T) {
	big := append([]byte("version: 1\nrows: []\n"), bytes.Repeat([]byte("# padding\n"), MaxSize/10+1)...)
	_, err := Parse("big.yaml", big)
	if err == nil || !strings.Contains(err.Error(), "big.yaml: larger than 1048576 bytes") {
		t.Errorf("Parse: %v", err)
	}
	path := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(path, big, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("Load: %v", err)
	}
}

// Conflict markers count only at the start of a line, as git writes them.
func TestConflictMarkersAtLineStartOnly(t *testing.T) {
	src := "version: 1\nrows:\n  - dependency: payment\n    failure: latency\n    cadence: weekly\n    scenario: payment-latency\n    expectation: |\n      =======\n      <<<<<<< not a marker when indented\n"
	if _, err := Parse("m.yaml", []byte(src)); err != nil {
		t.Errorf("indented markers refused: %v", err)
	}
	if _, err := Parse("m.yaml", []byte(src+"=======\n")); err == nil || !strings.Contains(err.Error(), "m.yaml:10:") {
		t.Errorf("marker at line start: %v", err)
	}
}

// Optional fields may be left empty (null); a missing status is a promise;
// an all-digit commit reads as written.
func TestParseDefaults(t *testing.T) {
	src := `version: 1
rows:
  - dependency: payment
    failure: latency
    cadence: weekly
    scenario: payment-latency
    owner:
    runbook: ~
    last:
      at: 2026-11-29T15:00:00+01:00
      commit: 0123456
      verdict: pass
`
	m := mustParse(t, "m.yaml", []byte(src))
	r := m.Rows()[0]
	if r.Status != StatusPromise || r.Owner != "" || r.Runbook != "" {
		t.Errorf("row %+v", r)
	}
	if r.Last.Commit != "0123456" || !r.Last.At.Equal(time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)) || r.Last.At.Location() != time.UTC {
		t.Errorf("last %+v", r.Last)
	}
}

// Errors unwrap to *Error values with the file, line and field apart.
func TestErrorFields(t *testing.T) {
	_, err := Parse("m.yaml", readFile(t, "testdata/bad/unknown-key.yaml"))
	var e *Error
	if !errors.As(err, &e) || e.File != "m.yaml" || e.Line != 7 || e.Field != "rows[0].ownr" {
		t.Errorf("%#v", e)
	}
}
