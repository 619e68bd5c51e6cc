package report

import (
	"bytes"
	"encoding/xml"
	"flag"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gameday-dev/gameday/gameday/runrecord"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// fixtures are the run records in testdata/, by name:
//   - pass: a real payment-latency run at time scale 0.3;
//   - fail: a real payment-timeouts run, edited to break a promise and an
//     invariant, with a second fault overlapping the first, one fault that
//     could not be applied, and notes;
//   - error: a run whose environment could not be set up (no load at all);
//   - inconclusive: a run stopped by its abort guard, with dropped arrivals.
var fixtures = []string{"pass", "fail", "error", "inconclusive"}

func readFixture(tb testing.TB, name string) *runrecord.Record {
	tb.Helper()
	r, err := runrecord.Read(filepath.Join("testdata", name+".run.json"))
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run go test -update and review the diff):\n%s", path, firstDiff(got, want))
	}
}

// firstDiff shows where got and want first differ: the line, and the
// text around the first differing character of it.
func firstDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			col := 0
			for col < len(gl) && col < len(wl) && gl[col] == wl[col] {
				col++
			}
			return "line " + strconv.Itoa(i+1) + ", column " + strconv.Itoa(col+1) + ":\n got: …" + around(gl, col) + "…\nwant: …" + around(wl, col) + "…"
		}
	}
	return "(same lines)"
}

func around(s string, col int) string {
	return s[max(0, col-60):min(len(s), col+100)]
}

func TestJUnitGolden(t *testing.T) {
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := JUnit(&b, readFixture(t, name)); err != nil {
				t.Fatal(err)
			}
			golden(t, name+".junit.xml", b.Bytes())
		})
	}
}

func TestHTMLGolden(t *testing.T) {
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := HTML(&b, readFixture(t, name)); err != nil {
				t.Fatal(err)
			}
			golden(t, name+".report.html", b.Bytes())
		})
	}
}

// TestDeterministic renders each fixture many times: maps (outcomes,
// breakers) must not leak their random order into the bytes.
func TestDeterministic(t *testing.T) {
	for _, name := range fixtures {
		r := readFixture(t, name)
		var first, firstJ bytes.Buffer
		if err := HTML(&first, r); err != nil {
			t.Fatal(err)
		}
		if err := JUnit(&firstJ, r); err != nil {
			t.Fatal(err)
		}
		for range 20 {
			var b, j bytes.Buffer
			if err := HTML(&b, r); err != nil {
				t.Fatal(err)
			}
			if err := JUnit(&j, r); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b.Bytes(), first.Bytes()) || !bytes.Equal(j.Bytes(), firstJ.Bytes()) {
				t.Fatalf("%s: two renderings of one record differ", name)
			}
		}
	}
}

// The JUnit shape CI systems read, parsed back.
type parsedSuites struct {
	Tests    int `xml:"tests,attr"`
	Failures int `xml:"failures,attr"`
	Errors   int `xml:"errors,attr"`
	Skipped  int `xml:"skipped,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Errors   int    `xml:"errors,attr"`
		Skipped  int    `xml:"skipped,attr"`
		Cases    []struct {
			Name      string `xml:"name,attr"`
			Classname string `xml:"classname,attr"`
			Failure   *struct {
				Message string `xml:"message,attr"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
			} `xml:"error"`
			Skipped *struct {
				Message string `xml:"message,attr"`
			} `xml:"skipped"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func TestJUnitContent(t *testing.T) {
	cases := []struct {
		fixture                          string
		tests, failures, errors, skipped int
		runCase                          string // "", "error" or "skipped": the "run" test case
	}{
		// Five promises and seven invariants, all held.
		{fixture: "pass", tests: 12},
		// One promise and one invariant broken.
		{fixture: "fail", tests: 13, failures: 2, skipped: 1},
		// Nothing ran: only the "run" case, in error.
		{fixture: "error", tests: 1, errors: 1, runCase: "error"},
		// Aborted: "run" skipped; the broken promise and invariant are
		// still reported as they were recorded.
		{fixture: "inconclusive", tests: 5, failures: 2, skipped: 1, runCase: "skipped"},
	}
	for _, c := range cases {
		t.Run(c.fixture, func(t *testing.T) {
			r := readFixture(t, c.fixture)
			var b bytes.Buffer
			if err := JUnit(&b, r); err != nil {
				t.Fatal(err)
			}
			var got parsedSuites
			if err := xml.Unmarshal(b.Bytes(), &got); err != nil {
				t.Fatalf("junit.xml is not valid XML: %v", err)
			}
			if len(got.Suites) != 1 {
				t.Fatalf("%d test suites, want 1", len(got.Suites))
			}
			s := got.Suites[0]
			if s.Name != "gameday."+r.Scenario {
				t.Errorf("suite name %q, want %q", s.Name, "gameday."+r.Scenario)
			}
			if s.Tests != c.tests || s.Failures != c.failures || s.Errors != c.errors || s.Skipped != c.skipped || len(s.Cases) != c.tests {
				t.Errorf("suite counts tests=%d (cases %d) failures=%d errors=%d skipped=%d, want %d %d %d %d",
					s.Tests, len(s.Cases), s.Failures, s.Errors, s.Skipped, c.tests, c.failures, c.errors, c.skipped)
			}
			if got.Tests != s.Tests || got.Failures != s.Failures || got.Errors != s.Errors || got.Skipped != s.Skipped {
				t.Errorf("root counts differ from the suite's")
			}
			byName := map[string]int{}
			for i, tc := range s.Cases {
				byName[tc.Name] = i
				if tc.Classname != r.Scenario {
					t.Errorf("case %q classname %q, want %q", tc.Name, tc.Classname, r.Scenario)
				}
			}
			for _, e := range append(append([]runrecord.ExpectationResult{}, r.Expectations...), r.InvariantChecks...) {
				i, ok := byName[e.Promise]
				if !ok {
					t.Errorf("no test case for %q", e.Promise)
					continue
				}
				tc := s.Cases[i]
				switch {
				case e.NotChecked && (tc.Skipped == nil || tc.Failure != nil):
					t.Errorf("%q not checked: want it skipped, got %+v", e.Promise, tc)
				case e.NotChecked:
				case e.Held && tc.Failure != nil:
					t.Errorf("%q held but is a failure", e.Promise)
				case !e.Held && (tc.Failure == nil || tc.Failure.Message != e.Observed):
					t.Errorf("%q broken: want a failure with message %q, got %+v", e.Promise, e.Observed, tc.Failure)
				}
			}
			i, ok := byName["run"]
			switch c.runCase {
			case "":
				if ok {
					t.Errorf("a %s run has a \"run\" test case", r.Verdict)
				}
			case "error":
				if !ok || s.Cases[i].Error == nil || s.Cases[i].Error.Message != r.Reason {
					t.Errorf("want a \"run\" case in error with the reason")
				}
			case "skipped":
				if !ok || s.Cases[i].Skipped == nil || !strings.Contains(s.Cases[i].Skipped.Message, r.Reason) {
					t.Errorf("want a skipped \"run\" case with the reason")
				}
			}
		})
	}
}

// hostile is a record whose every free text tries to break out of its
// place in HTML, SVG or XML, with characters XML cannot hold.
func hostile() *runrecord.Record {
	const evil = `<script>alert("x")</script>&amp;"'` + "\x00\x1b]0;"
	op := int64(5)
	return &runrecord.Record{
		Scenario: "evil" + evil, File: evil, Verdict: runrecord.VerdictFail, Reason: evil,
		Environment: runrecord.Environment{Kind: evil, Notes: []string{evil}},
		Outcomes:    map[string]int{evil: 1},
		Breakers: map[string]runrecord.BreakerRecord{evil: {
			Transitions: []runrecord.Transition{{State: evil, AtMS: 500}}, OpenedAfterMS: &op}},
		Faults:          []runrecord.FaultRecord{{Name: evil, Target: evil, Kind: evil, StartMS: 100, EndMS: 900, Error: ""}},
		Expectations:    []runrecord.ExpectationResult{{Promise: evil, Observed: evil, Window: evil}},
		InvariantChecks: []runrecord.ExpectationResult{{Promise: evil + "2", Held: true, Observed: evil}},
		Notes:           []string{evil},
		Series: runrecord.Series{Seconds: 2, Arrivals: []int{1, 0}, Outcomes: map[string][]int{evil: {0, 1}},
			P50MS: []float64{1, 2}, P95MS: []float64{1, 2}, P99MS: []float64{1, 2}},
	}
}

func TestEscaping(t *testing.T) {
	r := hostile()
	var h bytes.Buffer
	if err := HTML(&h, r); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(strings.ToLower(h.String()), "<script") {
		t.Errorf("report.html has a <script> element from the record")
	}
	var j bytes.Buffer
	if err := JUnit(&j, r); err != nil {
		t.Fatal(err)
	}
	var got parsedSuites
	if err := xml.Unmarshal(j.Bytes(), &got); err != nil {
		t.Fatalf("junit.xml from hostile text is not valid XML: %v\n%s", err, j.String())
	}
	if len(got.Suites) != 1 || len(got.Suites[0].Cases) != 2 {
		t.Fatalf("want 1 suite of 2 cases, got %+v", got)
	}
}

// externalRef finds anything that would make the page load a resource:
// an element that fetches, a src or href attribute, a CSS url() other
// than a reference into the page, an @import, or an attribute holding
// an absolute URL (the SVG namespace name, which is never fetched,
// aside). A URL in the text, such as the checkout's address, is fine.
var externalRef = regexp.MustCompile(`(?i)<script|<link|<img|<iframe|<object|<embed|<image|<use\b|\ssrc=|\shref=|url\((?:[^#)]|$)|@import|=["']?\s*(?:https?:)?//`)

// TestSelfContained checks each fixture's page refers to nothing outside
// itself. Chromium's log can show file loads but not tell the page's
// network requests from its own background traffic, so this static
// check is what guards against remote resources.
func TestSelfContained(t *testing.T) {
	for _, name := range append(fixtures, "hostile") {
		r := hostile()
		if name != "hostile" {
			r = readFixture(t, name)
		}
		var b bytes.Buffer
		if err := HTML(&b, r); err != nil {
			t.Fatal(err)
		}
		page := strings.ReplaceAll(b.String(), `xmlns="http://www.w3.org/2000/svg"`, "")
		if m := externalRef.FindAllString(page, 5); m != nil {
			t.Errorf("%s: report.html refers to outside resources: %q", name, m)
		}
	}
}

// TestOddSeries feeds series that do not match their length, negative
// and non-finite figures: the SVG must stay valid (no NaN, no negative
// size), which a browser would otherwise report as console errors.
func TestOddSeries(t *testing.T) {
	r := readFixture(t, "pass")
	r.Series.Seconds = 14 // longer than every array
	r.Series.Arrivals = r.Series.Arrivals[:3]
	r.Series.P95MS = []float64{math.NaN(), math.Inf(1), -4, 12}
	r.Series.Outcomes["weird"] = []int{-3, 2}
	r.Faults = append(r.Faults, runrecord.FaultRecord{Name: "backwards", StartMS: 9000, EndMS: 2000},
		runrecord.FaultRecord{Name: "late", StartMS: 90000, EndMS: 95000})
	r.Breakers["payment"] = runrecord.BreakerRecord{Transitions: []runrecord.Transition{
		{State: "open", AtMS: 7000}, {State: "closed", AtMS: -5}, {State: "half-open", AtMS: 7000}}}
	var b bytes.Buffer
	if err := HTML(&b, r); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	for _, bad := range []string{"NaN", "Inf", `width="-`, `height="-`} {
		if strings.Contains(s, bad) {
			i := strings.Index(s, bad)
			t.Errorf("report has %q: …%s…", bad, s[max(0, i-120):min(len(s), i+40)])
		}
	}
}

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	r := readFixture(t, "fail")
	if err := Write(dir, r); err != nil {
		t.Fatal(err)
	}
	var h, j bytes.Buffer
	if err := HTML(&h, r); err != nil {
		t.Fatal(err)
	}
	if err := JUnit(&j, r); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string][]byte{HTMLFile: h.Bytes(), JUnitFile: j.Bytes()} {
		got, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what %s renders", file, file)
		}
	}
	if err := Write(filepath.Join(dir, "missing"), r); err == nil {
		t.Errorf("Write into a directory that does not exist succeeded")
	}
	if err := Write(dir, nil); err == nil {
		t.Errorf("Write of a nil record succeeded")
	}
}

func TestNiceAxis(t *testing.T) {
	cases := []struct {
		max       float64
		n         int
		integer   bool
		step, top float64
	}{
		{max: 30, n: 5, integer: true, step: 10, top: 30},       // exact multiple
		{max: 31, n: 5, integer: true, step: 10, top: 40},       // rounds up
		{max: 864.23, n: 5, step: 200, top: 1000},               // latency
		{max: 3, n: 5, integer: true, step: 1, top: 3},          // counts never step below 1
		{max: 0.7, n: 5, step: 0.2, top: 0.8},                   // fractional
		{max: 0, n: 5, integer: true, step: 1, top: 1},          // empty chart
		{max: math.NaN(), n: 5, integer: true, step: 1, top: 1}, // no data
		{max: 18, n: 12, integer: true, step: 2, top: 18},       // the time axis
	}
	for _, c := range cases {
		step, top := niceAxis(c.max, c.n, c.integer)
		if math.Abs(step-c.step) > 1e-9 || math.Abs(top-c.top) > 1e-9 {
			t.Errorf("niceAxis(%v, %d, %v) = %v, %v; want %v, %v", c.max, c.n, c.integer, step, top, c.step, c.top)
		}
	}
}

func TestBreakerSpans(t *testing.T) {
	tr := func(s string, at int64) runrecord.Transition { return runrecord.Transition{State: s, AtMS: at} }
	cases := []struct {
		name string
		in   []runrecord.Transition
		want []stateSpan
	}{
		{name: "no transition: closed throughout", want: []stateSpan{{"closed", 0, 10}}},
		{name: "opens and closes",
			in:   []runrecord.Transition{tr("open", 2000), tr("half-open", 3000), tr("closed", 3500)},
			want: []stateSpan{{"closed", 0, 2}, {"open", 2, 3}, {"half-open", 3, 3.5}, {"closed", 3.5, 10}}},
		{name: "open from the start and to the end",
			in:   []runrecord.Transition{tr("open", 0)},
			want: []stateSpan{{"open", 0, 10}}},
		{name: "out of order and past the end are sorted and cut",
			in:   []runrecord.Transition{tr("closed", 12000), tr("open", 4000)},
			want: []stateSpan{{"closed", 0, 4}, {"open", 4, 10}}},
	}
	for _, c := range cases {
		got := breakerSpans(c.in, 10)
		if len(got) != len(c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s: got %v, want %v", c.name, got, c.want)
				break
			}
		}
	}
}

func TestFitText(t *testing.T) {
	cases := []struct {
		in    string
		width float64
		want  string
	}{
		{"payment", 100, "payment"},                       // fits
		{"a-very-long-dependency-name", 72, "a-very-lo…"}, // 10 characters of 7.2 units
		{"wide", 1, "w…"},                                 // never empty
	}
	for _, c := range cases {
		if got := fitText(c.in, c.width, 12); got != c.want {
			t.Errorf("fitText(%q, %v) = %q, want %q", c.in, c.width, got, c.want)
		}
	}
}

// A replayed run's traffic chart draws the recording × scale beside the
// arrivals sent, and its table lists both; a run without one has neither.
func TestReplayChartsTheRecording(t *testing.T) {
	r := readFixture(t, "pass")
	var plain bytes.Buffer
	if err := HTML(&plain, r); err != nil {
		t.Fatal(err)
	}
	r.Series.Planned = make([]float64, r.Series.Seconds)
	for i := range r.Series.Planned {
		r.Series.Planned[i] = float64(get(r.Series.Arrivals, i)) + 0.25
	}
	var b bytes.Buffer
	if err := HTML(&b, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"the recording × scale (dashed)", `<th scope="col">the recording × scale</th>`, "times the rate scale", `stroke-dasharray="6 3"`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the replayed run's report has no %q", want)
		}
		if strings.Contains(plain.String(), want) {
			t.Errorf("a run without a replay's report has %q", want)
		}
	}
}
