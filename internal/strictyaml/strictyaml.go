// Package strictyaml holds what gameday's strict YAML inputs (scenarios,
// system files, the resiliency matrix) share: the document layer (one
// document, a mapping at the top, syntax errors located, anchors and
// aliases refused before anything is expanded; [Document]), field paths,
// what a node is and the clipping of input quoted in messages, and a
// reflective decoder ([Decoder]). Every problem is a *fileerr.Error.
package strictyaml

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/gameday-dev/gameday/internal/fileerr"
)

// JoinPath appends a mapping key to a field path: "load" + "stages" is
// "load.stages".
func JoinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// RefuseAliases reports the first anchor or alias in the tree, naming file,
// line and field. The tree holds an alias as a node pointing at its anchor,
// so walking it without following aliases is bounded by the input's size:
// nothing can be expanded into a billion laughs.
func RefuseAliases(file string, n *yaml.Node, path string) error {
	switch {
	case n.Kind == yaml.AliasNode:
		return &fileerr.Error{File: file, Line: n.Line, Field: ClipField(path), Msg: fmt.Sprintf("aliases (*%s) are not allowed: write the value out", Clip(n.Value))}
	case n.Anchor != "":
		return &fileerr.Error{File: file, Line: n.Line, Field: ClipField(path), Msg: fmt.Sprintf("anchors (&%s) are not allowed: write the value out", Clip(n.Anchor))}
	}
	for i, c := range n.Content {
		p := path
		switch n.Kind {
		case yaml.MappingNode:
			if i%2 == 1 {
				p = JoinPath(path, n.Content[i-1].Value)
			}
		case yaml.SequenceNode:
			p = path + "[" + strconv.Itoa(i) + "]"
		}
		if err := RefuseAliases(file, c, p); err != nil {
			return err
		}
	}
	return nil
}

// Clip shortens a name or a number from the input for a message, without
// quoting it: at most 60 runes, and only its first line.
func Clip(s string) string {
	more := ""
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s, more = s[:i], "..."
	}
	c, cut := cutRunes(s)
	if cut {
		more = "..."
	}
	return c + more
}

// Quote shortens a value from the input for a message, quoted: at most 60
// runes of it.
func Quote(s string) string {
	c, cut := cutRunes(s)
	if cut {
		return strconv.Quote(c) + "..."
	}
	return strconv.Quote(c)
}

// cutRunes returns the first 60 runes of s, and whether that cut any.
func cutRunes(s string) (string, bool) {
	n := 0
	for i := range s {
		if n == 60 {
			return s[:i], true
		}
		n++
	}
	return s, false
}

// IsNull reports whether n is a null scalar: "~", "null" or nothing.
func IsNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" }

// KindName says what a node is, for errors: "mapping", "string".
func KindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.AliasNode:
		return "alias"
	case yaml.DocumentNode:
		return "document"
	}
	switch n.ShortTag() {
	case "!!str":
		return "string"
	case "!!int", "!!float":
		return "number"
	case "!!bool":
		return "boolean"
	case "!!null":
		return "null"
	case "!!timestamp":
		return "time"
	}
	return "value tagged " + n.ShortTag()
}

// Describe says what a node is and, for a scalar, what it holds, for
// errors after "got": "a mapping", `string "ten"`, "number 10", "boolean
// true", "nothing (null)".
func Describe(n *yaml.Node) string {
	kind := KindName(n)
	if n.Kind != yaml.ScalarNode {
		if strings.IndexByte("aeiou", kind[0]) >= 0 {
			return "an " + kind
		}
		return "a " + kind
	}
	switch n.ShortTag() {
	case "!!null":
		return "nothing (null)"
	case "!!int", "!!float", "!!bool", "!!timestamp":
		if c := Clip(n.Value); !strings.ContainsFunc(c, unicode.IsControl) {
			return kind + " " + c
		}
	}
	return kind + " " + Quote(n.Value)
}

// ClipField shortens a field path that holds a long key from the input.
func ClipField(f string) string {
	if len(f) <= 200 {
		return f
	}
	for i := 197; i > 0; i-- {
		if utf8.RuneStart(f[i]) {
			return f[:i] + "..."
		}
	}
	return "..."
}
