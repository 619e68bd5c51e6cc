// Package strictyaml holds what gameday's strict YAML inputs (scenarios,
// the resiliency matrix) share about walking a node tree: field paths, and
// the refusal of anchors and aliases before anything is expanded.
package strictyaml

import (
	"fmt"
	"strconv"
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

// Clip shortens a name from the input for a message: at most 60 runes.
func Clip(s string) string {
	n := 0
	for i := range s {
		if n == 60 {
			return s[:i] + "..."
		}
		n++
	}
	return s
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
