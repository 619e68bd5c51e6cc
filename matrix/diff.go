package matrix

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// Change is what happened to one row between two matrices.
type Change struct {
	// ID is the row's dependency/failure; Before and After the row in
	// the base and the head (nil where it is not).
	ID            string
	Before, After *Row
	// What are the changes, in words ("verdict pass → fail").
	What []string
	// Worse: a promise whose last run no longer passes (or a new promise
	// whose first run did not), a promise made a known gap, a promise
	// removed. Better: a verdict that came back to pass, a known gap made
	// a promise.
	Worse, Better bool
}

// Kind is "added", "removed" or "changed".
func (c Change) Kind() string {
	switch {
	case c.Before == nil:
		return "added"
	case c.After == nil:
		return "removed"
	}
	return "changed"
}

// row is the change's row as the head has it, else as the base had it.
func (c Change) row() Row {
	if c.After != nil {
		return *c.After
	}
	return *c.Before
}

// Diff compares two matrices row by row (rows are matched by
// dependency/failure): rows added, removed, and changed in a field the
// user writes or in their last run's verdict. A new run with the same
// verdict is not a change. Worst news first: rows that got worse, then
// the rest, each in the head's row order (removed rows last).
func Diff(base, head *Matrix) []Change {
	var out []Change
	bases := map[string]Row{}
	for _, r := range base.rows {
		bases[r.ID()] = r
	}
	seen := map[string]bool{}
	for _, h := range head.rows {
		h := h.clone()
		id := h.ID()
		seen[id] = true
		b, ok := bases[id]
		if !ok {
			c := Change{ID: id, After: &h, What: []string{"added as a " + statusWord(h.Status)}}
			if h.Last != nil {
				c.What = append(c.What, "first run "+h.Last.Verdict)
				c.Worse = h.Status == StatusPromise && h.Last.Verdict != VerdictPass
			}
			out = append(out, c)
			continue
		}
		b = b.clone()
		if c, changed := compareRows(id, &b, &h); changed {
			out = append(out, c)
		}
	}
	for _, b := range base.rows {
		if seen[b.ID()] {
			continue
		}
		b := b.clone()
		out = append(out, Change{ID: b.ID(), Before: &b, What: []string{"removed (was a " + statusWord(b.Status) + ")"}, Worse: b.Status == StatusPromise})
	}
	slices.SortStableFunc(out, func(a, b Change) int {
		switch {
		case a.Worse && !b.Worse:
			return -1
		case b.Worse && !a.Worse:
			return 1
		}
		return 0
	})
	return out
}

func compareRows(id string, b, h *Row) (Change, bool) {
	c := Change{ID: id, Before: b, After: h}
	field := func(name, before, after string) {
		if before != after {
			c.What = append(c.What, fmt.Sprintf("%s %s → %s", name, orNone(before), orNone(after)))
		}
	}
	if b.Status != h.Status {
		c.What = append(c.What, fmt.Sprintf("status %s → %s", statusWord(b.Status), statusWord(h.Status)))
		c.Worse = b.Status == StatusPromise
		c.Better = h.Status == StatusPromise
	}
	field("scenario", b.Scenario, h.Scenario)
	field("expectation", b.Expectation, h.Expectation)
	field("recovery objective", b.RecoveryObjective, h.RecoveryObjective)
	field("cadence", b.Cadence, h.Cadence)
	field("owner", b.Owner, h.Owner)
	field("runbook", b.Runbook, h.Runbook)
	bv, hv := lastVerdict(b), lastVerdict(h)
	if bv != hv {
		c.What = append(c.What, fmt.Sprintf("verdict %s → %s", orNone(bv), orNone(hv)))
		if h.Status == StatusPromise && hv != "" {
			if hv != VerdictPass && (bv == VerdictPass || bv == "") {
				c.Worse = true
			}
			if hv == VerdictPass {
				c.Better = true
			}
		}
	}
	return c, len(c.What) > 0
}

func lastVerdict(r *Row) string {
	if r.Last == nil {
		return ""
	}
	return r.Last.Verdict
}

func statusWord(s string) string { return strings.ReplaceAll(s, "_", " ") }

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// Worse reports whether any change made a row worse.
func Worse(changes []Change) bool {
	return slices.ContainsFunc(changes, func(c Change) bool { return c.Worse })
}

// RenderDiffTable writes the changes as a terminal table: one line per
// row, worst first, and a summary line naming base and head.
func RenderDiffTable(w io.Writer, changes []Change, base, head string) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	if len(changes) > 0 {
		fmt.Fprintln(tw, "ROW\tNEWS\tCHANGE\tSCENARIO")
	}
	for _, c := range changes {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", cell(c.ID), news(c), cell(strings.Join(c.What, "; ")), cell(c.row().Scenario))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, diffSummary(changes, base, head))
	return err
}

// RenderDiffMarkdown writes the changes as GitHub-flavoured Markdown for a
// pull-request comment: a summary, then one table, worst news first, each
// row linking its runbook.
func RenderDiffMarkdown(w io.Writer, changes []Change, base, head string) error {
	var b strings.Builder
	b.WriteString("## Resiliency matrix: what changed\n\n")
	b.WriteString(md(diffSummary(changes, base, head)) + "\n")
	if len(changes) > 0 {
		b.WriteString("\n| Row | News | Change | Scenario | Runbook |\n| --- | --- | --- | --- | --- |\n")
	}
	for _, c := range changes {
		n := news(c)
		if c.Worse {
			n = "**" + n + "**"
		}
		r := c.row()
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", md(c.ID), n, md(strings.Join(c.What, "; ")), code(r.Scenario), link(r.Runbook))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func news(c Change) string {
	switch {
	case c.Worse:
		return "worse"
	case c.Better:
		return "better"
	}
	return c.Kind()
}

func diffSummary(changes []Change, base, head string) string {
	if len(changes) == 0 {
		return fmt.Sprintf("No row changed between %s and %s.", base, head)
	}
	worse := 0
	for _, c := range changes {
		if c.Worse {
			worse++
		}
	}
	s := fmt.Sprintf("%s changed between %s and %s", plural(len(changes), "row"), base, head)
	if worse > 0 {
		s += fmt.Sprintf(", %d worse", worse)
	}
	return s + "."
}
