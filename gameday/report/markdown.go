package report

import (
	"fmt"
	"io"
	"maps"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gameday-dev/gameday/gameday/runrecord"
)

// Markdown renders the run's summary as GitHub-flavoured Markdown, for a
// pull-request comment or a CI step summary ($GITHUB_STEP_SUMMARY): the
// verdict and why, the broken promises, the books, the breakers, the load
// in one line, and a link to report.html beside it. It is what summary.md
// holds; the same record always gives the same bytes.
func Markdown(w io.Writer, r *runrecord.Record) error {
	return MarkdownLinked(w, r, HTMLFile)
}

// MarkdownLinked is Markdown with the link to the full report pointing at
// href (a path such as "runs/X/report.html", for a summary read somewhere
// other than beside it). href is escaped here.
func MarkdownLinked(w io.Writer, r *runrecord.Record, href string) error {
	if r == nil {
		return errNilRecord
	}
	var b strings.Builder
	writeSummary(&b, r, href)
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("render summary.md: %w", err)
	}
	return nil
}

// The most a summary shows of one free text, and of the notes: the rest
// is in report.html. A pull-request comment holds 65,536 characters.
const (
	mdMaxText  = 500
	mdMaxNotes = 20
)

func writeSummary(b *strings.Builder, r *runrecord.Record, href string) {
	v := verdictOf(r.Verdict)
	fmt.Fprintf(b, "## %s %s: %s\n\n", v.Symbol, v.Word, orDash(md(r.Scenario)))

	exp, inv := tally(r.Expectations), tally(r.InvariantChecks)
	why := md(r.Reason)
	if why == "" {
		switch r.Verdict {
		case runrecord.VerdictPass:
			why = "every promise held"
			if n := exp.notChecked + inv.notChecked; n > 0 {
				why = fmt.Sprintf("every promise checked held; %d could not be checked (below)", n)
			}
		default:
			why = "no reason recorded"
		}
	}
	fmt.Fprintf(b, "**Why:** %s\n\n", why)
	for _, e := range r.EmptyKept {
		fmt.Fprintf(b, "**Warning:** %s; what the system answered them may be what the verdict counts.\n\n", md(e.String()))
	}

	meta := []string{md(r.Matrix.Dependency) + " / " + md(r.Matrix.Failure)}
	if r.File != "" {
		meta = append(meta, md(r.File))
	}
	meta = append(meta, "seed "+strconv.FormatInt(r.Seed, 10),
		fmt.Sprintf("rate ×%s, time ×%s", strconv.FormatFloat(r.RateScale, 'f', -1, 64), strconv.FormatFloat(r.TimeScale, 'f', -1, 64)))
	if r.Environment.Kind != "" {
		meta = append(meta, md(r.Environment.Kind)+" environment")
	}
	if r.System != "" {
		meta = append(meta, "system "+md(r.System))
	}
	if r.CheckoutPrefix != "" {
		meta = append(meta, "checkout ids "+md(r.CheckoutPrefix)+"-…")
	}
	if !r.StartedAt.IsZero() {
		meta = append(meta, "started "+r.StartedAt.UTC().Format("2006-01-02 15:04:05 UTC"))
	}
	fmt.Fprintf(b, "%s · full report: [%s](%s)\n\n", strings.Join(meta, " · "), md(href), linkPath(href))

	fmt.Fprintf(b, "**Load:** %s\n\n", loadLine(r))
	fmt.Fprintf(b, "**Promises:** %s; %s.\n\n", exp.phrase("expectation"), inv.phrase("invariant"))

	writeBroken(b, r)
	writeBooks(b, r)
	writeShops(b, r)
	writeBreakers(b, r)
	writeRequests(b, r)
	writeNotes(b, r)
}

// count is how a list of promises went.
type count struct{ total, held, broken, notChecked, unjudged int }

func tally(rs []runrecord.ExpectationResult) count {
	var c count
	for _, e := range rs {
		c.total++
		switch {
		case e.NotChecked:
			c.notChecked++
		case e.Unjudged != "":
			c.unjudged++
		case e.Held:
			c.held++
		default:
			c.broken++
		}
	}
	return c
}

// phrase is "5 of 6 expectations held, 1 not checked".
func (c count) phrase(what string) string {
	if c.total == 0 {
		return "no " + what + " checked"
	}
	checked := c.total - c.notChecked - c.unjudged
	s := fmt.Sprintf("%d of %d %ss held", c.held, checked, what)
	if checked == 1 {
		s = fmt.Sprintf("%d of 1 %s held", c.held, what)
	}
	if c.notChecked > 0 {
		s += fmt.Sprintf(", %d not checked", c.notChecked)
	}
	if c.unjudged > 0 {
		s += fmt.Sprintf(", %d not judged", c.unjudged)
	}
	return s
}

// loadLine is the load in one line: arrivals against the plan, latency,
// how late the runner started them, how long, and the outcomes.
func loadLine(r *runrecord.Record) string {
	l := r.Load
	if l.Scheduled == 0 && l.Started == 0 && l.DurationMS == 0 {
		return "none was driven."
	}
	parts := []string{fmt.Sprintf("%d arrivals scheduled, %d started, %d dropped", l.Scheduled, l.Started, l.Dropped)}
	p95 := "checkout p95 " + ms(l.CheckoutP95MS) + " ms"
	if l.CheckoutP95DuringMS != nil {
		p95 += " (" + ms(*l.CheckoutP95DuringMS) + " ms during faults)"
	}
	parts = append(parts, p95, "late starts p99 "+ms(l.LateP99MS)+" ms", "over "+seconds(l.DurationMS))
	if n := len(l.Shards); n > 0 {
		parts = append(parts, fmt.Sprintf("from %d workers", n))
	}
	var outs []string
	for _, n := range outcomesByCount(r.Outcomes) {
		outs = append(outs, fmt.Sprintf("%s %d", md(n), r.Outcomes[n]))
	}
	if len(outs) > 0 {
		parts = append(parts, strings.Join(outs, ", "))
	}
	if v := r.VisitsText(); v != "" {
		parts = append(parts, "visits: "+md(v))
	}
	return strings.Join(parts, " · ") + "."
}

func writeBroken(b *strings.Builder, r *runrecord.Record) {
	var broken, notChecked []runrecord.ExpectationResult
	for _, e := range r.Expectations {
		switch {
		case e.NotChecked:
			notChecked = append(notChecked, e)
		case !e.Held:
			broken = append(broken, e)
		}
	}
	for _, e := range r.InvariantChecks {
		if !e.Held && !e.NotChecked && e.Unjudged == "" {
			broken = append(broken, e)
		}
	}
	fmt.Fprintf(b, "### Broken promises (%d)\n\n", len(broken))
	switch {
	case len(broken) == 0 && len(r.Expectations)+len(r.InvariantChecks) == 0:
		b.WriteString("None: no promise was checked.\n\n")
	case len(broken) == 0:
		b.WriteString("None.\n\n")
	default:
		if r.Verdict == runrecord.VerdictInconclusive {
			b.WriteString("The run is inconclusive: these were seen, but do not fail it.\n\n")
		}
		b.WriteString("| Promise | Window | Observed |\n| --- | --- | --- |\n")
		for _, e := range broken {
			fmt.Fprintf(b, "| %s | %s | %s |\n", orDash(md(e.Promise)), orDash(md(e.Window)), orDash(md(e.Observed+e.ExamplesText())))
		}
		b.WriteString("\n")
	}
	if len(notChecked) > 0 {
		b.WriteString("Expectations not checked:\n\n")
		for _, e := range notChecked {
			fmt.Fprintf(b, "- %s — needs %s\n", orDash(md(e.Promise)), orDash(md(e.Needs)))
		}
		b.WriteString("\n")
	}
}

// invariantOf names the invariant a check is about: its Invariant field,
// or for records older than that field, the name its promise starts with
// ("lost units is at most 0" is lost_units).
func invariantOf(e runrecord.ExpectationResult, names map[string]int64) string {
	if e.Invariant != "" {
		return e.Invariant
	}
	if name, _, ok := strings.Cut(e.Promise, " is at most "); ok {
		name = strings.ReplaceAll(name, " ", "_")
		if _, known := names[name]; known {
			return name
		}
	}
	return ""
}

// writeBooks is the invariants, each with its count, those that were not
// checked with what they need, a count no promise covered, and the
// ledger and the charges as reconciled.
func writeBooks(b *strings.Builder, r *runrecord.Record) {
	b.WriteString("### Books\n\n")
	counts := r.Invariants.ByName()
	covered := map[string]bool{}
	type row struct{ promise, count, result string }
	var rows []row
	for _, e := range r.InvariantChecks {
		covered[invariantOf(e, counts)] = true
		switch {
		case e.NotChecked:
			rows = append(rows, row{md(e.Promise), "–", "– not checked: needs " + orDash(md(e.Needs))})
		case e.Unjudged != "":
			rows = append(rows, row{md(e.Promise), md(e.Observed + e.ExamplesText()), "– not judged: the books were " + md(e.Unjudged)})
		case e.Held:
			rows = append(rows, row{md(e.Promise), md(e.Observed), "✓ held"})
		default:
			rows = append(rows, row{md(e.Promise), md(e.Observed + e.ExamplesText()), "✗ **broken**"})
		}
	}
	var extra []string
	for n, c := range counts {
		if c != 0 && !covered[n] {
			extra = append(extra, n)
		}
	}
	sort.Strings(extra)
	for _, n := range extra {
		rows = append(rows, row{md(strings.ReplaceAll(n, "_", " ")), strconv.FormatInt(counts[n], 10), "counted; no promise about it in this run"})
	}
	if len(rows) == 0 {
		b.WriteString("No invariant was checked.\n\n")
	} else {
		b.WriteString("| Invariant | Count | Result |\n| --- | ---: | --- |\n")
		for _, x := range rows {
			fmt.Fprintf(b, "| %s | %s | %s |\n", orDash(x.promise), orDash(x.count), x.result)
		}
		b.WriteString("\n")
	}
	l, c := r.Ledger, r.Charges
	if l != (runrecord.LedgerSummary{}) || c != (runrecord.ChargeSummary{}) {
		fmt.Fprintf(b, "Stock %d initial, %d available, %d reserved, %d sold · %d orders · charges %d approved, %d declined, %d voided.\n\n",
			l.Initial, l.Available, l.Reserved, l.Sold, l.Orders, c.Approved, c.Declined, c.Voided)
	}
}

// writeShops is, in a sale across shops, each shop's outcomes and books
// on its pod, and each move of a shop between pods.
func writeShops(b *strings.Builder, r *runrecord.Record) {
	if len(r.Shops) > 0 {
		b.WriteString("### Shops\n\n| Shop | Pod | Confirmed | Refused | Sold / initial | Invariants broken |\n| --- | --- | ---: | ---: | ---: | --- |\n")
		for _, sh := range r.Shops {
			counts := sh.Invariants.ByName()
			var broken []string
			for _, n := range slices.Sorted(maps.Keys(counts)) {
				if c := counts[n]; c != 0 && n != "dropped" {
					broken = append(broken, fmt.Sprintf("%s %d", strings.ReplaceAll(n, "_", " "), c))
				}
			}
			refused := sh.Outcomes["unavailable"] + sh.Outcomes["error"] + sh.Outcomes["gave_up"] + sh.Outcomes["too_late"]
			fmt.Fprintf(b, "| %s | %s | %d | %d | %d / %d | %s |\n", md(sh.Name), orDash(md(sh.Pod)), sh.Outcomes["confirmed"],
				refused, sh.Ledger.Sold, sh.Ledger.Initial, orDash(strings.Join(broken, ", ")))
		}
		b.WriteString("\n")
	}
	for _, m := range r.Moves {
		outcome := m.Outcome
		if outcome == "" {
			outcome = "never began"
		}
		fmt.Fprintf(b, "Move %s: %s from %s to %s at %s s: %s, %d units, read-only %s ms.", md(m.Name), md(m.Shop), md(m.From), md(m.To),
			strconv.FormatFloat(m.AtMS/1000, 'f', 1, 64), md(strings.ReplaceAll(outcome, "_", " ")), m.Units, strconv.FormatFloat(m.ReadOnlyMS, 'f', 0, 64))
		if m.Error != "" {
			fmt.Fprintf(b, " %s", md(m.Error))
		}
		b.WriteString("\n\n")
	}
}

// breakerFigures is one breaker over the run, from its transitions.
type breakerFigures struct {
	opens, closes int
	openMS        int64  // time not closed: open or half-open
	last          string // its state at the end
}

// breakerFiguresOf counts a breaker's openings and closings and the time
// from each opening to the next closing (open and half-open alike: a
// half-open breaker lets only a trial call through), up to end or the last
// transition when that is later. It starts closed.
func breakerFiguresOf(tr []runrecord.Transition, end int64) breakerFigures {
	tr = slices.Clone(tr)
	sort.SliceStable(tr, func(i, j int) bool { return tr[i].AtMS < tr[j].AtMS })
	f := breakerFigures{last: "closed"}
	if n := len(tr); n > 0 && tr[n-1].AtMS > end {
		end = tr[n-1].AtMS
	}
	var since int64
	for _, t := range tr {
		at := max(t.AtMS, 0)
		if f.last != "closed" {
			f.openMS += at - since
		}
		switch {
		case t.State == "open":
			f.opens++
		case t.State == "closed" && f.last != "closed":
			f.closes++
		}
		f.last, since = t.State, at
	}
	if f.last != "closed" {
		f.openMS += max(end-since, 0)
	}
	return f
}

func writeBreakers(b *strings.Builder, r *runrecord.Record) {
	b.WriteString("### Breakers\n\n")
	if len(r.Breakers) == 0 {
		b.WriteString("No breaker was recorded.\n\n")
		return
	}
	deps := make([]string, 0, len(r.Breakers))
	for d := range r.Breakers {
		deps = append(deps, d)
	}
	sort.Strings(deps)
	b.WriteString("| Dependency | Opens | Closes | Time open | Opened after its fault began | Closed after its fault ended | At the end |\n")
	b.WriteString("| --- | ---: | ---: | ---: | ---: | ---: | --- |\n")
	for _, d := range deps {
		br := r.Breakers[d]
		f := breakerFiguresOf(br.Transitions, r.Load.DurationMS)
		last := md(f.last)
		if f.last != "closed" {
			last = "**" + last + "**"
		}
		fmt.Fprintf(b, "| %s | %d | %d | %s | %s | %s | %s |\n",
			orDash(md(d)), f.opens, f.closes, seconds(f.openMS), optMS(br.OpenedAfterMS), optMS(br.ClosedAfterMS), last)
	}
	b.WriteString("\n")
}

// writeNotes lists what the operator must know: faults that were not
// applied, the environment's notes, the run's notes and answers no rule
// understood, at most mdMaxNotes of them.
// writeRequests lists the kinds of request each relayed dependency
// received, how many and in which seconds of the run; nothing when no
// proxy had a relay behind it.
func writeRequests(b *strings.Builder, r *runrecord.Record) {
	if len(r.Requests) == 0 && r.RequestsError == "" {
		return
	}
	b.WriteString("### Requests the dependencies received\n\n")
	if r.RequestsError != "" {
		fmt.Fprintf(b, "Not all could be read: %s\n\n", md(r.RequestsError))
	}
	b.WriteString("| Dependency | Kind | Requests | Seen |\n| --- | --- | ---: | --- |\n")
	for _, d := range r.Requests {
		for _, k := range d.Kinds {
			fmt.Fprintf(b, "| %s | `%s` | %d | %s |\n", md(d.Dependency), strings.ReplaceAll(k.Kind, "|", "\\|"), k.Count, k.Span())
		}
	}
	b.WriteString("\n")
}

func writeNotes(b *strings.Builder, r *runrecord.Record) {
	var notes []string
	for _, f := range r.Faults {
		if f.Error != "" {
			notes = append(notes, fmt.Sprintf("fault %s (%s %s) was not applied: %s", md(f.Name), md(f.Target), md(f.Kind), md(f.Error)))
		}
		if f.Hits != nil {
			notes = append(notes, fmt.Sprintf("fault %s (%s %s) %s", md(f.Name), md(f.Target), md(f.Kind), md(f.Hits.Text())))
		}
		if f.Cache != nil {
			notes = append(notes, fmt.Sprintf("fault %s (%s %s) %s", md(f.Name), md(f.Target), md(f.Kind), md(f.Cache.Text())))
		}
		if f.LiftError != "" {
			notes = append(notes, fmt.Sprintf("fault %s (%s %s) could not be lifted at its time and stayed in place (a lift begun while the load ran stops it): %s", md(f.Name), md(f.Target), md(f.Kind), md(f.LiftError)))
		}
	}
	for _, n := range r.Environment.Notes {
		notes = append(notes, "environment: "+md(n))
	}
	for _, n := range r.Notes {
		notes = append(notes, md(n))
	}
	for _, u := range r.Unmatched {
		step := md(u.Step)
		if u.Request != "" {
			step += " (" + md(u.Request) + ")"
		}
		notes = append(notes, fmt.Sprintf("%d answers no rule understood (counted as errors): %s status %d", u.Count, step, u.Code))
	}
	for _, e := range r.TransportErrors {
		notes = append(notes, fmt.Sprintf("%d requests got no answer: %s (e.g. %s)", e.Count, md(e.Kind), md(e.Sample)))
	}
	if len(notes) == 0 {
		return
	}
	b.WriteString("### Notes\n\n")
	for i, n := range notes {
		if i == mdMaxNotes {
			fmt.Fprintf(b, "- … and %d more in the full report\n", len(notes)-mdMaxNotes)
			break
		}
		fmt.Fprintf(b, "- %s\n", orDash(n))
	}
	b.WriteString("\n")
}

// mdEscaper escapes what Markdown (GitHub-flavoured) would read as markup
// inside a line: table pipes, code spans, emphasis, strikethrough, links,
// HTML, entities and GitHub's $math$.
var mdEscaper = strings.NewReplacer(
	"\\", "\\\\", "|", "\\|", "`", "\\`", "*", "\\*", "_", "\\_", "~", "\\~",
	"[", "\\[", "]", "\\]", "<", "&lt;", ">", "&gt;", "&", "&amp;", "$", "\\$",
)

// md makes text from the run safe in a Markdown table cell or list item:
// one line (every run of white space one space), control characters
// replaced, at most mdMaxText characters, markup escaped, and a start
// that would begin a heading, quote, list or rule escaped.
func md(s string) string {
	s = strings.Map(func(c rune) rune {
		if unicode.IsControl(c) && !unicode.IsSpace(c) {
			return utf8.RuneError
		}
		return c
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > mdMaxText {
		s = string([]rune(s)[:mdMaxText]) + "…"
	}
	s = mdEscaper.Replace(s)
	if s != "" && strings.ContainsRune("#+-=", rune(s[0])) {
		s = "\\" + s
	}
	// "1. " or "1) " would begin an ordered list.
	if i := strings.IndexFunc(s, func(c rune) bool { return c < '0' || c > '9' }); i > 0 && (s[i] == '.' || s[i] == ')') && (i+1 == len(s) || s[i+1] == ' ') {
		s = s[:i] + "\\" + s[i:]
	}
	return s
}

// linkPath is href as a Markdown link destination: percent-encoded, so
// that spaces, parentheses and markup cannot end or change the link, and
// "./" before a first segment with a colon, which would read as a scheme.
func linkPath(href string) string {
	if href == "" {
		href = HTMLFile
	}
	p := (&url.URL{Path: href}).EscapedPath()
	if first, _, _ := strings.Cut(p, "/"); strings.Contains(first, ":") {
		p = "./" + p
	}
	return p
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}
