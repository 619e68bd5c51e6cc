package matrix

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"
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

// Any date renders, however far from now: a run dated in the year 2400
// (past what a time.Duration holds) once sent span into endless recursion.
func TestRenderAnyDate(t *testing.T) {
	for _, at := range []string{"2400-01-01T00:00:00Z", "0001-01-01T00:00:00Z", "2026-12-02T09:00:30Z", "9999-12-31T23:59:59Z"} {
		src := "version: 1\nrows:\n  - dependency: payment\n    failure: latency\n    cadence: weekly\n    scenario: payment-latency\n    last: {at: " + at + ", verdict: pass}\n"
		m := mustParse(t, "m.yaml", []byte(src))
		var a, b bytes.Buffer
		if err := RenderTable(&a, m, now); err != nil {
			t.Fatalf("%s: table: %v", at, err)
		}
		if err := RenderMarkdown(&b, m, now); err != nil {
			t.Fatalf("%s: markdown: %v", at, err)
		}
		if future := at > "2026-12-02T09:00:00Z"; future != strings.Contains(a.String(), "in the future") {
			t.Errorf("%s: table says in the future = %v:\n%s", at, !future, a.String())
		}
	}
	for _, d := range []time.Duration{math.MinInt64, math.MaxInt64, -90 * time.Minute} {
		if s := span(d); s == "" {
			t.Errorf("span(%d) is empty", d)
		}
	}
}
