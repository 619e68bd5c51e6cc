package matrix

import (
	"fmt"
	"io"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"
)

// view is one row as the renderings show it.
type view struct {
	row       Row
	status    string // "promise", "known gap"
	last      string // "2026-11-29 14:00 UTC", or "never"
	age       string // "2d19h ago", or ""
	verdict   string // "pass", or "-"
	opened    string
	recovered string
	p95       string
	books     string // "ok", or the counts above zero; and those not checked
	check     string // "ok", or the reasons
}

// views are the rows as the renderings show them, with what Check says
// of them at now and the problems more, found outside the file (its
// history: flapping rows).
func (m *Matrix) views(now time.Time, more []Problem) ([]view, []Problem) {
	problems := append(Check(m, now), more...)
	out := make([]view, len(m.rows))
	for i, r := range m.rows {
		v := view{row: r, status: strings.ReplaceAll(r.Status, "_", " "), last: "never", verdict: "-", opened: "-", recovered: "-", p95: "-", books: "-", check: "ok"}
		if l := r.Last; l != nil {
			v.last, v.age, v.verdict = stamp(l.At), age(now, l.At), l.Verdict
			v.opened, v.recovered, v.p95 = durOrDash(l.Figures.BreakerOpenedAfter), durOrDash(l.Figures.RecoveredAfter), durOrDash(l.Figures.CheckoutP95During)
			v.books = l.Figures.booksText()
		}
		var reasons []string
		for _, p := range problems {
			if p.Row.Line == r.Line && p.Row.ID() == r.ID() {
				reasons = append(reasons, p.Reason)
			}
		}
		if len(reasons) > 0 {
			v.check = strings.Join(reasons, ", ")
		}
		out[i] = v
	}
	return out, problems
}

// age says how long ago t was; a time after now (a wrong clock, or a
// hand-edited file, which Check reports) is "in the future", however far.
func age(now, t time.Time) string {
	if t.After(now) {
		return "in the future"
	}
	return span(now.Sub(t)) + " ago"
}

func durOrDash(d *time.Duration) string {
	if d == nil {
		return "-"
	}
	return d.String()
}

// summary is the line under (or over) the table.
func summary(rows, problems int, problemRows int) string {
	switch {
	case rows == 0:
		return "no rows"
	case problems == 0:
		return plural(rows, "row") + ", all proven on schedule"
	}
	verb := "need"
	if problemRows == 1 {
		verb = "needs"
	}
	return fmt.Sprintf("%s, %d %s attention (%s)", plural(rows, "row"), problemRows, verb, plural(problems, "problem"))
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func problemRows(problems []Problem) int {
	seen := map[int]bool{}
	for _, p := range problems {
		seen[p.Row.Line] = true
	}
	return len(seen)
}

// RenderTable writes the matrix as a terminal table at time now: a line
// per row with its status, cadence, last run, verdict, figures, books and
// what check says; then every problem, and a summary line. more are
// problems found outside the file (History.Flapping), shown with check's.
func RenderTable(w io.Writer, m *Matrix, now time.Time, more ...Problem) error {
	views, problems := m.views(now, more)
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "ROW\tSTATUS\tSCENARIO\tCADENCE\tLAST RUN\tVERDICT\tOPENED\tRECOVERED / OBJECTIVE\tP95 DURING\tBOOKS\tCHECK")
	for _, v := range views {
		last := v.last
		if v.age != "" {
			last += " (" + v.age + ")"
		}
		rec := v.recovered
		if v.row.RecoveryObjective != "" {
			rec += " / " + v.row.RecoveryObjective
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", cell(v.row.ID()), v.status, cell(v.row.Scenario), cell(v.row.Cadence),
			last, v.verdict, v.opened, rec, v.p95, v.books, v.check)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var b strings.Builder
	if len(problems) > 0 {
		b.WriteString("\n")
		for _, p := range problems {
			b.WriteString(cell(p.String()) + "\n")
		}
	}
	b.WriteString("\n" + summary(len(views), len(problems), problemRows(problems)) + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// cell keeps a value on one line of a terminal table.
func cell(s string) string {
	return strings.NewReplacer("\t", " ", "\r", " ", "\n", " ").Replace(s)
}

// RenderMarkdown writes the matrix at time now as GitHub-flavoured
// Markdown for a pull-request comment: a summary, a table with every row's
// expectation, objective, last run, figures, owner and runbook, and the
// problems under it.
func RenderMarkdown(w io.Writer, m *Matrix, now time.Time, more ...Problem) error {
	views, problems := m.views(now, more)
	var b strings.Builder
	b.WriteString("## Resiliency matrix\n\n")
	fmt.Fprintf(&b, "%s, as of %s.\n\n", summary(len(views), len(problems), problemRows(problems)), stamp(now))
	if len(views) > 0 {
		b.WriteString("| Row | Status | Shoppers experience | Recovery objective | Last run | Verdict | Figures | Books | Check | Owner | Runbook |\n")
		b.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	}
	for _, v := range views {
		r := v.row
		last := v.last
		if r.Last != nil && r.Last.Commit != "" {
			last += "<br>commit " + code(r.Last.Commit)
		}
		var figs []string
		if v.opened != "-" {
			figs = append(figs, "breaker opened after "+v.opened)
		}
		if v.recovered != "-" {
			figs = append(figs, "recovered after "+v.recovered)
		}
		if v.p95 != "-" {
			figs = append(figs, "p95 "+v.p95+" during the fault")
		}
		if len(figs) == 0 {
			figs = []string{"-"}
		}
		check := v.check
		if check != "ok" {
			check = "**" + check + "**"
		}
		verdict := v.verdict
		if verdict != "-" && verdict != VerdictPass {
			verdict = "**" + verdict + "**"
		}
		fmt.Fprintf(&b, "| %s<br>%s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			md(r.ID()), code(r.Scenario), v.status, orDash(md(r.Expectation)), orDash(md(r.RecoveryObjective)), last, verdict,
			md(strings.Join(figs, ", ")), md(v.books), check, orDash(md(r.Owner)), link(r.Runbook))
	}
	if len(problems) > 0 {
		b.WriteString("\n### Needs attention\n\n")
		for _, p := range problems {
			fmt.Fprintf(&b, "- **%s** (%s): %s — %s\n", md(p.Row.ID()), code(p.Row.Scenario), p.Reason, md(p.Detail))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// md escapes text for a Markdown table cell: one line, no pipes, no HTML.
func md(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.NewReplacer("\\", "\\\\", "|", "\\|", "<", "&lt;", ">", "&gt;", "*", "\\*", "_", "\\_", "`", "\\`", "[", "\\[", "]", "\\]").Replace(s)
}

// code writes s as inline code, or escaped text when it holds a backtick.
func code(s string) string {
	if s == "" {
		return "-"
	}
	if strings.ContainsAny(s, "`|\r\n") {
		return md(s)
	}
	return "`" + s + "`"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// link writes a runbook: a link when it is an http(s) URL, text otherwise.
func link(s string) string {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.ContainsAny(s, " \t\r\n<>") {
		return orDash(md(s))
	}
	return "[runbook](" + strings.NewReplacer("(", "%28", ")", "%29", "|", "%7C").Replace(s) + ")"
}
