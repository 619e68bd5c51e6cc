package matrix

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Check on a fixture for each reason, and on a clean file, at a fixed now
// (2026-12-02 09:00 UTC).
func TestCheck(t *testing.T) {
	cases := []struct {
		file   string
		reason string // "" for no problem
		detail string // in the detail
	}{
		// Promises passing on schedule, a known gap failing, a 72h and a
		// monthly cadence, a scenario file of our own next to the matrix.
		{"clean.yaml", "", ""},
		// The promise's last run failed, and its books were wrong.
		{"failed.yaml", ReasonFailed, "last run 2026-12-01 14:00 UTC (commit 3f2a1c9) failed; books: oversold 3"},
		// A run that could not be carried out proves nothing.
		{"error.yaml", ReasonFailed, "could not be carried out (error): unproven until a run passes"},
		// Neither does an inconclusive one.
		{"inconclusive.yaml", ReasonFailed, "was inconclusive"},
		// It passed, but recovered after 12.5s against a 10s objective.
		{"objective-missed.yaml", ReasonFailed, "recovered after 12.5s, beyond the 10s recovery objective"},
		// Weekly, last run 12 days ago.
		{"overdue.yaml", ReasonOverdue, "last run 2026-11-20 09:00 UTC, 12d ago; cadence weekly allows 7d16h"},
		// Never run counts as overdue.
		{"never-run.yaml", ReasonOverdue, "never run (cadence weekly)"},
		// The known gap passes: promote it.
		{"known-gap-passes.yaml", ReasonKnownGapPasses, "passed: promote it (status: promise)"},
		// The scenario proves another row.
		{"mismatch.yaml", ReasonInvalid, "scenario payment-latency proves payment/latency, not payment/down"},
		// The scenario file is not there.
		{"missing-file.yaml", ReasonInvalid, "drills/nope.yaml: no such file or directory"},
		// A run dated in the future would never be overdue.
		{"future.yaml", ReasonInvalid, "in the future"},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			m, err := Load(filepath.Join("testdata", "check", c.file))
			if err != nil {
				t.Fatal(err)
			}
			problems := Check(m, now)
			if c.reason == "" {
				if len(problems) > 0 {
					t.Errorf("problems in a clean file: %v", problems)
				}
				return
			}
			if len(problems) != 1 {
				t.Fatalf("want one problem, got %v", problems)
			}
			p := problems[0]
			if p.Reason != c.reason || !strings.Contains(p.Detail, c.detail) {
				t.Errorf("got %s\nwant reason %q, detail with %q", p, c.reason, c.detail)
			}
			if want := fmt.Sprintf("row %s (%s): %s — ", p.Row.ID(), p.Row.Scenario, c.reason); !strings.HasPrefix(p.String(), want) {
				t.Errorf("String() = %q, want it to start %q", p, want)
			}
		})
	}
}

// A row with several problems is reported once for each, in order.
func TestCheckSeveralProblemsOneRow(t *testing.T) {
	src := `version: 1
rows:
  - dependency: payment
    failure: down
    cadence: daily
    scenario: payment-latency
    last: {at: 2026-11-01T00:00:00Z, verdict: fail}
`
	var reasons []string
	for _, p := range Check(mustParse(t, "m.yaml", []byte(src)), now) {
		reasons = append(reasons, p.Reason)
	}
	if want := []string{ReasonInvalid, ReasonFailed, ReasonOverdue}; !slices.Equal(reasons, want) {
		t.Errorf("reasons %v, want %v", reasons, want)
	}
}

// The edges of due and overdue, for each kind of cadence.
func TestDueAndOverdue(t *testing.T) {
	cases := []struct {
		cadence string
		age     time.Duration
		due     bool
		overdue bool
	}{
		{"weekly", 0, false, false},                                             // just ran
		{"weekly", 6*24*time.Hour + 7*time.Hour, false, false},                  // not yet nine tenths
		{"weekly", 6*24*time.Hour + 7*time.Hour + 12*time.Minute, true, false},  // nine tenths: the weekly timer may run it
		{"weekly", 7 * 24 * time.Hour, true, false},                             // a week: due, not overdue
		{"weekly", 7*24*time.Hour + 16*time.Hour + 48*time.Minute, true, false}, // the tenth of grace, exactly
		{"weekly", 7*24*time.Hour + 16*time.Hour + 49*time.Minute, true, true},  // past it
		{"daily", 23 * time.Hour, true, false},                                  // a daily timer that fired a little early
		{"daily", 26*time.Hour + 25*time.Minute, true, true},                    // 24h + 2h24m
		{"monthly", 29 * 24 * time.Hour, true, false},                           // 30 days
		{"monthly", 34 * 24 * time.Hour, true, true},                            // past 33 days
		{"72h", 70 * time.Hour, true, false},                                    // a duration
		{"72h", 80 * time.Hour, true, true},                                     // past 79.2h
	}
	for _, c := range cases {
		at := now.Add(-c.age)
		src := fmt.Sprintf("version: 1\nrows:\n  - {dependency: payment, failure: latency, cadence: %q, scenario: payment-latency, last: {at: %s, verdict: pass}}\n",
			c.cadence, at.Format(time.RFC3339))
		m := mustParse(t, "m.yaml", []byte(src))
		if got := len(Due(m, now)) == 1; got != c.due {
			t.Errorf("%s, %s old: due %v, want %v", c.cadence, c.age, got, c.due)
		}
		overdue := false
		for _, p := range Check(m, now) {
			overdue = overdue || p.Reason == ReasonOverdue
		}
		if overdue != c.overdue {
			t.Errorf("%s, %s old: overdue %v, want %v", c.cadence, c.age, overdue, c.overdue)
		}
	}
	never := mustParse(t, "m.yaml", []byte("version: 1\nrows:\n  - {dependency: payment, failure: latency, cadence: weekly, scenario: payment-latency}\n"))
	if len(Due(never, now)) != 1 {
		t.Error("a row that never ran is not due")
	}
}

// Due says why each row is due, in the words gameday drill and gameday
// matrix due print.
func TestDueSaysWhy(t *testing.T) {
	last := now.Add(-7*24*time.Hour - 2*time.Hour)
	src := fmt.Sprintf(`version: 1
rows:
  - {dependency: payment, failure: latency, cadence: weekly, scenario: payment-latency, last: {at: %s, verdict: pass}}
  - {dependency: payment, failure: down, cadence: weekly, scenario: payment-down}
  - {dependency: none, failure: baseline, cadence: daily, scenario: baseline, last: {at: %s, verdict: pass}}
`, last.Format(time.RFC3339), now.Add(-time.Hour).Format(time.RFC3339))
	due := Due(mustParse(t, "m.yaml", []byte(src)), now)
	want := []string{
		"payment/latency: last run " + stamp(last) + ", 7d2h ago; cadence weekly: due after 6d7h", // a week old
		"payment/down: never run (cadence weekly)",                                                // new
	} // baseline ran an hour ago: not due
	var got []string
	for _, d := range due {
		got = append(got, d.Row.ID()+": "+d.Why)
	}
	if !slices.Equal(got, want) {
		t.Errorf("Due:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestParseCadence(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
		err  string
	}{
		{"daily", 24 * time.Hour, ""},
		{"weekly", 168 * time.Hour, ""},
		{"monthly", 720 * time.Hour, ""},
		{"72h", 72 * time.Hour, ""},
		{"72", 0, "bare number"},
		{"0s", 0, "longer than zero"},
		{"-1h", 0, "longer than zero"},
		{"Weekly", 0, "not a cadence"},
	} {
		got, err := ParseCadence(c.in)
		if got != c.want || (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("ParseCadence(%q) = %v, %v; want %v, %q", c.in, got, err, c.want, c.err)
		}
	}
}
