package matrix

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gameday-dev/gameday/scenarios"
)

// The starter has one promise per catalogue scenario, weekly, with TODOs
// for owner and runbook, and parses; its rows check as never run (golden
// file).
func TestStarter(t *testing.T) {
	scs, err := scenarios.Catalogue()
	if err != nil {
		t.Fatal(err)
	}
	data, err := Starter(scs)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "starter.golden.yaml", data)
	m := mustParse(t, "starter.yaml", data)
	rows := m.Rows()
	if len(rows) != len(scs) {
		t.Fatalf("%d rows for %d scenarios", len(rows), len(scs))
	}
	for i, r := range rows {
		sc := scs[i]
		if r.Scenario != sc.Name || r.Dependency != sc.Matrix.Dependency || r.Failure != sc.Matrix.Failure ||
			r.Status != StatusPromise || r.Cadence != "weekly" || r.Owner != "TODO" || r.Runbook != "TODO" ||
			r.Expectation != sc.Summary() || r.Last != nil {
			t.Errorf("row %d: %+v", i, r)
		}
	}
	for _, p := range Check(m, now) {
		if p.Reason != ReasonOverdue || !strings.Contains(p.Detail, "never run") {
			t.Errorf("starter: %s", p)
		}
	}
	if bytes.Count(data, []byte("# TODO")) != 2*len(scs) {
		t.Error("the TODOs are not marked")
	}
}

// A scenario from a file is named by its path.
func TestStarterScenarioFile(t *testing.T) {
	sc, err := scenarios.LoadFile("testdata/check/drills/custom.yaml")
	if err != nil {
		t.Fatal(err)
	}
	data, err := Starter([]*scenarios.Scenario{sc})
	if err != nil {
		t.Fatal(err)
	}
	if r := mustParse(t, "m.yaml", data).Rows()[0]; r.Scenario != "testdata/check/drills/custom.yaml" || r.ID() != "payment/slow" {
		t.Errorf("row %+v", r)
	}
}

// A scenario without a description leaves its row's expectation to the
// owner, asked in words that fit the row: a baseline has no failing
// dependency to speak of ("when none fails this way", it said).
func TestStarterAsksForTheExpectation(t *testing.T) {
	for _, c := range []struct{ dep, failure, want string }{
		{"none", "baseline", "TODO: what shoppers experience in a sale with no fault (the baseline)"},
		{"payment", "latency", "TODO: what shoppers experience when payment fails this way (latency)"},
	} {
		sc := &scenarios.Scenario{Name: "s", File: "drills/s.yaml", Matrix: scenarios.MatrixRow{Dependency: c.dep, Failure: c.failure}}
		data, err := Starter([]*scenarios.Scenario{sc})
		if err != nil {
			t.Fatal(err)
		}
		if r := mustParse(t, "m.yaml", data).Rows()[0]; r.Expectation != c.want {
			t.Errorf("%s/%s: expectation %q, want %q", c.dep, c.failure, r.Expectation, c.want)
		}
	}
}
