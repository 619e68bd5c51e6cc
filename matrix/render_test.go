package matrix

import (
	"bytes"
	"strings"
	"testing"
)

// The terminal table and the Markdown of the hand-written matrix after the
// drills, at a fixed now (golden files).
func TestRenderGolden(t *testing.T) {
	m := mustParse(t, "handwritten.yaml", readFile(t, "testdata/handwritten.yaml"))
	for _, r := range drills[1:] { // payment-latency keeps its run of 2026-11-29
		if _, err := m.Apply(r); err != nil {
			t.Fatal(err)
		}
	}
	var table, markdown bytes.Buffer
	if err := RenderTable(&table, m, now); err != nil {
		t.Fatal(err)
	}
	golden(t, "show.txt.golden", table.Bytes())
	if err := RenderMarkdown(&markdown, m, now); err != nil {
		t.Fatal(err)
	}
	golden(t, "show.md.golden", markdown.Bytes())
}

// Text from the file cannot break the Markdown table or inject HTML.
func TestRenderMarkdownEscapes(t *testing.T) {
	src := `version: 1
rows:
  - dependency: payment
    failure: latency
    expectation: "a | b <script>alert(1)</script>\nsecond line"
    runbook: "javascript:alert(1)"
    owner: "[click](http://evil.example)"
    cadence: weekly
    scenario: payment-latency
`
	var b bytes.Buffer
	if err := RenderMarkdown(&b, mustParse(t, "m.yaml", []byte(src)), now); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, bad := range []string{"<script>", "a | b", "[click](", "](javascript"} {
		if strings.Contains(out, bad) {
			t.Errorf("Markdown holds %q:\n%s", bad, out)
		}
	}
	var row string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "| payment/latency") {
			row = l
		}
	}
	if n := strings.Count(strings.ReplaceAll(row, `\|`, ""), "|"); n != 12 {
		t.Errorf("row has %d cell separators, want 12: %s", n, row)
	}
}

// An empty matrix renders without a table.
func TestRenderEmpty(t *testing.T) {
	m := mustParse(t, "m.yaml", []byte("version: 1\nrows: []\n"))
	var a, b bytes.Buffer
	if err := RenderTable(&a, m, now); err != nil || !strings.Contains(a.String(), "no rows") {
		t.Errorf("table: %v %q", err, a.String())
	}
	if err := RenderMarkdown(&b, m, now); err != nil || strings.Contains(b.String(), "| Row") {
		t.Errorf("markdown: %v %q", err, b.String())
	}
}
