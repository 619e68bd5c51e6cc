package system

import (
	"bytes"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"
	"go.yaml.in/yaml/v3"

	"github.com/gameday-dev/gameday/internal/strictyaml"
)

// StatusSet is the HTTP statuses a rule matches: codes and classes.
type StatusSet struct {
	codes   []int
	classes []int // 2 for "2xx"
}

var _ yaml.Unmarshaler = (*StatusSet)(nil)

// UnmarshalYAML reads 201, "4xx", or a list of them.
func (s *StatusSet) UnmarshalYAML(n *yaml.Node) error {
	items := []*yaml.Node{n}
	if n.Kind == yaml.SequenceNode {
		items = n.Content
		if len(items) == 0 {
			return fmt.Errorf("an empty list matches nothing: give a status (201), a class (\"4xx\") or a list of them")
		}
	}
	for _, it := range items {
		if it.Kind != yaml.ScalarNode {
			return fmt.Errorf("want a status (201), a class (\"4xx\") or a list of them, got a %s", strictyaml.KindName(it))
		}
		v := strings.TrimSpace(it.Value)
		if len(v) == 3 && v[1:] == "xx" && v[0] >= '1' && v[0] <= '5' {
			s.classes = append(s.classes, int(v[0]-'0'))
			continue
		}
		c, err := strconv.Atoi(v)
		if err != nil || c < 100 || c > 599 {
			return fmt.Errorf("%s: want a status from 100 to 599, or a class such as \"5xx\"", strictyaml.Quote(it.Value))
		}
		s.codes = append(s.codes, c)
	}
	return nil
}

func (s *StatusSet) has(code int) bool {
	for _, c := range s.codes {
		if c == code {
			return true
		}
	}
	for _, c := range s.classes {
		if code/100 == c {
			return true
		}
	}
	return false
}

// UnmarshalYAML reads a column's source: a GJSON path ("key"), or
// {json: PATH, regex: RE}.
func (f *Field) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		if n.ShortTag() != "!!str" {
			return fmt.Errorf("want a GJSON path or {json: PATH, regex: RE}, got %s", strictyaml.Quote(n.Value))
		}
		f.JSON = n.Value
		return nil
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!str" {
				return fmt.Errorf("%s: want a string", k.Value)
			}
			switch k.Value {
			case "json":
				f.JSON = v.Value
			case "regex":
				f.Regex = v.Value
			default:
				return fmt.Errorf("%s: unknown field (known: json, regex)", strictyaml.Quote(k.Value))
			}
		}
		return nil
	}
	return fmt.Errorf("want a GJSON path or {json: PATH, regex: RE}, got a %s", strictyaml.KindName(n))
}

// matcher is a compiled Match.
type matcher struct {
	status   *StatusSet
	json     []jsonWant
	contains []byte
	matches  *regexp.Regexp
	headers  []headerWant
}

type jsonWant struct {
	path string
	want any // string, int64, float64 or bool
}

type headerWant struct {
	name string
	re   *regexp.Regexp
}

func compileMatch(m *Match) (*matcher, error) {
	c := &matcher{status: m.Status}
	for _, path := range slices.Sorted(maps.Keys(m.JSON)) {
		if path == "" {
			return nil, fmt.Errorf("json: an empty path")
		}
		switch m.JSON[path].(type) {
		case string, bool, int64, float64:
		default:
			return nil, fmt.Errorf("json.%s: want a string, a number or a boolean to compare with (null or empty matches nothing)", path)
		}
		c.json = append(c.json, jsonWant{path: path, want: m.JSON[path]})
	}
	if m.BodyContains != "" {
		c.contains = []byte(m.BodyContains)
	}
	if m.BodyMatches != "" {
		re, err := regexp.Compile(m.BodyMatches)
		if err != nil {
			return nil, fmt.Errorf("body_matches: %v", err)
		}
		c.matches = re
	}
	for _, name := range slices.Sorted(maps.Keys(m.Header)) {
		re, err := regexp.Compile(m.Header[name])
		if err != nil {
			return nil, fmt.Errorf("header.%s: %v", name, err)
		}
		c.headers = append(c.headers, headerWant{name: http.CanonicalHeaderKey(name), re: re})
	}
	return c, nil
}

// match reports whether an answer meets every condition.
func (m *matcher) match(code int, h http.Header, body []byte) bool {
	if m.status != nil && !m.status.has(code) {
		return false
	}
	for _, w := range m.json {
		if !jsonEquals(gjson.GetBytes(body, w.path), w.want) {
			return false
		}
	}
	if m.contains != nil && !bytes.Contains(body, m.contains) {
		return false
	}
	if m.matches != nil && !m.matches.Match(body) {
		return false
	}
	for _, w := range m.headers {
		vs, ok := h[w.name]
		if !ok || len(vs) == 0 || !w.re.MatchString(vs[0]) {
			return false
		}
	}
	return true
}

func jsonEquals(r gjson.Result, want any) bool {
	switch w := want.(type) {
	case string:
		return r.Type == gjson.String && r.Str == w
	case bool:
		return (r.Type == gjson.True && w) || (r.Type == gjson.False && !w)
	case int64:
		return r.Type == gjson.Number && r.Num == float64(w)
	case float64:
		return r.Type == gjson.Number && r.Num == w
	}
	return false
}

// extractor is a compiled Extract.
type extractor struct {
	header string
	json   string
	unit   time.Duration // for a duration: what a bare number counts
	after  time.Duration // a fixed wait
}

func compileExtract(e *Extract, duration bool) (*extractor, error) {
	given := 0
	for _, ok := range []bool{e.Header != "", e.JSON != "", e.After != 0} {
		if ok {
			given++
		}
	}
	switch {
	case e.After != 0 && !duration:
		return nil, fmt.Errorf("after: only for retry_after")
	case given != 1 && duration:
		return nil, fmt.Errorf("want exactly one of header, json, after (a fixed wait)")
	case given != 1:
		return nil, fmt.Errorf("want exactly one of header, json")
	case e.Unit != "" && !duration:
		return nil, fmt.Errorf("unit: only for retry_after")
	case e.After < 0 || e.After.D() > 24*time.Hour:
		return nil, fmt.Errorf("after: %s: want a wait above 0, at most 24h", e.After.D())
	case e.After != 0 && e.Unit != "":
		return nil, fmt.Errorf("unit: only for header and json (after is a duration: \"1s\")")
	}
	if e.After != 0 {
		return &extractor{after: e.After.D()}, nil
	}
	x := &extractor{header: http.CanonicalHeaderKey(e.Header), json: e.JSON}
	if duration {
		switch e.Unit {
		case "":
			x.unit = time.Millisecond
			if e.Header != "" {
				x.unit = time.Second
			}
		case "ms":
			x.unit = time.Millisecond
		case "s":
			x.unit = time.Second
		default:
			return nil, fmt.Errorf("unit %s: want ms or s", strictyaml.Quote(e.Unit))
		}
	}
	return x, nil
}

// text reads the value as text; false when the answer does not have it.
func (x *extractor) text(h http.Header, body []byte) (string, bool) {
	if x.header != "" {
		vs := h[x.header]
		if len(vs) == 0 {
			return "", false
		}
		return vs[0], true
	}
	r := gjson.GetBytes(body, x.json)
	if !r.Exists() || r.Type == gjson.Null {
		return "", false
	}
	if r.Type == gjson.String {
		return r.Str, true
	}
	return r.Raw, true
}

// wait reads the value as a wait: a number of units, or (from a header) an
// HTTP date. At most a day; 0 when absent or unreadable.
func (x *extractor) wait(h http.Header, body []byte, now func() time.Time) time.Duration {
	const most = 24 * time.Hour
	if x.after > 0 {
		return x.after
	}
	s, ok := x.text(h, body)
	if !ok {
		return 0
	}
	s = strings.TrimSpace(s)
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if !(f > 0) {
			return 0
		}
		return time.Duration(min(f*float64(x.unit), float64(most)))
	}
	if x.header != "" {
		if t, err := http.ParseTime(s); err == nil {
			return min(max(t.Sub(now()), 0), most)
		}
	}
	return 0
}
