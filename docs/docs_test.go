// Package docs_test checks the YAML in the README and in docs/ the way
// gameday reads it, so an example a user copies cannot drift from what the
// parsers accept.
//
// Every ```yaml block is preceded by a marker saying what it is:
//
//	<!-- check: scenario -->       a whole scenario file
//	<!-- check: system -->         a whole system file
//	<!-- check: matrix -->         a whole matrix file
//	<!-- check: scenario part -->  top-level keys of a scenario
//	<!-- check: system part -->    top-level keys of a system file
//	<!-- check: expect -->         a list of a scenario's expectations
//	<!-- check: step -->           keys of one purchase step
//	<!-- check: yaml -->           another tool's YAML (CI steps): parsed only
//
// A part is laid over the page's last scenario (or system) block when it
// has one, else over a small valid file of that kind, and the result is
// validated; an expect list replaces that scenario's expectations, and a
// step's keys are the only step of the small valid system (its url, when
// the block gives none, the base's). A block without a marker fails the
// test.
package docs_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/gameday-dev/gameday/gameday/system"
	"github.com/gameday-dev/gameday/matrix"
	"github.com/gameday-dev/gameday/scenarios"
)

// block is one ```yaml block of a page.
type block struct {
	page string
	line int // of the opening fence
	kind string
	text string
}

var marker = regexp.MustCompile(`^<!-- check: ([a-z ]+) -->$`)

// blocks reads every ```yaml block of a Markdown page with the marker on
// the line before it ("" when there is none).
func blocks(t *testing.T, page string) []block {
	t.Helper()
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	var (
		out          []block
		prev         string
		in           *block
		body         strings.Builder
		sc           = bufio.NewScanner(bytes.NewReader(data))
		n            int
		fenceIndents string
	)
	for sc.Scan() {
		n++
		line := sc.Text()
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case in == nil && trimmed == "```yaml":
			in = &block{page: page, line: n}
			fenceIndents = line[:len(line)-len(trimmed)]
			if m := marker.FindStringSubmatch(strings.TrimSpace(prev)); m != nil {
				in.kind = m[1]
			}
			body.Reset()
		case in != nil && trimmed == "```":
			in.text = body.String()
			out = append(out, *in)
			in = nil
		case in != nil:
			body.WriteString(strings.TrimPrefix(line, fenceIndents) + "\n")
		}
		if strings.TrimSpace(line) != "" {
			prev = line
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if in != nil {
		t.Errorf("%s:%d: a ```yaml block that is never closed", page, in.line)
	}
	return out
}

// The small valid files a part is laid over when its page has no whole
// file of that kind before it.
const (
	baseScenario = `name: doc
matrix: {dependency: payment, failure: latency}
stock: 100
load: {stages: [{duration: 30s, target: 10}]}
faults: [{name: slow, target: payment, at: 5s, for: 10s, toxic: {type: latency, attributes: {latency: 1s}}}]
`
	baseSystem = "name: doc\nbase_url: http://127.0.0.1:8080\nsku: sku-1\npurchase:\n  steps:\n    - url: /checkout\n      answers:\n        - {status: 200, outcome: confirmed}\n"
)

// docVars are the values the docs' ${NAME}s stand for here; a name the
// docs use and this map lacks fails the test rather than reading this
// machine's environment.
var docVars = map[string]string{
	"INV_LISTEN":        "127.0.0.1:16401",
	"INV_UPSTREAM":      "127.0.0.1:6379",
	"MYSQL_PW":          "secret",
	"POD_ADMIN_URL":     "http://127.0.0.1:8080",
	"POD_DATABASE_URL":  "postgres://drill@127.0.0.1/shop",
	"SHOP_ADMIN_TOKEN":  "token",
	"SHOP_DATABASE_URL": "postgres://drill@127.0.0.1/shop",
}

var varName = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-[^}]*)?\}`)

// overlay lays part's top-level keys over base's and returns the YAML of
// the result.
func overlay(base, part string) (string, error) {
	var b, p map[string]any
	if err := yaml.Unmarshal([]byte(base), &b); err != nil {
		return "", err
	}
	if err := yaml.Unmarshal([]byte(part), &p); err != nil {
		return "", err
	}
	for k, v := range p {
		b[k] = v
	}
	out, err := yaml.Marshal(b)
	return string(out), err
}

func TestDocsYAML(t *testing.T) {
	pages, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, "../README.md")
	seen := 0
	for _, page := range pages {
		lastScenario, lastSystem := baseScenario, baseSystem
		for _, b := range blocks(t, page) {
			seen++
			where := fmt.Sprintf("%s:%d", b.page, b.line)
			var node yaml.Node
			if err := yaml.Unmarshal([]byte(b.text), &node); err != nil {
				t.Errorf("%s: not YAML: %v", where, err)
				continue
			}
			for _, m := range varName.FindAllStringSubmatch(b.text, -1) {
				if _, ok := docVars[m[1]]; !ok && m[2] == "" {
					t.Errorf("%s: ${%s} has no value in this test's docVars", where, m[1])
				}
			}
			text := b.text
			var err error
			switch b.kind {
			case "scenario part":
				text, err = overlay(lastScenario, b.text)
			case "expect":
				text, err = overlay(lastScenario, "expect:\n"+indent(b.text))
			case "system part":
				text, err = overlay(lastSystem, b.text)
			case "step":
				text, err = asStep(baseSystem, b.text)
			}
			if err != nil {
				t.Errorf("%s: %v", where, err)
				continue
			}
			switch b.kind {
			case "scenario", "scenario part", "expect":
				if _, err = scenarios.Parse(where, []byte(text)); err == nil && b.kind != "expect" {
					lastScenario = text
				}
			case "system", "system part", "step":
				if _, err = system.Parse(where, []byte(text), docVars); err == nil {
					lastSystem = text
				}
			case "matrix":
				_, err = matrix.Parse(where, []byte(text))
			case "yaml":
			case "":
				err = fmt.Errorf("no marker: put <!-- check: KIND --> on the line before the block (see docs/docs_test.go)")
			default:
				err = fmt.Errorf("unknown marker %q", b.kind)
			}
			if err != nil {
				t.Errorf("%s (%s):\n%v\n--- as checked:\n%s", where, b.kind, err, text)
			}
		}
	}
	if seen == 0 {
		t.Fatal("no ```yaml block found: the test reads nothing")
	}
}

// asStep puts a step's keys in place of base's first purchase step.
func asStep(base, keys string) (string, error) {
	var b map[string]any
	var step map[string]any
	if err := yaml.Unmarshal([]byte(base), &b); err != nil {
		return "", err
	}
	if err := yaml.Unmarshal([]byte(dedent(keys)), &step); err != nil {
		return "", err
	}
	steps := b["purchase"].(map[string]any)["steps"].([]any)
	first := steps[0].(map[string]any)
	if _, ok := step["url"]; !ok {
		step["url"] = first["url"]
	}
	steps[0] = step
	out, err := yaml.Marshal(b)
	return string(out), err
}

// dedent removes the indentation of s's first line from every line.
func dedent(s string) string {
	lines := strings.Split(s, "\n")
	pre := lines[0][:len(lines[0])-len(strings.TrimLeft(lines[0], " "))]
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(l, pre)
	}
	return strings.Join(lines, "\n")
}

func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = "  " + l
	}
	return strings.Join(lines, "\n") + "\n"
}
