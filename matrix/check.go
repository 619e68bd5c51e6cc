package matrix

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/gameday-dev/gameday/scenarios"
)

// Reasons a row needs attention, in Problem.Reason.
const (
	// ReasonInvalid: the row cannot be drilled as written: its scenario
	// file is missing or invalid, the scenario proves another row, or its
	// last run is dated in the future.
	ReasonInvalid = "invalid"
	// ReasonFailed: a promise whose last run did not prove it: the
	// verdict was fail, error or inconclusive, or the run passed but
	// recovered later than the row's recovery objective.
	ReasonFailed = "failed"
	// ReasonKnownGapPasses: a known gap whose last run proved it: promote
	// it to a promise.
	ReasonKnownGapPasses = "known gap passes"
	// ReasonOverdue: the drill has not run within its cadence and a
	// tenth (a weekly drill is overdue after 7 days 16.8 hours), or has
	// never run.
	ReasonOverdue = "overdue"
)

// Problem is a row that needs attention, and why.
type Problem struct {
	Row Row
	// Reason is one of the Reason constants.
	Reason string
	// Detail says what was found, in words.
	Detail string
}

// String formats the problem as "row DEPENDENCY/FAILURE (SCENARIO):
// REASON — DETAIL", the line gameday matrix check prints.
func (p Problem) String() string {
	return fmt.Sprintf("row %s (%s): %s — %s", p.Row.ID(), p.Row.Scenario, p.Reason, p.Detail)
}

// Check returns the rows that need attention at time now, in row order;
// within a row: invalid, failed, known gap passes, overdue. A row with
// several problems appears once for each.
//
// A promise fails when its last run's verdict is fail, and also when it is
// error or inconclusive: such a run proved nothing, however recent it is.
// (gameday's commands never record a run whose verdict is error, so its
// row keeps its previous run and goes overdue; an inconclusive run is
// recorded. [Matrix.Apply] takes either.) A passing run whose
// recovered_after exceeds the row's recovery_objective fails the promise
// too (a missing recovered_after is not held against it). Known gaps may
// fail; they are reported when they pass. Every row, known gaps included,
// is overdue when its last run is older than its cadence plus a tenth, or
// when it has never run.
//
// Check looks up each row's scenario (the catalogue, or the file relative
// to the matrix) to report rows it cannot drill as invalid.
func Check(m *Matrix, now time.Time) []Problem {
	var out []Problem
	for _, r := range m.rows {
		out = append(out, m.checkRow(r, now)...)
	}
	return out
}

func (m *Matrix) checkRow(r Row, now time.Time) []Problem {
	var out []Problem
	add := func(reason, detail string) {
		out = append(out, Problem{Row: r.clone(), Reason: reason, Detail: detail})
	}
	if detail := m.invalid(r, now); detail != "" {
		add(ReasonInvalid, detail)
	}
	if r.Last != nil {
		proven, detail := proof(r)
		switch {
		case r.Status == StatusPromise && !proven:
			add(ReasonFailed, detail)
		case r.Status == StatusKnownGap && proven:
			add(ReasonKnownGapPasses, detail+": promote it (status: promise)")
		}
	}
	if late, detail := overdue(r, now); late {
		add(ReasonOverdue, detail)
	}
	return out
}

// invalid says why the row cannot be drilled as written; "" when it can.
func (m *Matrix) invalid(r Row, now time.Time) string {
	var why []string
	sc, err := scenarios.Lookup(m.ScenarioArg(r))
	switch {
	case err != nil:
		why = append(why, strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", "; ")), " "))
	case sc.Matrix.Dependency != r.Dependency || sc.Matrix.Failure != r.Failure:
		why = append(why, fmt.Sprintf("scenario %s proves %s/%s, not %s: fix the row or the scenario's matrix field",
			r.Scenario, sc.Matrix.Dependency, sc.Matrix.Failure, r.ID()))
	}
	if r.Last != nil && r.Last.At.After(now.Add(time.Hour)) {
		why = append(why, fmt.Sprintf("last run dated %s, in the future: fix the clock that wrote it, or the file", stamp(r.Last.At)))
	}
	return strings.Join(why, "; ")
}

// proof reports whether the row's last run proved it, and describes the
// run.
func proof(r Row) (bool, string) {
	l := r.Last
	run := "last run " + stamp(l.At)
	if l.Commit != "" {
		run += " (commit " + l.Commit + ")"
	}
	books := ""
	if t := l.Figures.booksText(); t != "ok" {
		books = "; books: " + t
	}
	switch l.Verdict {
	case VerdictFail:
		return false, run + " failed" + books
	case VerdictError:
		return false, run + " could not be carried out (error): unproven until a run passes" + books
	case VerdictInconclusive:
		return false, run + " was inconclusive (it proved nothing either way: its run.json says why): unproven until a run passes" + books
	}
	if obj, ok := r.objective(); ok && l.Figures.RecoveredAfter != nil && *l.Figures.RecoveredAfter > obj {
		return false, fmt.Sprintf("%s passed but recovered after %s, beyond the %s recovery objective", run, *l.Figures.RecoveredAfter, r.RecoveryObjective)
	}
	return true, run + " passed"
}

// overdue reports whether the row's drill is overdue at now.
func overdue(r Row, now time.Time) (bool, string) {
	cad, ok := r.cadence()
	if !ok {
		return false, ""
	}
	if r.Last == nil {
		return true, fmt.Sprintf("never run (cadence %s): run gameday drill", r.Cadence)
	}
	limit := cad + cad/10
	if age := now.Sub(r.Last.At); age > limit {
		return true, fmt.Sprintf("last run %s, %s ago; cadence %s allows %s", stamp(r.Last.At), span(age), r.Cadence, span(limit))
	}
	return false, ""
}

// DueRow is a row whose drill is due, and why.
type DueRow struct {
	Row Row
	// Why says why it is due, in words: "never run (cadence weekly)", or
	// "last run 2026-11-25 02:00 UTC, 7d ago; cadence weekly: due after 6d7h".
	Why string
}

// Due returns the rows whose drill is due at now, in row order: those that
// never ran, and those whose last run is at least nine tenths of their
// cadence old. The tenth of slack lets a drill scheduled every week at
// the same time run even when last week's run started a little later.
// gameday drill runs these rows; gameday matrix due and drill -dry-run
// list them.
func Due(m *Matrix, now time.Time) []DueRow {
	var out []DueRow
	for _, r := range m.rows {
		cad, ok := r.cadence()
		if !ok {
			continue
		}
		switch after := cad - cad/10; {
		case r.Last == nil:
			out = append(out, DueRow{Row: r.clone(), Why: fmt.Sprintf("never run (cadence %s)", r.Cadence)})
		case now.Sub(r.Last.At) >= after:
			out = append(out, DueRow{Row: r.clone(), Why: fmt.Sprintf("last run %s, %s ago; cadence %s: due after %s",
				stamp(r.Last.At), span(now.Sub(r.Last.At)), r.Cadence, span(after))})
		}
	}
	return out
}

func (r Row) cadence() (time.Duration, bool) {
	d, err := ParseCadence(r.Cadence)
	return d, err == nil
}

func (r Row) objective() (time.Duration, bool) {
	if r.RecoveryObjective == "" {
		return 0, false
	}
	d, err := time.ParseDuration(r.RecoveryObjective)
	return d, err == nil && d > 0
}

// stamp formats a time for people: "2026-11-29 14:00 UTC".
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

// span formats a long duration for people: "8d2h", "5h30m", "12m".
func span(d time.Duration) string {
	if d < 0 {
		// The most negative duration has no positive twin; -d would
		// be d again and the recursion would never end.
		if d == math.MinInt64 {
			d = math.MaxInt64
		} else {
			d = -d
		}
		return "-" + span(d)
	}
	days, hours, mins := int64(d/(24*time.Hour)), int64(d%(24*time.Hour)/time.Hour), int64(d%time.Hour/time.Minute)
	switch {
	case days > 0 && hours > 0:
		return fmt.Sprintf("%dd%dh", days, hours)
	case days > 0:
		return fmt.Sprintf("%dd", days)
	case hours > 0 && mins > 0:
		return fmt.Sprintf("%dh%dm", hours, mins)
	case hours > 0:
		return fmt.Sprintf("%dh", hours)
	case mins > 0:
		return fmt.Sprintf("%dm", mins)
	}
	return "<1m"
}
