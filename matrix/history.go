package matrix

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// A row flaps when its verdict changed more than FlapChanges times in its
// last FlapRuns runs: with a weekly drill, more than two changes in ten
// weeks is a drill or a system that cannot be trusted either way, whatever
// its last run says. A row fixed once (fail, then pass) or broken once
// changes once; failing, fixed, broken again is two: still not flapping.
const (
	FlapRuns    = 10
	FlapChanges = 2
)

// ReasonFlapping: the row's verdict changed more than FlapChanges times in
// its last FlapRuns runs (its file's git history); a flaky drill cannot
// hide behind its last green run.
const ReasonFlapping = "flapping"

// Run is one run of a row as the matrix's history recorded it: a `last`
// block some commit wrote.
type Run struct {
	// At and Verdict are the `last` block's; Commit is the commit that
	// wrote it ("" for the working tree), Subject its message's first
	// line.
	At      time.Time
	Verdict string
	Commit  string
	Subject string
}

// RowHistory is one row's runs over the file's history, oldest first, and
// what they say.
type RowHistory struct {
	ID string
	// Row is the row as the newest revision has it (Removed: as it was
	// when it was last there).
	Row     Row
	Removed bool
	Runs    []Run
	// Streak is how many of the newest runs share the last one's verdict.
	Streak int
	// Since is the first run of the current streak of verdicts other than
	// pass: the commit where the row (last) broke; nil when its last run
	// passed or it never ran.
	Since *Run
	// LastPass is its newest passing run; nil when none is in the history.
	LastPass *Run
	// Changes counts the verdict changes in its last FlapRuns runs;
	// Flapping is Changes > FlapChanges.
	Changes  int
	Flapping bool
}

// History is the matrix's rows over the file's history.
type History struct {
	Rows []RowHistory
	// Revisions is how many revisions were read; Skipped says, for each
	// revision that could not be read as a matrix (merge-conflict
	// markers committed, an invalid file), its commit and why.
	Revisions int
	Skipped   []string
	// Shallow: the repository is a shallow clone, and the history starts
	// at the oldest commit it has.
	Shallow bool
}

// BuildHistory reads each row's runs from revs (newest first, as
// [Repo.Revisions] gives them) and current (the working tree's matrix, or
// nil): a run is a `last` block that differs from the row's previous one.
// Rows are in the current file's order, then rows no longer there. A
// revision that does not parse is skipped and named in Skipped.
func BuildHistory(revs []Revision, current *Matrix) History {
	h := History{Revisions: len(revs)}
	byID := map[string]*RowHistory{}
	var order []string
	add := func(m *Matrix, commit, subject string) {
		for _, r := range m.rows {
			id := r.ID()
			rh, ok := byID[id]
			if !ok {
				rh = &RowHistory{ID: id}
				byID[id] = rh
				order = append(order, id)
			}
			rh.Row = r.clone()
			if r.Last == nil {
				continue
			}
			if n := len(rh.Runs); n > 0 && rh.Runs[n-1].At.Equal(r.Last.At) && rh.Runs[n-1].Verdict == r.Last.Verdict {
				continue // the same run, carried over
			}
			rh.Runs = append(rh.Runs, Run{At: r.Last.At, Verdict: r.Last.Verdict, Commit: commit, Subject: subject})
		}
	}
	var last *Matrix
	for i := len(revs) - 1; i >= 0; i-- {
		rv := revs[i]
		if rv.Data == nil {
			continue // the file deleted in that commit
		}
		m, err := Parse(rv.Path+"@"+rv.Short(), rv.Data)
		if err != nil {
			why := err.Error()
			if errs := Errors(err); len(errs) > 0 {
				why = errs[0].Error()
				if len(errs) > 1 {
					why += fmt.Sprintf(" (and %d more)", len(errs)-1)
				}
			}
			h.Skipped = append(h.Skipped, rv.Short()+": "+why)
			continue
		}
		add(m, rv.Commit, rv.Subject)
		last = m
	}
	if current != nil {
		add(current, "", "")
		last = current
	}
	present := map[string]bool{}
	if last != nil {
		for _, r := range last.rows {
			present[r.ID()] = true
		}
	}
	// The newest file's rows first, in its order; then the others.
	slices.SortStableFunc(order, func(a, b string) int {
		ia, ib := rowIndex(last, a), rowIndex(last, b)
		switch {
		case ia >= 0 && ib >= 0:
			return ia - ib
		case ia >= 0:
			return -1
		case ib >= 0:
			return 1
		}
		return 0
	})
	for _, id := range order {
		rh := byID[id]
		rh.Removed = !present[id]
		rh.judge()
		h.Rows = append(h.Rows, *rh)
	}
	return h
}

func rowIndex(m *Matrix, id string) int {
	if m == nil {
		return -1
	}
	return slices.IndexFunc(m.rows, func(r Row) bool { return r.ID() == id })
}

// judge sets the streak, since, last pass and flapping of rh.Runs.
func (rh *RowHistory) judge() {
	n := len(rh.Runs)
	if n == 0 {
		return
	}
	last := rh.Runs[n-1].Verdict
	rh.Streak = 1
	for i := n - 2; i >= 0 && rh.Runs[i].Verdict == last; i-- {
		rh.Streak++
	}
	if last != VerdictPass {
		// The first run since the last pass (or ever) that did not pass.
		i := n - 1
		for i > 0 && rh.Runs[i-1].Verdict != VerdictPass {
			i--
		}
		s := rh.Runs[i]
		rh.Since = &s
	}
	for i := n - 1; i >= 0; i-- {
		if rh.Runs[i].Verdict == VerdictPass {
			p := rh.Runs[i]
			rh.LastPass = &p
			break
		}
	}
	window := rh.Runs[max(0, n-FlapRuns):]
	for i := 1; i < len(window); i++ {
		if window[i].Verdict != window[i-1].Verdict {
			rh.Changes++
		}
	}
	rh.Flapping = rh.Changes > FlapChanges
}

// Flapping are the rows of h that flap, as problems for gameday matrix
// check: each with its timeline of the last runs.
func (h History) Flapping() []Problem {
	var out []Problem
	for _, rh := range h.Rows {
		if rh.Flapping && !rh.Removed {
			out = append(out, Problem{Row: rh.Row, Reason: ReasonFlapping,
				Detail: fmt.Sprintf("its verdict changed %d times in its last %d runs (%s): the drill or the system is flaky", rh.Changes, min(len(rh.Runs), FlapRuns), rh.timeline(FlapRuns))})
		}
	}
	return out
}

// timeline is the verdicts of the last n runs, oldest first, a letter each:
// P pass, F fail, E error, I inconclusive.
func (rh RowHistory) timeline(n int) string {
	var b strings.Builder
	for _, r := range rh.Runs[max(0, len(rh.Runs)-n):] {
		b.WriteString(verdictLetter(r.Verdict))
	}
	return b.String()
}

func verdictLetter(v string) string {
	switch v {
	case VerdictPass:
		return "P"
	case VerdictFail:
		return "F"
	case VerdictError:
		return "E"
	case VerdictInconclusive:
		return "I"
	}
	return "?"
}

// RenderHistoryTable writes each row's history as a terminal table at
// time now: how many runs, the last FlapRuns verdicts as letters (oldest
// first), the current streak, since when and which commit it fails, when
// it last passed, and whether it flaps; then what the history could not
// show.
func RenderHistoryTable(w io.Writer, h History, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "ROW\tRUNS\tLAST %d (OLDEST FIRST)\tSTREAK\tFAILING SINCE\tLAST PASS\tFLAPPING\n", FlapRuns)
	for _, rh := range h.Rows {
		v := rh.view(now)
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\n", cell(v.id), len(rh.Runs), v.timeline, v.streak, v.since, v.lastPass, v.flapping)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, l := range h.footer() {
		if _, err := fmt.Fprintln(w, l); err != nil {
			return err
		}
	}
	return nil
}

// RenderHistoryMarkdown writes the same as Markdown, for a pull-request
// comment or a CI step summary.
func RenderHistoryMarkdown(w io.Writer, h History, now time.Time) error {
	var b strings.Builder
	b.WriteString("## Resiliency matrix: history\n\n")
	fmt.Fprintf(&b, "Verdicts of each row's last %d runs, oldest first (P pass, F fail, E error, I inconclusive), from %s of the matrix file, as of %s.\n\n", FlapRuns, plural(h.Revisions, "commit"), stamp(now))
	b.WriteString("| Row | Runs | Last runs | Streak | Failing since | Last pass | Flapping |\n| --- | ---: | --- | --- | --- | --- | --- |\n")
	for _, rh := range h.Rows {
		v := rh.view(now)
		fl := md(v.flapping)
		if rh.Flapping {
			fl = "**" + fl + "**"
		}
		fmt.Fprintf(&b, "| %s | %d | `%s` | %s | %s | %s | %s |\n", md(v.id), len(rh.Runs), orDash(v.timeline), md(v.streak), md(v.since), md(v.lastPass), fl)
	}
	if f := h.footer(); len(f) > 0 {
		b.WriteString("\n")
		for _, l := range f {
			b.WriteString("- " + md(l) + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

type historyView struct {
	id, timeline, streak, since, lastPass, flapping string
}

func (rh RowHistory) view(now time.Time) historyView {
	v := historyView{id: rh.ID, timeline: rh.timeline(FlapRuns), streak: "-", since: "-", lastPass: "never", flapping: "no"}
	if rh.Removed {
		v.id += " (removed)"
	}
	if n := len(rh.Runs); n > 0 {
		v.streak = fmt.Sprintf("%d %s", rh.Streak, rh.Runs[n-1].Verdict)
	} else {
		v.lastPass = "-"
	}
	if rh.Since != nil {
		v.since = stamp(rh.Since.At) + " (" + commitOrTree(rh.Since.Commit) + ")"
	}
	if rh.LastPass != nil {
		v.lastPass = age(now, rh.LastPass.At)
	}
	if rh.Flapping {
		v.flapping = fmt.Sprintf("yes: %d changes in %d runs", rh.Changes, min(len(rh.Runs), FlapRuns))
	}
	return v
}

func commitOrTree(c string) string {
	if c == "" {
		return "working tree"
	}
	return "commit " + short(c)
}

// footer says what the history could not show, a line each: a shallow
// clone's missing past, revisions that do not parse.
func (h History) footer() []string {
	var out []string
	if h.Shallow {
		out = append(out, "This is a shallow clone: the history starts at the oldest commit it has (git fetch --unshallow for the rest).")
	}
	for _, s := range h.Skipped {
		out = append(out, "Skipped commit "+s)
	}
	return out
}
