package matrix

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/gameday-dev/gameday/internal/fileerr"
	"github.com/gameday-dev/gameday/internal/inputfile"
	"github.com/gameday-dev/gameday/internal/strictyaml"

	"github.com/gameday-dev/gameday/scenarios"
)

// The fields of each mapping, in the order the file documents them.
var (
	topKeys    = []string{"version", "rows"}
	rowKeys    = []string{"dependency", "failure", "expectation", "recovery_objective", "runbook", "owner", "cadence", "scenario", "status", "last"}
	lastKeys   = []string{"at", "commit", "verdict", "figures"}
	figureKeys = append([]string{"breaker_opened_after", "recovered_after", "checkout_p95_during"}, append(slices.Clone(invariantNames), "not_checked")...)
	verdicts   = []string{VerdictPass, VerdictFail, VerdictError, VerdictInconclusive}
	statuses   = []string{StatusPromise, StatusKnownGap}
)

// Bounds on values, so that a mistake cannot flood a table or a message.
const (
	maxNameLen  = 100  // dependency, failure, commit
	maxValueLen = 4096 // any other string
)

// catalogueNames are the built-in scenarios' names; the catalogue is
// embedded in the binary, so they are read once.
var catalogueNames = sync.OnceValue(scenarios.CatalogueNames)

// Load reads and parses the matrix file at path, reading at most [MaxSize]
// bytes. Problems with the content are *Error values (see [Parse]); a file
// that cannot be read gives the wrapped *fs.PathError.
func Load(path string) (*Matrix, error) {
	data, err := readBounded(path)
	if err != nil {
		return nil, fmt.Errorf("load matrix: %w", err)
	}
	return Parse(path, data)
}

// readBounded reads a regular file, but no more than one byte past
// MaxSize, so that Parse can refuse a huge file without reading all of it.
func readBounded(path string) ([]byte, error) { return inputfile.Read(path, MaxSize) }

// Parse reads a matrix from data, naming file in its errors. Paths of
// scenario files in the rows are relative to file's directory.
//
// It is strict, and checks the whole file before returning: at most
// [MaxSize] bytes; no merge-conflict markers (lines starting with <<<<<<<,
// =======, >>>>>>> or |||||||); one YAML document holding a mapping,
// without anchors, aliases or merge keys; no unknown or repeated keys; the
// right type for every value; every row with its dependency, failure,
// cadence and scenario, each dependency/failure pair once, and a catalogue
// name or a path as its scenario. Every problem is an *Error naming the
// file, line and field; several are joined with errors.Join.
func Parse(file string, data []byte) (*Matrix, error) {
	if errs := conflictMarkers(file, data); len(errs) > 0 {
		return nil, fileerr.Join(errs)
	}
	doc, err := document.Parse(file, data)
	if err != nil {
		return nil, err
	}
	m := &Matrix{file: file, dir: filepath.Dir(file), data: slices.Clone(data), doc: doc}
	p := &parser{strictyaml.NewDecoder(file)}
	p.top(doc.Content[0], m)
	if err := p.Err(); err != nil {
		return nil, err
	}
	return m, nil
}

// document is what a matrix file holds, for the messages of the document
// layer; a syntax error is named with the field its line seems to be in.
var document = strictyaml.Document{
	What:    "one matrix",
	Want:    "a mapping with version and rows",
	Empty:   "empty: a matrix holds \"version: 1\" and its \"rows:\" (gameday init writes a starter)",
	FieldAt: fieldAt,
}

// fieldAt is pathAt for line (1-based) of data.
func fieldAt(data []byte, line int) string {
	lines := strings.Split(string(data), "\n")
	if line < 1 || line > len(lines) {
		return ""
	}
	return pathAt(lines, line-1)
}

func joinPath(path, key string) string { return strictyaml.JoinPath(path, key) }

// field is one key of a mapping and its value.
type field struct{ key, val *yaml.Node }

// parser decodes the node tree strictly, collecting every problem. Its
// decoder records the errors and checks each mapping's keys; the fields are
// read by hand, for the hints a hand-edited file deserves.
type parser struct{ *strictyaml.Decoder }

// fields checks that n is a mapping whose keys are known field names, each
// given once, and returns them by name; nil when n is not a mapping.
func (p *parser) fields(n *yaml.Node, path, what string, known []string) map[string]field {
	if n.Kind != yaml.MappingNode {
		p.Fail(n, path, "want a mapping of %s, got %s", what, strictyaml.Describe(n))
		return nil
	}
	out := map[string]field{}
	p.MappingKeys(n, path, func(key string, k, v *yaml.Node) {
		if !slices.Contains(known, key) {
			p.Fail(k, joinPath(path, key), "unknown field%s (known: %s)", suggest(key, known), strings.Join(known, ", "))
			return
		}
		out[key] = field{k, v}
	})
	return out
}

// suggest returns " (did you mean X?)" when key is a known field written
// with dashes, spaces or capitals.
func suggest(key string, known []string) string {
	norm := strings.ToLower(strings.NewReplacer("-", "_", " ", "_").Replace(key))
	if slices.Contains(known, norm) {
		return fmt.Sprintf(" (did you mean %s?)", norm)
	}
	return ""
}

// str returns a string value; ok is false when the value is null or not a
// string (then an error is recorded).
func (p *parser) str(f field, path string) (s string, ok bool) {
	switch {
	case strictyaml.IsNull(f.val):
		return "", false
	case f.val.Kind == yaml.ScalarNode && f.val.ShortTag() == "!!str":
		if len(f.val.Value) > maxValueLen {
			p.Fail(f.val, path, "longer than %d bytes", maxValueLen)
			return "", false
		}
		return f.val.Value, true
	case f.val.Kind == yaml.ScalarNode && f.val.Style == 0:
		p.Fail(f.val, path, "want a string, got %s (quote it: %s)", strictyaml.Describe(f.val), strictyaml.Quote(f.val.Value))
	default:
		p.Fail(f.val, path, "want a string, got %s", strictyaml.Describe(f.val))
	}
	return "", false
}

// required returns the string value of fs[key], recording an error naming
// hint when it is missing or empty.
func (p *parser) required(fs map[string]field, row *yaml.Node, path, key, hint string) string {
	fp := joinPath(path, key)
	f, ok := fs[key]
	if !ok {
		p.Fail(row, fp, "missing: %s", hint)
		return ""
	}
	s, ok := p.str(f, fp)
	if ok && strings.TrimSpace(s) == "" {
		p.Fail(f.val, fp, "empty: %s", hint)
		return ""
	}
	if !ok && strictyaml.IsNull(f.val) {
		p.Fail(f.key, fp, "missing: %s", hint)
	}
	return s
}

// optional returns the string value of fs[key], or "" when it is absent or
// null.
func (p *parser) optional(fs map[string]field, path, key string) string {
	f, ok := fs[key]
	if !ok {
		return ""
	}
	s, _ := p.str(f, joinPath(path, key))
	return s
}

func (p *parser) top(root *yaml.Node, m *Matrix) {
	fs := p.fields(root, "", "matrix fields", topKeys)
	if fs == nil {
		return
	}
	if f, ok := fs["version"]; !ok {
		p.Fail(root, "version", "missing: write \"version: %d\" at the top", Version)
	} else if f.val.Kind != yaml.ScalarNode || f.val.ShortTag() != "!!int" {
		p.Fail(f.val, "version", "want the number %d, got %s", Version, strictyaml.Describe(f.val))
	} else if f.val.Value != strconv.Itoa(Version) {
		p.Fail(f.val, "version", "version %s is not one this gameday reads (it reads %d): update gameday", strictyaml.Clip(f.val.Value), Version)
	}
	f, ok := fs["rows"]
	if !ok {
		p.Fail(root, "rows", "missing: list the rows under \"rows:\"")
		return
	}
	if strictyaml.IsNull(f.val) {
		return
	}
	if f.val.Kind != yaml.SequenceNode {
		p.Fail(f.val, "rows", "want a list of rows, got %s", strictyaml.Describe(f.val))
		return
	}
	seen := map[string]int{}
	for i, n := range f.val.Content {
		path := "rows[" + strconv.Itoa(i) + "]"
		r := p.row(n, path)
		if r.Dependency != "" && r.Failure != "" {
			if first, dup := seen[r.ID()]; dup {
				p.Fail(n, path, "%s is also rows[%d] (line %d): one row per dependency and failure", r.ID(), first, m.rows[first].Line)
			} else {
				seen[r.ID()] = i
			}
		}
		m.rows = append(m.rows, r)
		m.rowNodes = append(m.rowNodes, n)
	}
}

func (p *parser) row(n *yaml.Node, path string) Row {
	r := Row{Line: n.Line, Status: StatusPromise}
	fs := p.fields(n, path, "row fields ("+strings.Join(rowKeys, ", ")+")", rowKeys)
	if fs == nil {
		return r
	}
	r.Dependency = p.name(fs, n, path, "dependency", "the dependency that fails, such as payment")
	r.Failure = p.name(fs, n, path, "failure", "the failure mode, such as latency")
	r.Expectation = p.optional(fs, path, "expectation")
	r.Runbook = p.optional(fs, path, "runbook")
	r.Owner = p.optional(fs, path, "owner")

	if f, ok := fs["recovery_objective"]; ok {
		fp := joinPath(path, "recovery_objective")
		if d, ok := p.duration(f, fp); ok {
			if d == 0 {
				p.Fail(f.val, fp, "0 is no objective: leave the field out instead")
			} else {
				r.RecoveryObjective = f.val.Value
			}
		}
	}

	if s := p.required(fs, n, path, "cadence", "how often the drill runs: daily, weekly, monthly or a duration such as 72h"); s != "" {
		if _, err := ParseCadence(s); err != nil {
			p.Fail(fs["cadence"].val, joinPath(path, "cadence"), "%v", err)
		} else {
			r.Cadence = s
		}
	}

	hint := "the scenario that proves the row: a catalogue name (see gameday list) or the path of a scenario file"
	if s := p.required(fs, n, path, "scenario", hint); s != "" {
		if !scenarios.IsPath(s) && !slices.Contains(catalogueNames(), s) {
			p.Fail(fs["scenario"].val, joinPath(path, "scenario"), "%s is not in the catalogue (known: %s; or give the path of a .yaml file)",
				strictyaml.Quote(s), strings.Join(catalogueNames(), ", "))
		} else {
			r.Scenario = s
		}
	}

	if f, ok := fs["status"]; ok {
		fp := joinPath(path, "status")
		if s, ok := p.str(f, fp); ok {
			if slices.Contains(statuses, s) {
				r.Status = s
			} else {
				p.Fail(f.val, fp, "want promise or known_gap, got %s", strictyaml.Quote(s))
			}
		}
	}

	if f, ok := fs["last"]; ok && !strictyaml.IsNull(f.val) {
		r.Last = p.last(f.val, joinPath(path, "last"))
	}
	return r
}

// name reads a required one-line name (dependency, failure).
func (p *parser) name(fs map[string]field, row *yaml.Node, path, key, hint string) string {
	s := p.required(fs, row, path, key, hint)
	if s == "" {
		return ""
	}
	fp := joinPath(path, key)
	switch {
	case len(s) > maxNameLen:
		p.Fail(fs[key].val, fp, "longer than %d bytes: a short name identifies the row", maxNameLen)
	case strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) || r == '/' }):
		p.Fail(fs[key].val, fp, "%s: a name is one line, without '/'", strictyaml.Quote(s))
	default:
		return s
	}
	return ""
}

// duration reads a non-negative duration string.
func (p *parser) duration(f field, path string) (time.Duration, bool) {
	v := f.val
	if v.Kind == yaml.ScalarNode && (v.ShortTag() == "!!int" || v.ShortTag() == "!!float") {
		p.Fail(v, path, "%s is a bare number, not a duration (write \"%ss\")", strictyaml.Clip(v.Value), strictyaml.Clip(v.Value))
		return 0, false
	}
	s, ok := p.str(f, path)
	if !ok {
		if strictyaml.IsNull(v) {
			p.Fail(v, path, "want a duration such as \"10s\", got nothing")
		}
		return 0, false
	}
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		p.Fail(v, path, "%s is not a duration (write a number and a unit: \"250ms\", \"2s\", \"1m\")", strictyaml.Quote(s))
		return 0, false
	case d < 0:
		p.Fail(v, path, "%s is negative", strictyaml.Quote(s))
		return 0, false
	}
	return d, true
}

func (p *parser) last(n *yaml.Node, path string) *Last {
	fs := p.fields(n, path, "the last run (at, commit, verdict, figures)", lastKeys)
	if fs == nil {
		return nil
	}
	before := len(p.Errs)
	l := &Last{}
	if f, ok := fs["at"]; !ok || strictyaml.IsNull(f.val) {
		p.Fail(n, joinPath(path, "at"), "missing: when the run started (an RFC 3339 time such as 2026-11-29T14:00:00Z)")
	} else if f.val.Kind != yaml.ScalarNode || (f.val.ShortTag() != "!!timestamp" && f.val.ShortTag() != "!!str") {
		p.Fail(f.val, joinPath(path, "at"), "want an RFC 3339 time such as 2026-11-29T14:00:00Z, got %s", strictyaml.Describe(f.val))
	} else if t, err := time.Parse(time.RFC3339Nano, f.val.Value); err != nil {
		p.Fail(f.val, joinPath(path, "at"), "%s is not an RFC 3339 time such as 2026-11-29T14:00:00Z", strictyaml.Quote(f.val.Value))
	} else {
		l.At = t.UTC()
	}
	if f, ok := fs["commit"]; ok && !strictyaml.IsNull(f.val) {
		// A commit is an identifier: an abbreviated hash of digits alone
		// reads as a number in YAML and is taken as written.
		switch tag := f.val.ShortTag(); {
		case f.val.Kind == yaml.ScalarNode && (tag == "!!str" || tag == "!!int" || tag == "!!float"):
			if len(f.val.Value) > maxNameLen || strings.ContainsFunc(f.val.Value, unicode.IsControl) {
				p.Fail(f.val, joinPath(path, "commit"), "%s is not a commit", strictyaml.Quote(f.val.Value))
			}
			l.Commit = f.val.Value
		default:
			p.Fail(f.val, joinPath(path, "commit"), "want a commit such as 3f2a1c9, got %s", strictyaml.Describe(f.val))
		}
	}
	if f, ok := fs["verdict"]; !ok || strictyaml.IsNull(f.val) {
		p.Fail(n, joinPath(path, "verdict"), "missing: pass, fail, error or inconclusive")
	} else if s, ok := p.str(f, joinPath(path, "verdict")); ok {
		if slices.Contains(verdicts, s) {
			l.Verdict = s
		} else {
			p.Fail(f.val, joinPath(path, "verdict"), "want pass, fail, error or inconclusive, got %s", strictyaml.Quote(s))
		}
	}
	if f, ok := fs["figures"]; ok && !strictyaml.IsNull(f.val) {
		l.Figures = p.figures(f.val, joinPath(path, "figures"))
	}
	if len(p.Errs) > before {
		return nil
	}
	return l
}

func (p *parser) figures(n *yaml.Node, path string) Figures {
	var out Figures
	fs := p.fields(n, path, "figures", figureKeys)
	durs := map[string]**time.Duration{
		"breaker_opened_after": &out.BreakerOpenedAfter,
		"recovered_after":      &out.RecoveredAfter,
		"checkout_p95_during":  &out.CheckoutP95During,
	}
	counts := out.counts()
	if f, ok := fs["not_checked"]; ok && !strictyaml.IsNull(f.val) {
		out.NotChecked = p.notChecked(f, joinPath(path, "not_checked"))
		for _, name := range out.NotChecked {
			if c, given := fs[name]; given && !strictyaml.IsNull(c.val) {
				p.Fail(c.key, joinPath(path, name), "given a count, though not_checked lists it: an invariant not checked has no count")
			}
		}
	}
	for _, key := range figureKeys {
		f, ok := fs[key]
		if !ok || strictyaml.IsNull(f.val) || key == "not_checked" {
			continue
		}
		fp := joinPath(path, key)
		if dst, ok := durs[key]; ok {
			if d, ok := p.duration(f, fp); ok {
				*dst = &d
			}
			continue
		}
		if f.val.Kind != yaml.ScalarNode || f.val.ShortTag() != "!!int" {
			p.Fail(f.val, fp, "want a whole number, got %s", strictyaml.Describe(f.val))
			continue
		}
		var v int64
		if err := f.val.Decode(&v); err != nil || v < 0 {
			p.Fail(f.val, fp, "want a count (0 or more), got %s", strictyaml.Clip(f.val.Value))
			continue
		}
		*counts[key] = v
	}
	return out
}

// notChecked reads figures.not_checked: a list of invariants, each named
// once, returned in the order of [Invariants].
func (p *parser) notChecked(f field, path string) []string {
	if f.val.Kind != yaml.SequenceNode {
		p.Fail(f.val, path, "want a list of invariants, such as [wrong_amounts, stranded_units], got %s", strictyaml.Describe(f.val))
		return nil
	}
	seen := map[string]bool{}
	for i, n := range f.val.Content {
		fp := path + "[" + strconv.Itoa(i) + "]"
		switch {
		case n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str":
			p.Fail(n, fp, "want the name of an invariant, got %s", strictyaml.Describe(n))
		case !slices.Contains(invariantNames, n.Value):
			p.Fail(n, fp, "%s is not an invariant (known: %s)", strictyaml.Quote(n.Value), strings.Join(invariantNames, ", "))
		case seen[n.Value]:
			p.Fail(n, fp, "%s is listed twice", strictyaml.Quote(n.Value))
		default:
			seen[n.Value] = true
		}
	}
	var out []string
	for _, name := range invariantNames {
		if seen[name] {
			out = append(out, name)
		}
	}
	return out
}

// ParseCadence reads a row's cadence: daily (24h), weekly (7 days),
// monthly (30 days), or a positive duration in time.ParseDuration's
// syntax, such as "72h".
func ParseCadence(s string) (time.Duration, error) {
	switch s {
	case "daily":
		return 24 * time.Hour, nil
	case "weekly":
		return 7 * 24 * time.Hour, nil
	case "monthly":
		return 30 * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		if _, nerr := strconv.ParseFloat(s, 64); nerr == nil {
			return 0, fmt.Errorf("%s is a bare number: write daily, weekly, monthly or a duration such as \"72h\"", strictyaml.Quote(s))
		}
		return 0, fmt.Errorf("%s is not a cadence: write daily, weekly, monthly or a duration such as \"72h\"", strictyaml.Quote(s))
	}
	if d <= 0 {
		return 0, fmt.Errorf("%s: a cadence is longer than zero", strictyaml.Quote(s))
	}
	return d, nil
}

// conflictMarkers finds the lines a merge left its conflict markers on.
func conflictMarkers(file string, data []byte) []*Error {
	if !bytes.Contains(data, []byte("<<<<<<<")) && !bytes.Contains(data, []byte("=======")) &&
		!bytes.Contains(data, []byte(">>>>>>>")) && !bytes.Contains(data, []byte("|||||||")) {
		return nil
	}
	lines := strings.Split(string(data), "\n")
	var errs []*Error
	open := "" // the field of the conflict's <<<<<<< line: the block in conflict
	for i, l := range lines {
		if isConflictMarker(l) {
			field := pathAt(lines, i)
			switch {
			case strings.HasPrefix(l, "<<<<<<<"):
				open = field
			case strings.HasPrefix(l, ">>>>>>>") && open != "":
				field, open = open, ""
			case open != "":
				field = open
			}
			errs = append(errs, &Error{File: file, Line: i + 1, Field: strictyaml.ClipField(field),
				Msg: fmt.Sprintf("merge-conflict marker %s: resolve the conflict first (for a `last` block, keep the newer run)", strictyaml.Quote(strings.TrimRight(l, "\r")))})
		}
	}
	return errs
}

// isConflictMarker reports whether a line is one of git's conflict
// markers: seven <, =, > or | at the start, then the end of the line or a
// space and a label.
func isConflictMarker(l string) bool {
	for _, m := range []string{"<<<<<<<", "=======", ">>>>>>>", "|||||||"} {
		if strings.HasPrefix(l, m) {
			rest := l[len(m):]
			if rest == "" || rest[0] == ' ' || rest[0] == '\t' || rest[0] == '\r' {
				return true
			}
		}
	}
	return false
}

// pathAt guesses from the text alone the field path of the nearest key at
// or above line i (0-based), such as "rows[1].last.at", for errors about
// text that is not valid YAML (a conflict marker, a syntax error). It
// follows indentation back to the top; "" when nothing is found.
func pathAt(lines []string, i int) string {
	var parts []string // innermost first
	limit := math.MaxInt
	itemIndent := -1
	for j := min(i, len(lines)-1); j >= 0; j-- {
		l := strings.TrimRight(lines[j], "\r")
		t := strings.TrimLeft(l, " \t")
		if t == "" || t[0] == '#' || isConflictMarker(l) {
			continue
		}
		ind := indentWidth(l[:len(l)-len(t)])
		item := t == "-" || strings.HasPrefix(t, "- ")
		if !(ind < limit || (ind == itemIndent && !item)) {
			continue
		}
		if item {
			if k := keyOf(strings.TrimLeft(t[1:], " ")); k != "" && len(parts) == 0 {
				parts = append(parts, "."+k)
			}
			parts = append(parts, "["+strconv.Itoa(itemIndex(lines, j, ind))+"]")
			limit, itemIndent = ind, ind
			continue
		}
		if k := keyOf(t); k != "" {
			parts = append(parts, "."+k)
		}
		limit, itemIndent = ind, -1
	}
	slices.Reverse(parts)
	return strings.TrimPrefix(strings.Join(parts, ""), ".")
}

// itemIndex counts the list items at indentation ind above line j, up to
// the list's parent.
func itemIndex(lines []string, j, ind int) int {
	n := 0
	for k := j - 1; k >= 0; k-- {
		l := strings.TrimRight(lines[k], "\r")
		t := strings.TrimLeft(l, " \t")
		if t == "" || t[0] == '#' || isConflictMarker(l) {
			continue
		}
		li := indentWidth(l[:len(l)-len(t)])
		item := t == "-" || strings.HasPrefix(t, "- ")
		if li < ind || (li == ind && !item) {
			break
		}
		if li == ind && item {
			n++
		}
	}
	return n
}

// indentWidth is the width of an indentation, a tab reaching the next
// multiple of 8 as most editors show it.
func indentWidth(ind string) int {
	w := 0
	for _, c := range ind {
		if c == '\t' {
			w += 8 - w%8
		} else {
			w++
		}
	}
	return w
}

// keyOf returns the key of a "key: value" line's text, or "".
func keyOf(t string) string {
	if t == "" {
		return ""
	}
	if q := t[0]; q == '"' || q == '\'' {
		end := strings.IndexByte(t[1:], q)
		if end < 0 || !strings.HasPrefix(strings.TrimLeft(t[end+2:], " "), ":") {
			return ""
		}
		return t[1 : end+1]
	}
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case '{', '[', '#', '"', '\'':
			return ""
		case ':':
			if i+1 == len(t) || t[i+1] == ' ' || t[i+1] == '\t' || t[i+1] == '\r' {
				return strings.TrimRight(t[:i], " ")
			}
		}
	}
	return ""
}
