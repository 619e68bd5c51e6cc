package matrix

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/gameday-dev/gameday/internal/strictyaml"
	"github.com/gameday-dev/gameday/scenarios"
)

// DefaultFile is the matrix file the commands read and write when none is
// named: resiliency-matrix.yaml in the current directory.
const DefaultFile = "resiliency-matrix.yaml"

// MaxSize is the largest matrix file Parse and Load accept, in bytes.
const MaxSize = strictyaml.MaxSize

// Version is the file format version this package reads and writes.
const Version = 1

// Statuses of a row.
const (
	// StatusPromise is a row the checkout is expected to honour: its drill
	// must pass.
	StatusPromise = "promise"
	// StatusKnownGap is a failure mode the checkout is known not to handle
	// yet: its drill is expected to fail, and passing is news.
	StatusKnownGap = "known_gap"
)

// Verdicts a row's last run can have, as in run.json.
const (
	VerdictPass         = "pass"
	VerdictFail         = "fail"
	VerdictError        = "error"
	VerdictInconclusive = "inconclusive"
)

// Row is one dependency × failure mode of the matrix, as written in the
// file. Every field but Last is the user's; gameday writes only Last.
type Row struct {
	// Dependency and Failure identify the row (payment/latency); each pair
	// appears once. Required.
	Dependency string
	Failure    string
	// Expectation is what shoppers experience while it happens, in words.
	Expectation string
	// RecoveryObjective is how soon after the failure ends the checkout
	// must be back, as a duration string ("10s"); "" when none is set.
	RecoveryObjective string
	// Runbook links the procedure for this failure; Owner is who is paged.
	Runbook string
	Owner   string
	// Cadence is how often the drill must run: daily, weekly, monthly or a
	// duration such as "72h". Required.
	Cadence string
	// Scenario proves the row: a catalogue name or the path of a scenario
	// file, relative to the matrix file's directory. Required.
	Scenario string
	// Status is StatusPromise (the default) or StatusKnownGap.
	Status string
	// Last is the last run of the scenario; nil when it has never run.
	Last *Last
	// Line is the row's line in the file (its first key).
	Line int
}

// Last is the last run of a row's scenario: gameday's part of the row.
type Last struct {
	// At is when the run started, in UTC, to the second.
	At time.Time
	// Commit is the commit of the system under test, when known.
	Commit string
	// Verdict is pass, fail, error or inconclusive.
	Verdict string
	// Figures are what the run measured.
	Figures Figures
}

// Figures are the measurements of a run that the matrix keeps. Durations
// are nil when not measured (the breaker did not open or close, or the
// scenario has no fault on the row's dependency) and are written rounded
// to 10ms. The counts are the run's invariants, every one it judged; those
// it could not judge, for want of the facts, are named in NotChecked and
// their counts are not written (a zero there would read as correct books).
// A count a file does not give (one written before it was kept) reads as
// zero.
type Figures struct {
	// BreakerOpenedAfter: from the start of the fault to the breaker of
	// the row's dependency opening.
	BreakerOpenedAfter *time.Duration
	// RecoveredAfter: from the end of the fault to that breaker closing.
	RecoveredAfter *time.Duration
	// CheckoutP95During: p95 latency of checkout requests sent while a
	// fault was in place.
	CheckoutP95During *time.Duration

	Oversold              int64
	LostUnits             int64
	DoubleCharges         int64
	ChargesWithoutOrder   int64
	OrdersWithoutCharge   int64
	ChargedAfterLeaving   int64
	OrdersToldFailed      int64
	ConfirmedWithoutOrder int64
	UnitsCreated          int64
	WrongAmounts          int64
	StrandedUnits         int64
	SoldWithoutOrder      int64
	OrdersBeyondSold      int64
	AcceptedNotFinished   int64
	Dropped               int64

	// NotChecked names the invariants the run could not judge (run.json's
	// invariant_checks marked not_checked), in the order of [Invariants];
	// nil when it judged them all.
	NotChecked []string
}

// Invariants are the names of the counts Figures keeps, in the order the
// file lists them: those of run.json's invariants.
func Invariants() []string { return slices.Clone(invariantNames) }

var invariantNames = []string{"oversold", "lost_units", "double_charges", "charges_without_order", "orders_without_charge", "charged_after_leaving",
	"orders_told_failed", "confirmed_without_order", "units_created", "wrong_amounts", "stranded_units",
	"sold_without_order", "orders_beyond_sold", "accepted_not_finished", "dropped"}

// Matrix is a parsed matrix file. It keeps the file's text and its YAML
// node tree, so that an update rewrites only the `last` blocks it changes
// and every comment, blank line and hand-written field survives byte for
// byte. A Matrix is not safe for concurrent use; [Update] serialises
// writers of one file.
type Matrix struct {
	file     string       // name in errors, as given to Parse
	dir      string       // directory scenario paths are relative to
	data     []byte       // the text: as parsed, or as changed by Apply
	doc      *yaml.Node   // the document node of data
	rows     []Row        // decoded rows, in file order
	rowNodes []*yaml.Node // the mapping node of each row
}

// File returns the name the matrix was parsed or loaded under.
func (m *Matrix) File() string { return m.file }

// Rows returns a copy of the rows, in file order.
func (m *Matrix) Rows() []Row {
	out := make([]Row, len(m.rows))
	for i, r := range m.rows {
		out[i] = r.clone()
	}
	return out
}

// Marshal returns the file's text: byte for byte what was parsed, with the
// `last` blocks changed by Apply. The result always parses.
func (m *Matrix) Marshal() ([]byte, error) {
	return slices.Clone(m.data), nil
}

// ScenarioArg returns what to give [scenarios.Lookup] to run the row's
// scenario from the current directory: the catalogue name unchanged, or
// the path joined to the matrix file's directory.
func (m *Matrix) ScenarioArg(r Row) string {
	if !scenarios.IsPath(r.Scenario) || filepath.IsAbs(r.Scenario) {
		return r.Scenario
	}
	return filepath.Join(m.dir, r.Scenario)
}

// matches reports whether the row's scenario is the scenario a run was
// given: the same catalogue name, or paths naming the same file (the
// row's relative to the matrix, the run's relative to the current
// directory).
func (m *Matrix) matches(r Row, scenario string) bool {
	scenario = strings.TrimPrefix(scenario, "catalogue:")
	rowIsPath, runIsPath := scenarios.IsPath(r.Scenario), scenarios.IsPath(scenario)
	if !rowIsPath || !runIsPath {
		return !rowIsPath && !runIsPath && r.Scenario == scenario
	}
	a, errA := filepath.Abs(m.ScenarioArg(r))
	b, errB := filepath.Abs(scenario)
	if errA != nil || errB != nil {
		return filepath.Clean(m.ScenarioArg(r)) == filepath.Clean(scenario)
	}
	return a == b
}

// ID returns "dependency/failure", the row's name in messages.
func (r Row) ID() string { return r.Dependency + "/" + r.Failure }

func (r Row) clone() Row {
	if r.Last != nil {
		l := r.Last.clone()
		r.Last = &l
	}
	return r
}

func (l Last) clone() Last {
	l.Figures = l.Figures.clone()
	return l
}

func (f Figures) clone() Figures {
	f.BreakerOpenedAfter = cloneDur(f.BreakerOpenedAfter)
	f.RecoveredAfter = cloneDur(f.RecoveredAfter)
	f.CheckoutP95During = cloneDur(f.CheckoutP95During)
	f.NotChecked = slices.Clone(f.NotChecked)
	return f
}

func cloneDur(d *time.Duration) *time.Duration {
	if d == nil {
		return nil
	}
	v := *d
	return &v
}

// equal reports whether two lasts say the same.
func (l *Last) equal(o *Last) bool {
	if l == nil || o == nil {
		return l == o
	}
	return l.At.Equal(o.At) && l.Commit == o.Commit && l.Verdict == o.Verdict && l.Figures.equal(o.Figures)
}

func (f Figures) equal(o Figures) bool {
	return durEqual(f.BreakerOpenedAfter, o.BreakerOpenedAfter) &&
		durEqual(f.RecoveredAfter, o.RecoveredAfter) &&
		durEqual(f.CheckoutP95During, o.CheckoutP95During) &&
		slices.Equal(f.books(), o.books()) && slices.Equal(f.NotChecked, o.NotChecked)
}

func durEqual(a, b *time.Duration) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// rowEqual compares two rows, ignoring their lines.
func rowEqual(a, b Row) bool {
	la, lb := a.Last, b.Last
	a.Last, b.Last, a.Line, b.Line = nil, nil, 0, 0
	return a == b && la.equal(lb)
}

// count is one invariant's count, by its name in the file.
type count struct {
	name  string
	count int64
}

// books lists the invariant counts by their names in the file, in its
// order, those not checked included (as zero).
func (f Figures) books() []count {
	return []count{
		{"oversold", f.Oversold},
		{"lost_units", f.LostUnits},
		{"double_charges", f.DoubleCharges},
		{"charges_without_order", f.ChargesWithoutOrder},
		{"orders_without_charge", f.OrdersWithoutCharge},
		{"charged_after_leaving", f.ChargedAfterLeaving},
		{"orders_told_failed", f.OrdersToldFailed},
		{"confirmed_without_order", f.ConfirmedWithoutOrder},
		{"units_created", f.UnitsCreated},
		{"wrong_amounts", f.WrongAmounts},
		{"stranded_units", f.StrandedUnits},
		{"sold_without_order", f.SoldWithoutOrder},
		{"orders_beyond_sold", f.OrdersBeyondSold},
		{"accepted_not_finished", f.AcceptedNotFinished},
		{"dropped", f.Dropped},
	}
}

// counts maps each invariant's name in the file to its count in f.
func (f *Figures) counts() map[string]*int64 {
	return map[string]*int64{
		"oversold": &f.Oversold, "lost_units": &f.LostUnits, "double_charges": &f.DoubleCharges,
		"charges_without_order": &f.ChargesWithoutOrder, "orders_without_charge": &f.OrdersWithoutCharge,
		"charged_after_leaving": &f.ChargedAfterLeaving, "orders_told_failed": &f.OrdersToldFailed,
		"confirmed_without_order": &f.ConfirmedWithoutOrder, "units_created": &f.UnitsCreated,
		"wrong_amounts": &f.WrongAmounts, "stranded_units": &f.StrandedUnits, "sold_without_order": &f.SoldWithoutOrder,
		"orders_beyond_sold": &f.OrdersBeyondSold, "accepted_not_finished": &f.AcceptedNotFinished, "dropped": &f.Dropped,
	}
}

// judged lists the counts the run judged: every one not in NotChecked.
func (f Figures) judged() []count {
	var out []count
	for _, b := range f.books() {
		if !slices.Contains(f.NotChecked, b.name) {
			out = append(out, b)
		}
	}
	return out
}

// booksText says what the books showed, for show and check: the counts
// above zero ("oversold 1, charges_without_order 2", or "ok"), and the
// invariants not checked; "not checked" alone when none was judged.
func (f Figures) booksText() string {
	if len(f.NotChecked) == len(invariantNames) {
		return "not checked"
	}
	var bad []string
	for _, b := range f.judged() {
		if b.count > 0 {
			bad = append(bad, fmt.Sprintf("%s %d", b.name, b.count))
		}
	}
	out := "ok"
	if len(bad) > 0 {
		out = strings.Join(bad, ", ")
	}
	if len(f.NotChecked) > 0 {
		out += "; not checked: " + strings.Join(f.NotChecked, ", ")
	}
	return out
}
