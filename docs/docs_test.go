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
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/gameday-dev/gameday/gameday/system"
	"github.com/gameday-dev/gameday/internal/mdblocks"
	"github.com/gameday-dev/gameday/matrix"
	"github.com/gameday-dev/gameday/scenarios"
)

// blocks reads every ```yaml block of a Markdown page.
func blocks(t *testing.T, page string) []mdblocks.Block {
	t.Helper()
	out, err := mdblocks.ReadLang(page, "yaml")
	if err != nil {
		t.Fatal(err)
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
	"INV_LISTEN":           "127.0.0.1:16401",
	"INV_UPSTREAM":         "127.0.0.1:6379",
	"MYSQL_PW":             "secret",
	"CACHE_REDIS_PASSWORD": "secret",
	"POD_ADMIN_URL":        "http://127.0.0.1:8080",
	"POD_DATABASE_URL":     "postgres://drill@127.0.0.1/shop",
	"SHOP_ADMIN_TOKEN":     "token",
	"SHOP_DATABASE_URL":    "postgres://drill@127.0.0.1/shop",
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
			where := fmt.Sprintf("%s:%d", b.Page, b.Line)
			var node yaml.Node
			if err := yaml.Unmarshal([]byte(b.Text), &node); err != nil {
				t.Errorf("%s: not YAML: %v", where, err)
				continue
			}
			for _, m := range varName.FindAllStringSubmatch(b.Text, -1) {
				if _, ok := docVars[m[1]]; !ok && m[2] == "" {
					t.Errorf("%s: ${%s} has no value in this test's docVars", where, m[1])
				}
			}
			text := b.Text
			var err error
			switch b.Mark {
			case "scenario part":
				text, err = overlay(lastScenario, b.Text)
			case "expect":
				text, err = overlay(lastScenario, "expect:\n"+indent(b.Text))
			case "system part":
				text, err = overlay(lastSystem, b.Text)
			case "step":
				text, err = asStep(baseSystem, b.Text)
			}
			if err != nil {
				t.Errorf("%s: %v", where, err)
				continue
			}
			switch b.Mark {
			case "scenario", "scenario part", "expect":
				if _, err = scenarios.Parse(where, []byte(text)); err == nil && b.Mark != "expect" {
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
				err = fmt.Errorf("unknown marker %q", b.Mark)
			}
			if err != nil {
				t.Errorf("%s (%s):\n%v\n--- as checked:\n%s", where, b.Mark, err, text)
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

// link is a Markdown link's target: [text](target).
var link = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// anchors are the ids GitHub gives a page's headings: lower case, spaces
// as hyphens, punctuation other than hyphens and underscores dropped, a
// repeated heading numbered (-1, -2, ...).
func anchors(t *testing.T, page string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	ids, seen, fence := map[string]bool{}, map[string]int{}, false
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fence = !fence
		}
		if fence || !strings.HasPrefix(line, "#") {
			continue
		}
		text := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(text) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		id := b.String()
		if n := seen[id]; n > 0 {
			ids[fmt.Sprintf("%s-%d", id, n)] = true
		} else {
			ids[id] = true
		}
		seen[id]++
	}
	return ids
}

// Every link between the README and the docs reaches a file that exists,
// and a heading that exists when it names one.
func TestDocsLinks(t *testing.T) {
	pages, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, "../README.md", "../CHANGELOG.md")
	checked := 0
	for _, page := range pages {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		fence := false
		for n, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				fence = !fence
			}
			if fence {
				continue
			}
			for _, m := range link.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				file, anchor, _ := strings.Cut(target, "#")
				dest := page
				if file != "" {
					dest = filepath.Join(filepath.Dir(page), file)
				}
				checked++
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s:%d: link to %s: no such file", page, n+1, target)
					continue
				}
				if anchor != "" && strings.HasSuffix(dest, ".md") && !anchors(t, dest)[anchor] {
					t.Errorf("%s:%d: link to %s: %s has no heading #%s", page, n+1, target, dest, anchor)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no link found: the test reads nothing")
	}
}
