package matrix

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/runrecord"
)

// checks are a run's invariant_checks: every invariant judged, except
// those named not checked.
func checks(notChecked ...string) []runrecord.ExpectationResult {
	var out []runrecord.ExpectationResult
	for _, n := range Invariants() {
		c := runrecord.ExpectationResult{Invariant: n, Held: true}
		for _, x := range notChecked {
			if x == n {
				c = runrecord.ExpectationResult{Invariant: n, NotChecked: true, Observed: "not checked"}
			}
		}
		out = append(out, c)
	}
	return out
}

// A run that failed on wrong amounts, stranded units and orders told
// failed keeps those counts in its row, beside its verdict, and names the
// invariants it could not check instead of writing zeros for them; show
// and check say both. Applying the same run again changes nothing; the
// rows' other fields and comments are as they were.
func TestEveryInvariantTheRunJudgedIsKept(t *testing.T) {
	rec := &runrecord.Record{Scenario: "payment-down", File: "catalogue:payment-down", StartedAt: runAt, Verdict: runrecord.VerdictFail,
		Invariants:      runrecord.Invariants{WrongAmounts: 2, StrandedUnits: 1, OrdersToldFailed: 3, Dropped: 4},
		InvariantChecks: checks("lost_units", "units_created")}
	m := mustParse(t, "handwritten.yaml", readFile(t, "testdata/handwritten.yaml"))
	if _, err := m.Apply(FromRecord(rec, "3f2a1c9")); err != nil {
		t.Fatal(err)
	}
	out, _ := m.Marshal()
	_, row, _ := strings.Cut(string(out), "failure: 'down'")
	row, _, _ = strings.Cut(row, "# --- sessions")
	want := `      figures:
        oversold: 0
        double_charges: 0
        charges_without_order: 0
        orders_without_charge: 0
        charged_after_leaving: 0
        orders_told_failed: 3
        confirmed_without_order: 0
        wrong_amounts: 2
        stranded_units: 1
        sold_without_order: 0
        orders_beyond_sold: 0
        accepted_not_finished: 0
        dropped: 4
        not_checked: [lost_units, units_created]
`
	if !strings.Contains(row, want) {
		t.Errorf("the row of payment-down:\n%s\nwant its figures:\n%s", row, want)
	}
	if !strings.Contains(row, "    owner: team-checkout     # pager: #checkout-oncall\n") {
		t.Errorf("a hand-written field or its comment changed:\n%s", row)
	}
	again := mustParse(t, "handwritten.yaml", out)
	if changed, err := again.Apply(FromRecord(rec, "3f2a1c9")); err != nil || changed {
		t.Errorf("the same run again: changed %v, %v", changed, err)
	}
	var table bytes.Buffer
	now := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	if err := RenderTable(&table, again, now); err != nil {
		t.Fatal(err)
	}
	books := "orders_told_failed 3, wrong_amounts 2, stranded_units 1, dropped 4; not checked: lost_units, units_created"
	if !strings.Contains(table.String(), "  "+books+"  ") || !strings.Contains(table.String(), "failed; books: "+books+"\n") {
		t.Errorf("show:\n%s\nwant %q", table.String(), books)
	}
}

// A run that judged no invariant (interrupted before it read its books)
// writes no count, every invariant not checked, and show says so: its
// zeros would have read as books that balanced.
func TestARunThatReadNoBooksClaimsNoCount(t *testing.T) {
	rec := &runrecord.Record{Scenario: "payment-down", File: "catalogue:payment-down", StartedAt: runAt, Verdict: runrecord.VerdictInconclusive,
		Reason: "interrupted before setup"}
	m := mustParse(t, "handwritten.yaml", readFile(t, "testdata/handwritten.yaml"))
	if _, err := m.Apply(FromRecord(rec, "")); err != nil {
		t.Fatal(err)
	}
	out, _ := m.Marshal()
	_, row, _ := strings.Cut(string(out), "failure: 'down'")
	row, _, _ = strings.Cut(row, "# --- sessions")
	want := "      figures:\n        not_checked: [" + strings.Join(Invariants(), ", ") + "]\n"
	if !strings.Contains(row, want) || strings.Contains(row, "oversold: 0") {
		t.Errorf("the row of payment-down:\n%s\nwant its figures:\n%s", row, want)
	}
	var table bytes.Buffer
	if err := RenderTable(&table, mustParse(t, "m.yaml", out), time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "inconclusive  -       - / 8s                 -           not checked  ") {
		t.Errorf("show:\n%s", table.String())
	}
}

// A not_checked list is read strictly: invariants only, each once, none
// also given a count; each problem names the file, line and field. A file
// written before the matrix kept every invariant (six counts) still loads.
func TestNotCheckedIsReadStrictly(t *testing.T) {
	row := "version: 1\nrows:\n  - dependency: payment\n    failure: down\n    cadence: weekly\n    scenario: payment-down\n    last:\n      at: 2026-12-01T02:00:03Z\n      verdict: fail\n      figures:\n"
	for _, c := range []struct{ figures, want string }{
		{"        not_checked: [wrong_amount]\n", `m.yaml:11: rows[0].last.figures.not_checked[0]: "wrong_amount" is not an invariant`},
		{"        not_checked: [dropped, dropped]\n", `m.yaml:11: rows[0].last.figures.not_checked[1]: "dropped" is listed twice`},
		{"        wrong_amounts: 0\n        not_checked: [wrong_amounts]\n", "m.yaml:11: rows[0].last.figures.wrong_amounts: given a count, though not_checked lists it"},
		{"        not_checked: wrong_amounts\n", "m.yaml:11: rows[0].last.figures.not_checked: want a list of invariants"},
		{"        stranded_units: -1\n", "m.yaml:11: rows[0].last.figures.stranded_units: want a count (0 or more)"},
	} {
		_, err := Parse("m.yaml", []byte(row+c.figures))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v\nwant %q", c.figures, err, c.want)
		}
	}
	old := row + "        oversold: 1\n        lost_units: 0\n        double_charges: 0\n        charges_without_order: 2\n        orders_without_charge: 0\n        charged_after_leaving: 0\n"
	m, err := Parse("m.yaml", []byte(old))
	if err != nil {
		t.Fatal(err)
	}
	if f := m.Rows()[0].Last.Figures; f.Oversold != 1 || f.ChargesWithoutOrder != 2 || len(f.NotChecked) != 0 {
		t.Errorf("an old row's figures: %+v", f)
	}
}

// The file docs/matrix.md shows parses, its figures as the page says.
func TestTheFileInTheDocs(t *testing.T) {
	doc, err := os.ReadFile("../docs/matrix.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n## The file\n")
	_, block, ok2 := strings.Cut(section, "```yaml\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("docs/matrix.md has no yaml block under \"The file\"")
	}
	m, err := Parse("matrix.md", []byte(block))
	if err != nil {
		t.Fatal(err)
	}
	f := m.Rows()[0].Last.Figures
	if !slices.Equal(f.NotChecked, []string{"wrong_amounts"}) || *f.CheckoutP95During != 140*time.Millisecond {
		t.Errorf("figures %+v", f)
	}
	for _, b := range f.judged() {
		if !strings.Contains(block, "        "+b.name+": 0\n") {
			t.Errorf("the docs' block gives no count of %s", b.name)
		}
	}
}

// An invariant the run only showed (its books were read before they
// settled, or with a fault in place) is not a judged count: the row names
// it with those not checked instead of keeping a count that would read as
// judged.
func TestAnUnjudgedCountIsNotKept(t *testing.T) {
	cs := checks()
	for i := range cs {
		if cs[i].Invariant == "lost_units" {
			cs[i] = runrecord.ExpectationResult{Invariant: "lost_units", Observed: "3", Unjudged: "read before they settled"}
		}
	}
	rec := &runrecord.Record{Scenario: "payment-down", StartedAt: runAt, Verdict: runrecord.VerdictInconclusive,
		Invariants: runrecord.Invariants{LostUnits: 3}, InvariantChecks: cs}
	f := FromRecord(rec, "3f2a1c9").Figures
	if f.LostUnits != 0 || !slices.Contains(f.NotChecked, "lost_units") || slices.Contains(f.NotChecked, "oversold") {
		t.Errorf("figures of a run whose lost units were shown, not judged: %+v", f)
	}
}
