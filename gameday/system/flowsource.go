package system

import (
	"bytes"
	"fmt"
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/gameday-dev/gameday/internal/strictyaml"
)

// flowFields are the top-level fields a purchase flow is built from: all a
// load worker is given of a system.
var flowFields = []string{"name", "description", "base_url", "sku", "purchase"}

// FlowSource is what a load worker is sent of s (docs/scale.md): the
// system file with only the fields its purchase flow is built from — the
// books, stores, setup, dependencies, admin and breakers, and the DSNs,
// tokens and passwords they name, left out — and, of the values its
// ${NAME}s were given, only those the kept fields use. The other fields'
// lines are blanked, not removed, so that a line the worker names is the
// file's. ParseSource reads it back, from nothing else.
func (s *System) FlowSource() (Source, error) {
	src := s.source
	root, err := strictyaml.ParseMapping(src.File, src.Data, "one system", "system fields (name: ..., purchase: ...)")
	if err != nil {
		return Source{}, err
	}
	if root.Style&yaml.FlowStyle != 0 {
		return Source{}, fmt.Errorf("%s: a system written as one flow mapping ({...}) cannot be cut down for the load's workers: write it in block style", src.File)
	}
	lines := bytes.SplitAfter(src.Data, []byte("\n"))
	blank := make([]bool, len(lines))
	vars := map[string]string{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		key, val := root.Content[i], root.Content[i+1]
		from := key.Line - 1 // 0-based, inclusive
		to := len(lines)     // exclusive
		if i+2 < len(root.Content) {
			to = root.Content[i+2].Line - 1
		}
		if slices.Contains(flowFields, key.Value) {
			usedVars(val, src.Vars, vars)
			continue
		}
		for l := from; l < to && l < len(lines); l++ {
			blank[l] = true
		}
	}
	var out bytes.Buffer
	for i, l := range lines {
		if blank[i] {
			if bytes.HasSuffix(l, []byte("\n")) {
				out.WriteByte('\n')
			}
			continue
		}
		out.Write(l)
	}
	return Source{File: src.File, Data: out.Bytes(), Vars: vars}, nil
}

// usedVars copies into out the values of the ${NAME}s n's scalars use.
func usedVars(n *yaml.Node, values, out map[string]string) {
	if n.Kind == yaml.ScalarNode {
		for _, m := range varRE.FindAllStringSubmatch(n.Value, -1) {
			if v, ok := values[m[1]]; ok {
				out[m[1]] = v
			}
		}
		return
	}
	for _, c := range n.Content {
		usedVars(c, values, out)
	}
}
