package strictyaml

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/gameday-dev/gameday/internal/fileerr"
)

// The document layer refuses what is not one mapping, in the words its
// caller gives, each problem one *fileerr.Error with its line.
func TestDocumentParse(t *testing.T) {
	d := Document{
		What: "one thing", Want: "a mapping of thing fields", Empty: "empty: write a thing",
		FieldAt: func(data []byte, line int) string { return "field-of-line-" + string(rune('0'+line)) },
	}
	for _, c := range []struct {
		name, data string
		want       fileerr.Error
	}{
		// The caller's message for an empty file.
		{"empty", "", fileerr.Error{File: "f", Msg: "empty: write a thing"}},
		// Two documents: the line of the second's "---".
		{"two documents", "a: 1\n---\nb: 2\n", fileerr.Error{File: "f", Line: 2, Msg: `more than one YAML document ("---"): a file holds one thing`}},
		// The top level says what it is, and what it holds.
		{"list", "- a\n", fileerr.Error{File: "f", Line: 1, Msg: "want a mapping of thing fields, got a list"}},
		{"scalar", "hello\n", fileerr.Error{File: "f", Line: 1, Msg: `want a mapping of thing fields, got string "hello"`}},
		// An anchor is refused before anything is expanded.
		{"anchor", "a: &x 1\nb: *x\n", fileerr.Error{File: "f", Line: 1, Field: "a", Msg: "anchors (&x) are not allowed: write the value out"}},
		// A syntax error keeps its line, and FieldAt names its field.
		{"syntax", "a: [\n", fileerr.Error{File: "f", Line: 1, Field: "field-of-line-1", Msg: "bad YAML: did not find expected node content"}},
		// A tab is pointed at on its own line.
		{"tab", "a:\n  b: 1\n\tc: 2\n", fileerr.Error{File: "f", Line: 3, Field: "field-of-line-3", Msg: "bad YAML: found a tab character that violates indentation (indent with spaces)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := d.Parse("f", []byte(c.data))
			all := fileerr.All(err)
			if len(all) != 1 || *all[0] != c.want {
				t.Errorf("Parse: %v\nwant %v", err, &c.want)
			}
		})
	}
	doc, err := d.Parse("f", []byte("# head\na: 1\n"))
	if err != nil || doc.Kind != yaml.DocumentNode || doc.Content[0].Kind != yaml.MappingNode {
		t.Fatalf("Parse: %v, %v", doc, err)
	}
	root, err := ParseMapping("f", []byte("a: 1\n"), "one thing", "thing fields")
	if err != nil || root.Kind != yaml.MappingNode {
		t.Fatalf("ParseMapping: %v, %v", root, err)
	}
}

func TestDescribe(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"[a]", "a list"},
		{"{a: 1}", "a mapping"},
		{"ten", `string "ten"`},
		{"10", "number 10"},
		{"1.5", "number 1.5"},
		{"true", "boolean true"},
		{"2026-01-01", "time 2026-01-01"},
		{"~", "nothing (null)"},
		{"!secret x", `value tagged !secret "x"`},
		// Long values are clipped; numbers stay unquoted.
		{strings.Repeat("9", 70), "number " + strings.Repeat("9", 60) + "..."},
		{strings.Repeat("x", 70), `string "` + strings.Repeat("x", 60) + `"...`},
		// A line break never reaches the message: only the first line
		// shows, or the value is quoted.
		{"!!int \"1\\n2\"", "number 1..."},
		{"!!int \"1\\x002\"", `number "1\x002"`},
	} {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(c.yaml), &doc); err != nil {
			t.Fatal(err)
		}
		if got := Describe(doc.Content[0]); got != c.want {
			t.Errorf("Describe(%s) = %s, want %s", c.yaml, got, c.want)
		}
	}
	if got := Describe(&yaml.Node{Kind: yaml.AliasNode}); got != "an alias" {
		t.Errorf("alias: %s", got)
	}
}

func TestClip(t *testing.T) {
	for _, c := range []struct{ in, clip, quote string }{
		{"short", "short", `"short"`},
		{strings.Repeat("é", 61), strings.Repeat("é", 60) + "...", `"` + strings.Repeat("é", 60) + `"...`},
		// Clip keeps the first line; Quote escapes the break.
		{"a\nb", "a...", `"a\nb"`},
	} {
		if got := Clip(c.in); got != c.clip {
			t.Errorf("Clip(%q) = %q, want %q", c.in, got, c.clip)
		}
		if got := Quote(c.in); got != c.quote {
			t.Errorf("Quote(%q) = %q, want %q", c.in, got, c.quote)
		}
	}
}
