package system

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/gameday-dev/gameday/internal/fileerr"
	"github.com/gameday-dev/gameday/internal/strictyaml"
)

// maxPods bounds a system's pods.
const maxPods = 64

// readPods reads the pods section alone (its values may use ${NAME} of
// vars and the environment): the rest of the file may name variables only
// a pod gives.
func readPods(file string, data []byte, vars map[string]string, env bool) (map[string]map[string]string, error) {
	if len(data) > MaxSize {
		return nil, nil // parseOne says so
	}
	root, err := strictyaml.ParseMapping(file, data, "one system", "system fields (name: ..., purchase: ...)")
	if err != nil {
		return nil, nil // parseOne says so, with the rest
	}
	var node *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "pods" {
			node = root.Content[i+1]
		}
	}
	if node == nil {
		return nil, nil
	}
	var errs []*Error
	d := strictyaml.NewDecoder(file)
	d.Substituted = map[*yaml.Node]bool{}
	expandVars(file, node, "pods", vars, env, map[string]string{}, d.Substituted, &errs)
	if len(errs) > 0 {
		return nil, fileerr.Join(errs)
	}
	var pods map[string]map[string]string
	d.Decode(node, reflect.ValueOf(&pods).Elem(), "pods")
	if err := d.Err(); err != nil {
		return nil, err
	}
	line := func(path string) int {
		if l, ok := d.Lines[path]; ok {
			return l
		}
		return node.Line
	}
	if len(pods) == 0 || len(pods) > maxPods {
		return nil, &Error{File: file, Line: node.Line, Field: "pods", Msg: fmt.Sprintf("%d pods: give between 1 and %d, each with its values", len(pods), maxPods)}
	}
	for _, name := range slices.Sorted(maps.Keys(pods)) {
		if !nameRE.MatchString(name) || strings.Contains(name, "/") {
			errs = append(errs, &Error{File: file, Line: line("pods." + name), Field: "pods." + name, Msg: fmt.Sprintf("%q: a pod's name is lower-case words joined by '-', such as pod-1", name)})
		}
	}
	if len(errs) > 0 {
		return nil, fileerr.Join(errs)
	}
	return pods, nil
}

// parsePods parses a system of pods: the file once for each pod, with
// the pod's values over vars, and the system as the runner drills it:
// the first pod's copy (by name) for the purchase, every pod's
// dependencies, and no admin or breakers of its own (each pod's copy has
// its own, which the runner reads pod by pod).
func parsePods(file string, data []byte, vars map[string]string, pods map[string]map[string]string, env bool) (*System, error) {
	names := slices.Sorted(maps.Keys(pods))
	copies := map[string]*System{}
	used := map[string]string{}
	for _, name := range names {
		v := maps.Clone(vars)
		if v == nil {
			v = map[string]string{}
		}
		maps.Copy(v, pods[name])
		c, err := parseOne(file, data, v, env)
		if err != nil {
			return nil, fmt.Errorf("pod %s: %w", name, err)
		}
		copies[name] = c
		for k, x := range c.source.Vars {
			if _, ofPod := pods[name][k]; !ofPod {
				used[k] = x
			}
		}
	}
	first := copies[names[0]]
	top := *first
	top.pods = copies
	top.source = Source{File: file, Data: append([]byte(nil), data...), Vars: used}
	for _, name := range names[1:] {
		if c := copies[name]; c.BaseURL != first.BaseURL {
			return nil, &Error{File: file, Line: first.lines["base_url"], Field: "base_url",
				Msg: fmt.Sprintf("%s for %s but %s for %s: purchases go to one router, the same for every pod", first.BaseURL, names[0], c.BaseURL, name)}
		}
	}
	top.Dependencies = map[string]*Dependency{}
	var depNames []string
	for _, c := range copies {
		for n := range c.Dependencies {
			if !slices.Contains(depNames, n) {
				depNames = append(depNames, n)
			}
		}
	}
	slices.Sort(depNames)
	for _, dep := range depNames {
		shared := true
		for _, name := range names {
			c, ok := copies[name].Dependencies[dep]
			if !ok || !reflect.DeepEqual(c, first.Dependencies[dep]) {
				shared = false
			}
		}
		if shared {
			top.Dependencies[dep] = first.Dependencies[dep]
			continue
		}
		proxies := map[string]string{}
		for _, name := range names {
			c, ok := copies[name].Dependencies[dep]
			if !ok {
				continue
			}
			cp := *c
			if cp.Proxy == dep { // the default: each pod's proxy needs a name of its own
				cp.Proxy = name + "-" + dep
			}
			if other, dup := proxies[cp.Proxy]; dup && cp.Proxied() {
				return nil, &Error{File: file, Line: first.lines["dependencies."+dep], Field: "dependencies." + dep + ".proxy",
					Msg: fmt.Sprintf("%s and %s both put %s behind proxy %q: give each pod's its own (${NAME} of the pod's values)", other, name, dep, cp.Proxy)}
			}
			proxies[cp.Proxy] = name
			top.Dependencies[PodDependency(name, dep)] = &cp
		}
	}
	top.Admin, top.Breakers = "", nil
	return &top, nil
}

// PodDependency is a pod's dependency as faults name it: pod-2/inventory.
func PodDependency(pod, dep string) string { return pod + "/" + dep }

// PodNames are the system's pods, in name order; nil without pods.
func (s *System) PodNames() []string {
	if len(s.pods) == 0 {
		return nil
	}
	return slices.Sorted(maps.Keys(s.pods))
}

// Pod is one pod's copy of a system of pods: its stores, setup and books
// are the pod's own.
func (s *System) Pod(name string) (*System, bool) {
	c, ok := s.pods[name]
	return c, ok
}
