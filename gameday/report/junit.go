package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"

	"github.com/gameday-dev/gameday/gameday/runrecord"
)

// The JUnit format as CI systems read it (Jenkins, GitLab, GitHub
// reporters): a <testsuites> root holding one <testsuite> per drill.

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
	SystemOut  string          `xml:"system-out,omitempty"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitProblem `xml:"skipped,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// JUnit renders the run as JUnit XML: one test suite named
// "gameday.<scenario>" with a test case per expectation and per
// invariant check (classname the scenario, name the promise; a broken
// one is a failure whose message is what was observed, one not checked
// is skipped, with what it needs). A run that could
// not be carried out adds a test case "run" in error, an inconclusive
// one a skipped "run", each with the reason.
func JUnit(w io.Writer, r *runrecord.Record) error {
	if r == nil {
		return errNilRecord
	}
	secs := "0"
	if !r.StartedAt.IsZero() && r.FinishedAt.After(r.StartedAt) {
		secs = strconv.FormatFloat(r.FinishedAt.Sub(r.StartedAt).Seconds(), 'f', 3, 64)
	}
	s := junitSuite{Name: "gameday." + r.Scenario, Time: secs}
	if !r.StartedAt.IsZero() {
		s.Timestamp = r.StartedAt.UTC().Format("2006-01-02T15:04:05")
	}
	s.Properties = []junitProperty{
		{"file", r.File},
		{"verdict", string(r.Verdict)},
		{"seed", strconv.FormatInt(r.Seed, 10)},
		{"rate_scale", strconv.FormatFloat(r.RateScale, 'f', -1, 64)},
		{"time_scale", strconv.FormatFloat(r.TimeScale, 'f', -1, 64)},
		{"matrix", r.Matrix.Dependency + "/" + r.Matrix.Failure},
		{"environment", r.Environment.Kind},
	}
	switch r.Verdict {
	case runrecord.VerdictError:
		s.Cases = append(s.Cases, junitCase{Name: "run", Classname: r.Scenario, Time: "0",
			Error: &junitProblem{Message: r.Reason, Type: "error", Text: r.Reason}})
		s.Errors++
	case runrecord.VerdictInconclusive:
		s.Cases = append(s.Cases, junitCase{Name: "run", Classname: r.Scenario, Time: "0",
			Skipped: &junitProblem{Message: "inconclusive: " + r.Reason}})
		s.Skipped++
	}
	add := func(kind string, e runrecord.ExpectationResult) {
		c := junitCase{Name: e.Promise, Classname: r.Scenario, Time: "0"}
		switch {
		case e.NotChecked:
			c.Skipped = &junitProblem{Message: "not checked: needs " + e.Needs}
			s.Skipped++
		case e.Unjudged != "":
			c.Skipped = &junitProblem{Message: "not judged: the books were " + e.Unjudged + "; observed: " + e.Observed}
			s.Skipped++
		case !e.Held:
			text := "observed: " + e.Observed
			if e.Window != "" {
				text += "\nwindow: " + e.Window
			}
			c.Failure = &junitProblem{Message: e.Observed, Type: kind, Text: text}
			s.Failures++
		}
		s.Cases = append(s.Cases, c)
	}
	for _, e := range r.Expectations {
		add("expectation", e)
	}
	for _, e := range r.InvariantChecks {
		add("invariant", e)
	}
	s.Tests = len(s.Cases)
	for _, n := range r.Notes {
		s.SystemOut += "note: " + n + "\n"
	}
	root := junitSuites{Name: "gameday", Tests: s.Tests, Failures: s.Failures, Errors: s.Errors,
		Skipped: s.Skipped, Time: s.Time, Suites: []junitSuite{s}}

	if _, err := io.WriteString(w, xml.Header); err != nil {
		return fmt.Errorf("render junit.xml: %w", err)
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(root); err != nil {
		return fmt.Errorf("render junit.xml: %w", err)
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return fmt.Errorf("render junit.xml: %w", err)
	}
	return nil
}
