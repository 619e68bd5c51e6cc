package matrix

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/gameday-dev/gameday/internal/strictyaml"
)

// Result is what one drill proved; the runner fills it from run.json (see
// [FromRecord]).
type Result struct {
	// Scenario is the scenario that ran: a catalogue name (a "catalogue:"
	// prefix, as in run.json's file, is allowed), or the path of its file
	// as given to gameday run, relative to the current directory.
	Scenario string
	// At is when the run started; it is written in UTC, to the second.
	At time.Time
	// Commit is the commit of the system under test; "" when unknown.
	Commit string
	// Verdict is pass, fail, error or inconclusive.
	Verdict string
	// Figures are what the run measured; durations are rounded to 10ms.
	Figures Figures
}

// Rounding is the precision of the durations in the file.
const Rounding = 10 * time.Millisecond

// Apply sets the `last` block of every row whose scenario is r.Scenario to
// r: rows naming the same catalogue scenario, or a path to the same file
// (a row's path is relative to the matrix file's directory). It reports
// whether the text changed: a row whose `last` already says the same (once
// r is rounded to the file's precision) is left alone, so applying the
// same result twice changes nothing the second time.
//
// Only the `last` blocks change: the text is edited in place, and every
// other byte (comments, blank lines, quoting, key order, the rows' order)
// stays as it was. The line comment on a `last:` key is kept; comments
// inside a `last` block are gameday's and are not. A row written in YAML's
// flow style ({...}) cannot be edited in place; then the whole file is
// written out again by the YAML library, which keeps comments but not
// layout. Either way the new text is parsed again and must hold exactly the
// old rows with the new `last`, or Apply fails and m is unchanged.
//
// A scenario that no row names gives an error wrapping [ErrNoRow] and
// listing the scenarios the rows do name.
func (m *Matrix) Apply(r Result) (changed bool, err error) {
	last, err := r.last()
	if err != nil {
		return false, err
	}
	var idx []int
	for i, row := range m.rows {
		if m.matches(row, r.Scenario) {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		known := "the matrix has no rows"
		if names := m.scenarioNames(); len(names) > 0 {
			known = "its rows name " + strings.Join(names, ", ")
		}
		return false, fmt.Errorf("apply %s to %s: %w (%s)", strictyaml.Quote(r.Scenario), m.file, ErrNoRow, known)
	}
	cur := m
	for _, i := range idx {
		if cur.rows[i].Last.equal(&last) {
			continue
		}
		next, err := cur.withLast(i, last)
		if err != nil {
			return false, err
		}
		cur = next
	}
	if cur == m {
		return false, nil
	}
	*m = *cur
	return true, nil
}

// scenarioNames lists the scenarios the rows name, each once, in order.
func (m *Matrix) scenarioNames() []string {
	var out []string
	for _, r := range m.rows {
		if !slices.Contains(out, r.Scenario) {
			out = append(out, r.Scenario)
		}
	}
	return out
}

// last checks r and returns it as the file will hold it.
func (r Result) last() (Last, error) {
	fail := func(format string, args ...any) (Last, error) {
		return Last{}, fmt.Errorf("apply result of %s: %s", strictyaml.Quote(r.Scenario), fmt.Sprintf(format, args...))
	}
	switch {
	case strings.TrimSpace(r.Scenario) == "":
		return Last{}, errors.New("apply result: it names no scenario")
	case r.At.IsZero():
		return fail("no start time")
	case r.At.UTC().Year() < 1 || r.At.UTC().Year() > 9999:
		return fail("start time %s out of range", r.At)
	case !slices.Contains(verdicts, r.Verdict):
		return fail("verdict %s: want pass, fail, error or inconclusive", strictyaml.Quote(r.Verdict))
	case len(r.Commit) > maxNameLen || !utf8.ValidString(r.Commit) || strings.ContainsFunc(r.Commit, unicode.IsControl):
		return fail("commit %s is not a commit", strictyaml.Quote(r.Commit))
	}
	f := r.Figures.clone()
	for _, d := range []*time.Duration{f.BreakerOpenedAfter, f.RecoveredAfter, f.CheckoutP95During} {
		if d == nil {
			continue
		}
		if *d < 0 {
			return fail("negative duration %s in figures", *d)
		}
		*d = d.Round(Rounding)
	}
	for _, b := range f.books() {
		if b.count < 0 {
			return fail("negative count %s: %d", b.name, b.count)
		}
	}
	var nc []string
	for _, name := range f.NotChecked {
		if !slices.Contains(invariantNames, name) {
			return fail("not_checked: %s is not an invariant (known: %s)", strictyaml.Quote(name), strings.Join(invariantNames, ", "))
		}
	}
	for _, name := range invariantNames {
		if slices.Contains(f.NotChecked, name) {
			nc = append(nc, name)
			*f.counts()[name] = 0 // not judged: no count
		}
	}
	f.NotChecked = nc
	return Last{At: r.At.UTC().Truncate(time.Second), Commit: r.Commit, Verdict: r.Verdict, Figures: f}, nil
}

// withLast returns a new Matrix whose row i has last, leaving m alone.
func (m *Matrix) withLast(i int, last Last) (*Matrix, error) {
	var errSplice error
	if text, ok := m.spliceLast(i, last); ok {
		nm, err := m.reparse(text, i, last)
		if err == nil {
			return nm, nil
		}
		errSplice = err
	}
	text, err := m.encodeWithLast(i, last)
	if err == nil {
		var nm *Matrix
		if nm, err = m.reparse(text, i, last); err == nil {
			return nm, nil
		}
	}
	return nil, fmt.Errorf("update %s: rows[%d].last (line %d): cannot write the row back: %w", m.file, i, m.rows[i].Line, errors.Join(errSplice, err))
}

// reparse parses text and checks that it holds m's rows with row i's last
// set to last, and nothing else changed.
func (m *Matrix) reparse(text []byte, i int, last Last) (*Matrix, error) {
	nm, err := Parse(m.file, text)
	if err != nil {
		return nil, err
	}
	nm.dir = m.dir
	if len(nm.rows) != len(m.rows) {
		return nil, fmt.Errorf("the edit left %d rows, want %d", len(nm.rows), len(m.rows))
	}
	for j, want := range m.rows {
		if j == i {
			want.Last = &last
		}
		if !rowEqual(want, nm.rows[j]) {
			return nil, fmt.Errorf("the edit changed rows[%d]", j)
		}
	}
	return nm, nil
}

// spliceLast edits the text of row i so that its `last` block says last,
// touching no other line: it replaces the block's lines, or inserts them
// after the row's last line. ok is false when the row's layout does not
// allow an edit by lines (flow style, unusual line breaks).
func (m *Matrix) spliceLast(i int, last Last) (text []byte, ok bool) {
	row := m.rowNodes[i]
	if row.Kind != yaml.MappingNode || row.Style&yaml.FlowStyle != 0 || len(row.Content) == 0 || oddLineBreaks(m.data) {
		return nil, false
	}
	lines := strings.Split(string(m.data), "\n")
	keyCol := row.Content[0].Column - 1
	var k, v *yaml.Node
	for j := 0; j+1 < len(row.Content); j += 2 {
		if row.Content[j].Value == "last" {
			k, v = row.Content[j], row.Content[j+1]
		}
		if row.Content[j].Column-1 != keyCol || !blockPrefix(lines, row.Content[j]) {
			return nil, false
		}
	}
	eol := ""
	if strings.HasSuffix(lines[row.Line-1], "\r") {
		eol = "\r"
	}
	step := m.indentStep()
	switch {
	case k == nil:
		end := blockEnd(lines, row.Line-1, keyCol)
		block := append([]string{strings.Repeat(" ", keyCol) + "last:"}, renderLast(last, keyCol+step, step)...)
		return splice(lines, end+1, end+1, block, eol), true
	case v.Kind == yaml.MappingNode && v.Style&yaml.FlowStyle == 0 && v.Line > k.Line:
		end := blockEnd(lines, k.Line-1, keyCol+1)
		if s := v.Column - k.Column; s > 0 {
			step = s
		}
		return splice(lines, k.Line, end+1, renderLast(last, keyCol+step, step), eol), true
	case strictyaml.IsNull(v):
		keyLine, ok := dropNull(lines[k.Line-1], k, v)
		if !ok {
			return nil, false
		}
		block := append([]string{strings.TrimSuffix(keyLine, "\r")}, renderLast(last, keyCol+step, step)...)
		return splice(lines, k.Line-1, k.Line, block, eol), true
	}
	return nil, false
}

// oddLineBreaks reports line breaks that YAML counts and a split on '\n'
// does not: a lone '\r', NEL, LS, PS.
func oddLineBreaks(data []byte) bool {
	if bytes.Contains(data, []byte("\xc2\x85")) || bytes.Contains(data, []byte("\xe2\x80\xa8")) || bytes.Contains(data, []byte("\xe2\x80\xa9")) {
		return true
	}
	for i, b := range data {
		if b == '\r' && (i+1 == len(data) || data[i+1] != '\n') {
			return true
		}
	}
	return false
}

// blockPrefix reports whether a key starts its line after spaces and list
// dashes only, so that its column is also its byte offset.
func blockPrefix(lines []string, k *yaml.Node) bool {
	if k.Line < 1 || k.Line > len(lines) {
		return false
	}
	l := lines[k.Line-1]
	return k.Column-1 <= len(l) && strings.Trim(l[:k.Column-1], " -") == ""
}

// blockEnd returns the index of the last line of the block that starts on
// line start (0-based): the last line after it, before the first line
// indented less than limit, that is neither blank nor only a comment.
// Comment lines after that line are left to what follows.
func blockEnd(lines []string, start, limit int) int {
	end := start
	for j := start + 1; j < len(lines); j++ {
		l := strings.TrimRight(lines[j], "\r")
		t := strings.TrimLeft(l, " ")
		if t == "" || t[0] == '#' {
			continue
		}
		if len(l)-len(t) < limit {
			break
		}
		end = j
	}
	return end
}

// dropNull returns a `last: ~` line without its null value, keeping the
// spacing and the comment that follow it.
func dropNull(line string, k, v *yaml.Node) (string, bool) {
	if v.Value == "" {
		return line, v.Line == 0 || v.Line == k.Line // "last:" and maybe a comment
	}
	off := v.Column - 1
	if v.Line != k.Line || off < k.Column || off+len(v.Value) > len(line) || line[off:off+len(v.Value)] != v.Value ||
		!strings.HasSuffix(strings.TrimRight(line[:off], " \t"), ":") {
		return "", false
	}
	return strings.TrimRight(line[:off], " \t") + line[off+len(v.Value):], true
}

// splice replaces lines[from:to] by repl, each line ending as eol says.
func splice(lines []string, from, to int, repl []string, eol string) []byte {
	out := make([]string, 0, len(lines)+len(repl))
	out = append(out, lines[:from]...)
	for _, r := range repl {
		out = append(out, r+eol)
	}
	out = append(out, lines[to:]...)
	return []byte(strings.Join(out, "\n"))
}

// indentStep is how far the file indents a nested block: as in an
// existing `last` block, else as the rows under "rows:", else 2.
func (m *Matrix) indentStep() int {
	for _, rn := range m.rowNodes {
		for j := 0; j+1 < len(rn.Content); j += 2 {
			k, v := rn.Content[j], rn.Content[j+1]
			if k.Value == "last" && v.Kind == yaml.MappingNode && v.Style&yaml.FlowStyle == 0 && v.Column > k.Column && v.Column-k.Column <= 8 {
				return v.Column - k.Column
			}
		}
	}
	root := m.doc.Content[0]
	for j := 0; j+1 < len(root.Content); j += 2 {
		k, v := root.Content[j], root.Content[j+1]
		if k.Value == "rows" && v.Kind == yaml.SequenceNode && v.Style&yaml.FlowStyle == 0 && v.Column > k.Column && v.Column-k.Column <= 8 {
			return v.Column - k.Column
		}
	}
	return 2
}

// renderLast writes the body of a `last` block, indented by ind spaces,
// nested blocks by step more.
func renderLast(l Last, ind, step int) []string {
	pad, pad2 := strings.Repeat(" ", ind), strings.Repeat(" ", ind+step)
	out := []string{pad + "at: " + l.At.UTC().Format(time.RFC3339)}
	if l.Commit != "" {
		out = append(out, pad+"commit: "+quoteScalar(l.Commit))
	}
	out = append(out, pad+"verdict: "+l.Verdict, pad+"figures:")
	f := l.Figures
	for _, d := range []struct {
		name string
		d    *time.Duration
	}{
		{"breaker_opened_after", f.BreakerOpenedAfter},
		{"recovered_after", f.RecoveredAfter},
		{"checkout_p95_during", f.CheckoutP95During},
	} {
		if d.d != nil {
			out = append(out, pad2+d.name+": "+d.d.String())
		}
	}
	for _, b := range f.judged() {
		out = append(out, pad2+b.name+": "+strconv.FormatInt(b.count, 10))
	}
	if len(f.NotChecked) > 0 {
		out = append(out, pad2+"not_checked: ["+strings.Join(f.NotChecked, ", ")+"]")
	}
	return out
}

// quoteScalar writes s as a one-line YAML string: plain when YAML reads it
// back as that string, quoted otherwise.
func quoteScalar(s string) string {
	out, err := yaml.Marshal(s)
	if err != nil || bytes.Count(out, []byte("\n")) != 1 {
		return strconv.Quote(s)
	}
	return strings.TrimSuffix(string(out), "\n")
}

// encodeWithLast writes the whole document again with row i's last set:
// the fallback for rows that cannot be edited line by line.
func (m *Matrix) encodeWithLast(i int, last Last) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: internal error writing the document: %v", r)
		}
	}()
	doc := cloneNode(m.doc)
	var rows *yaml.Node
	root := doc.Content[0]
	for j := 0; j+1 < len(root.Content); j += 2 {
		if root.Content[j].Value == "rows" {
			rows = root.Content[j+1]
		}
	}
	if rows == nil || i >= len(rows.Content) {
		return nil, errors.New("no such row")
	}
	var body yaml.Node
	text := "last:\n" + strings.Join(renderLast(last, 2, 2), "\n") + "\n"
	if err := yaml.Unmarshal([]byte(text), &body); err != nil {
		return nil, err
	}
	value := body.Content[0].Content[1]
	row := rows.Content[i]
	set := false
	for j := 0; j+1 < len(row.Content); j += 2 {
		if row.Content[j].Value == "last" {
			value.LineComment = row.Content[j+1].LineComment
			row.Content[j+1] = value
			set = true
		}
	}
	if !set {
		row.Content = append(row.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "last"}, value)
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(m.indentStep())
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// cloneNode copies a node tree (which holds no aliases: Parse refuses them).
func cloneNode(n *yaml.Node) *yaml.Node {
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, x := range n.Content {
		c.Content[i] = cloneNode(x)
	}
	return &c
}
