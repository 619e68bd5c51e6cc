package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gameday-dev/gameday/gameday/runrecord"
)

func TestMarkdownGolden(t *testing.T) {
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Markdown(&b, readFixture(t, name)); err != nil {
				t.Fatal(err)
			}
			golden(t, name+".summary.md", b.Bytes())
		})
	}
}

// TestMarkdownDeterministic: maps (outcomes, breakers, invariant counts)
// must not leak their random order into the bytes.
func TestMarkdownDeterministic(t *testing.T) {
	for _, name := range fixtures {
		r := readFixture(t, name)
		r.Invariants.OrdersToldFailed, r.Invariants.ConfirmedWithoutOrder = 1, 2
		var first bytes.Buffer
		if err := Markdown(&first, r); err != nil {
			t.Fatal(err)
		}
		for range 20 {
			var b bytes.Buffer
			if err := Markdown(&b, r); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b.Bytes(), first.Bytes()) {
				t.Fatalf("%s: two renderings of one record differ", name)
			}
		}
	}
}

// TestMarkdownContent checks what each fixture's summary must say,
// whatever its layout: the verdict and why, every broken promise with
// what was seen, every nonzero invariant, what was not checked, the
// breakers and the link to report.html.
func TestMarkdownContent(t *testing.T) {
	cases := []struct {
		fixture string
		has     []string
		hasNot  []string
	}{
		// Every promise held: said so, and nothing is listed as broken.
		{fixture: "pass", has: []string{
			"## ✓ PASS: payment-latency",
			"**Why:** every promise held\n",
			"**Promises:** 5 of 5 expectations held; 7 of 7 invariants held.",
			"### Broken promises (0)",
			// payment opened three times and closed once, 3.321 s to 6.685 s.
			"| payment | 3 | 1 | 3.364 s | 0.321 s | 0.68 s | closed |",
			"| inventory | 0 | 0 | 0 s | – | – | closed |",
			"**Load:** 292 arrivals scheduled, 292 started, 0 dropped · checkout p95 151.4 ms",
		}, hasNot: []string{"✗", "### Notes"}},
		// A broken promise and a broken invariant, an invariant not
		// checked, a fault not applied, notes.
		{fixture: "fail", has: []string{
			"## ✗ FAIL: payment-timeouts",
			"**Why:** broken: at least 80% of shoppers arriving after the fault: outcome confirmed; charged after leaving is at most 0",
			"### Broken promises (2)",
			"| at least 80% of shoppers arriving after the fault: outcome confirmed | after | 74.2% (167 of 225) |",
			"| charged after leaving is at most 0 | – | 1 |",
			"| charged after leaving is at most 0 | 1 | ✗ **broken** |",
			"| double charges is at most 0 | – | – not checked: needs books.charges |",
			"5 of 6 expectations held; 5 of 6 invariants held, 1 not checked",
			"fault kill-inventory (inventory process kill) was not applied: kill inventory redis",
			"environment: redis-server not found",
			"the books settled after 2.4 s",
			"3 answers no rule understood (counted as errors): order status 418",
			"system pyshop",
			"| sessions | 2 | 2 |",
		}},
		// Nothing ran: the error and that nothing was checked.
		{fixture: "error", has: []string{
			"## ! ERROR: redis-killed",
			`**Why:** set up the environment: start redis-server: exec: "redis-server": executable file not found in \$PATH`,
			"**Load:** none was driven.",
			"None: no promise was checked.",
			"No invariant was checked.",
			"No breaker was recorded.",
		}, hasNot: []string{"| Promise |", "Stock "}},
		// Aborted: the guard's reason; what was broken is still shown,
		// marked as not failing the run; the dropped invariant counted.
		{fixture: "inconclusive", has: []string{
			"## ? INCONCLUSIVE: payment-down",
			"**Why:** aborted by the guard: 62% of shoppers ended badly",
			"The run is inconclusive: these were seen, but do not fail it.",
			"| the payment breaker opens within 2s of fault provider-gone's start | – | did not open |",
			"| dropped is at most 0 | 2 | ✗ **broken** |",
			"96 arrivals scheduled, 94 started, 2 dropped",
			"no payment URL: charges were not reconciled",
		}},
	}
	for _, c := range cases {
		t.Run(c.fixture, func(t *testing.T) {
			var b bytes.Buffer
			if err := Markdown(&b, readFixture(t, c.fixture)); err != nil {
				t.Fatal(err)
			}
			got := b.String()
			for _, want := range append(c.has, "full report: [report.html](report.html)") {
				if !strings.Contains(got, want) {
					t.Errorf("summary lacks %q:\n%s", want, got)
				}
			}
			for _, bad := range c.hasNot {
				if strings.Contains(got, bad) {
					t.Errorf("summary has %q:\n%s", bad, got)
				}
			}
		})
	}
}

// TestMarkdownNonzeroInvariant: a count no promise of the record covers
// (a record older than the check) is still shown when it is not zero.
func TestMarkdownNonzeroInvariant(t *testing.T) {
	r := readFixture(t, "pass")
	r.Invariants.OrdersToldFailed = 4
	var b bytes.Buffer
	if err := Markdown(&b, r); err != nil {
		t.Fatal(err)
	}
	if want := "| orders told failed | 4 | counted; no promise about it in this run |"; !strings.Contains(b.String(), want) {
		t.Errorf("summary lacks %q:\n%s", want, b.String())
	}
}

// TestMarkdownEscaping renders a record whose every free text tries to
// break its table row, open a code span, add HTML, a link, emphasis or a
// heading: each row must keep its cells, and nothing from the record may
// become markup.
func TestMarkdownEscaping(t *testing.T) {
	const evil = "a|b`code`\n# heading\r\n<script>x</script> [link](http://x) *em* _u_ ~s~ &amp; \x1b]0;"
	r := hostile()
	r.Notes = append(r.Notes, evil, "# a note that would be a heading", "1. a note that would be a list")
	r.Reason = evil
	r.Expectations = append(r.Expectations, runrecord.ExpectationResult{Promise: evil, Observed: evil, Window: evil})
	r.InvariantChecks = append(r.InvariantChecks, runrecord.ExpectationResult{Promise: evil, Observed: evil},
		runrecord.ExpectationResult{Promise: evil, NotChecked: true, Needs: evil})
	var b bytes.Buffer
	if err := Markdown(&b, r); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, bad := range []string{"<script", "</script", "\x1b", "\x00", "\r", "[link](", "\n# ", "\n- # ", "\n- 1. ", " &amp; "} {
		if strings.Contains(got, bad) {
			t.Errorf("summary has %q:\n%s", bad, got)
		}
	}
	for _, line := range strings.Split(got, "\n") {
		if !strings.HasPrefix(line, "|") {
			if strings.HasPrefix(line, "#") && !strings.HasPrefix(line, "## ") && !strings.HasPrefix(line, "### ") {
				t.Errorf("a heading from the record: %q", line)
			}
			continue
		}
		// Every table row has as many cells as its header: an unescaped
		// pipe would add one.
		cells := len(strings.Split(strings.ReplaceAll(line, `\|`, ""), "|")) - 2
		if cells != 3 && cells != 7 {
			t.Errorf("a table row of %d cells: %q", cells, line)
		}
		if n := strings.Count(line, "`") - strings.Count(line, "\\`"); n != 0 {
			t.Errorf("an unescaped backtick: %q", line)
		}
	}
	if !strings.Contains(got, `a\|b\`+"`"+`code\`+"`"+` # heading &lt;script&gt;x&lt;/script&gt; \[link\](http://x) \*em\* \_u\_ \~s\~ &amp;amp; �\]0;`) {
		t.Errorf("the hostile text is not escaped as expected:\n%s", got)
	}
}

func TestMarkdownText(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain words", "plain words"},           // untouched
		{"a\nb\r\n\tc  d", "a b c d"},            // one line
		{"p|q", `p\|q`},                          // a pipe ends no cell
		{"`x`", "\\`x\\`"},                       // no code span
		{"<b>&", "&lt;b&gt;&amp;"},               // no HTML, no entity
		{"# h", `\# h`},                          // no heading
		{"- x", `\- x`},                          // no list
		{"12. x", `12\. x`},                      // no ordered list
		{"12 x", "12 x"},                         // a number is a number
		{"nul\x00esc\x1b", "nul\uFFFDesc\uFFFD"}, // no control character
		{strings.Repeat("é", mdMaxText+5), strings.Repeat("é", mdMaxText) + "…"}, // clipped
	}
	for _, c := range cases {
		if got := md(c.in); got != c.want {
			t.Errorf("md(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestMarkdownLink(t *testing.T) {
	cases := []struct{ href, want string }{
		{"report.html", "[report.html](report.html)"},
		{"runs/a b (1)/report.html", "[runs/a b (1)/report.html](runs/a%20b%20%281%29/report.html)"},
		{"x:y/report.html", "[x:y/report.html](./x:y/report.html)"}, // not a scheme
		{"/abs/[x]/report.html", `[/abs/\[x\]/report.html](/abs/%5Bx%5D/report.html)`},
	}
	for _, c := range cases {
		var b bytes.Buffer
		if err := MarkdownLinked(&b, readFixture(t, "pass"), c.href); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "full report: "+c.want+"\n") {
			t.Errorf("link to %q: want %q in\n%s", c.href, c.want, b.String())
		}
	}
}

func TestBreakerFigures(t *testing.T) {
	tr := func(s string, at int64) runrecord.Transition { return runrecord.Transition{State: s, AtMS: at} }
	cases := []struct {
		name string
		in   []runrecord.Transition
		end  int64
		want breakerFigures
	}{
		{name: "never opened", end: 10000, want: breakerFigures{last: "closed"}},
		{name: "opened, probed, closed: open until closed",
			in:   []runrecord.Transition{tr("open", 2000), tr("half-open", 3000), tr("open", 3100), tr("half-open", 4000), tr("closed", 4500)},
			end:  10000,
			want: breakerFigures{opens: 2, closes: 1, openMS: 2500, last: "closed"}},
		{name: "still open at the end: open to the end of the load",
			in: []runrecord.Transition{tr("open", 8000)}, end: 10000,
			want: breakerFigures{opens: 1, openMS: 2000, last: "open"}},
		{name: "out of order, and past the end",
			in: []runrecord.Transition{tr("closed", 12000), tr("open", 4000)}, end: 10000,
			want: breakerFigures{opens: 1, closes: 1, openMS: 8000, last: "closed"}},
	}
	for _, c := range cases {
		if got := breakerFiguresOf(c.in, c.end); got != c.want {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}

// TestWriteSummary: Write puts summary.md beside the other two, as
// Markdown renders it, and leaves no temporary file behind.
func TestWriteSummary(t *testing.T) {
	dir := t.TempDir()
	r := readFixture(t, "inconclusive")
	if err := Write(dir, r); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := Markdown(&want, r); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("summary.md differs from what Markdown renders")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "junit.xml report.html summary.md" {
		t.Errorf("run directory holds %v, want the three reports only", names)
	}
	if err := Markdown(&want, nil); err == nil {
		t.Errorf("Markdown of a nil record succeeded")
	}
}

// A kept value sent empty is said right after the verdict's why, in both
// reports: what the system answered those requests may be what the
// verdict counts, so it is read before the figures.
func TestEmptyKeptLeadsTheReports(t *testing.T) {
	r := readFixture(t, "fail")
	r.EmptyKept = []runrecord.EmptyKept{{Step: "poll", Kept: "order", Requests: 61, KeptBy: "step place's keep.order (json: orderId)"}}
	var md, page bytes.Buffer
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	if err := HTML(&page, r); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"markdown": md.String(), "html": page.String()} {
		why, warn := strings.Index(out, r.Reason), strings.Index(out, "Warning:")
		if why < 0 || warn < why || !strings.Contains(out[warn:], "step poll sent 61 requests") {
			t.Errorf("%s: the warning is not right after the why (why at %d, warning at %d)", name, why, warn)
		}
	}
}

// An invariant shown, not judged (its books were read before they
// settled), is neither held nor broken in the summary and the JUnit file:
// its count is there, with why it was not judged.
func TestUnjudgedInvariantIsNeitherHeldNorBroken(t *testing.T) {
	r := readFixture(t, "inconclusive")
	r.Expectations = nil
	r.InvariantChecks = []runrecord.ExpectationResult{
		{Promise: "oversold is at most 0", Invariant: "oversold", Observed: "0", Held: true},
		{Promise: "lost units is at most 0", Invariant: "lost_units", Observed: "2", Unjudged: "read before they settled"},
	}
	var md, ju bytes.Buffer
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| lost units is at most 0 | 2 | – not judged: the books were read before they settled |", "1 of 1 invariant held, 1 not judged"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, md.String())
		}
	}
	if strings.Contains(md.String(), "✗ **broken**") {
		t.Errorf("summary shows an unjudged count as broken:\n%s", md.String())
	}
	if err := JUnit(&ju, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ju.String(), `<skipped message="not judged: the books were read before they settled; observed: 2">`) || strings.Contains(ju.String(), "<failure") {
		t.Errorf("junit:\n%s", ju.String())
	}
}
