package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/gameday-dev/gameday/gameday"
	"github.com/gameday-dev/gameday/gameday/system"
	"github.com/gameday-dev/gameday/matrix"
	"github.com/gameday-dev/gameday/scenarios"
)

// drillCmd is "gameday drill": print what is due and roughly how long it
// takes, run it (the rows that are due, or all), record each result in the
// matrix, then exit as "gameday matrix check". With -dry-run it stops
// after the plan.
func drillCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("drill", stderr)
	rf := addRunFlags(fs)
	file := fs.String("matrix", matrix.DefaultFile, "the resiliency matrix")
	all := fs.Bool("all", false, "run every row, not only those due")
	dry := fs.Bool("dry-run", false, "print what would run and roughly how long it takes, and run nothing (as gameday matrix due, with these flags)")
	describe(fs, "gameday drill [-matrix FILE] [-all] [-dry-run] [flags of gameday run]", `
Runs the drills of the resiliency matrix's rows that are due: rows never run,
and rows whose last run is at least nine tenths of their cadence old (-all:
every row). Each scenario runs once, in the matrix's order, even when several
rows name it. Before it starts, drill prints the rows it will run, why each is
due, and roughly how long that takes; -dry-run prints just that.

Each result is written into the last block of its scenario's rows, except a
drill that could not be carried out (verdict error). Then drill exits as
gameday matrix check would, or worse when a drill did: 0 every row proven on
schedule, 1 a promise failed or a row needs attention, 2 bad input or a drill
not carried out, 3 a drill inconclusive (interrupted, aborted, steady state
failed). It takes every flag of gameday run (-env, -time-scale, -quiet, ...);
the commit recorded is -commit, else $GAMEDAY_COMMIT.`)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	o, err := rf.options("drill", stderr)
	if err != nil {
		return err
	}
	m, err := matrixLoad("drill", *file, stderr)
	if err != nil {
		return err
	}
	p := planDrill(m, *file, *all, matrixNow(), o.TimeScale, o.System)
	p.print(stdout)
	if p.err != nil {
		return p.err
	}
	if *dry {
		fmt.Fprintln(stdout, "dry run: nothing was run, the matrix is unchanged")
		return nil
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	worst, err := drills(ctx, p.scs, o, stdout, func(sc *scenarios.Scenario, rec *gameday.Record) error {
		return recordInMatrix(*file, p.refs[sc], rec, *rf.commit, stdout)
	})
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		return exitError{exitInconclusive, "interrupted"}
	}
	// The exit is the worse of the drills' and the check's: a drill that
	// could not be carried out is not recorded, so the check alone would
	// stay green until the row went overdue.
	checkErr := matrixCheck([]string{*file}, stdout, stderr)
	if worse(worst, errCode(checkErr)) == worst && worst != exitOK {
		return codeError(worst)
	}
	return checkErr
}

// drillPlan is what gameday drill runs: the rows (those due, or every row),
// each row's scenario once, and roughly how long that takes. gameday drill,
// drill -dry-run and gameday matrix due all print it.
type drillPlan struct {
	file      string
	all       bool
	timeScale float64
	rows      []plannedRow
	// scs are the scenarios to run, each once, in the matrix's order;
	// refs maps each to the scenario as its rows name it.
	scs  []*scenarios.Scenario
	refs map[*scenarios.Scenario]string
	// load is the sum of the scenarios' load stages; settle the sum of
	// their longest waits for the books to settle.
	load, settle time.Duration
	// err is the first row whose scenario cannot be run: drill refuses
	// to start (exit 2).
	err error
}

// plannedRow is a row of the plan: why it runs, and a note when its
// drill is another row's or cannot run.
type plannedRow struct {
	row  matrix.Row
	why  string
	note string
}

// planDrill plans the drill of m at now: the rows matrix.Due returns, or
// with all every row. timeScale (1 for none) and sys (nil: each scenario's
// own) are the drill's, for the estimate.
func planDrill(m *matrix.Matrix, file string, all bool, now time.Time, timeScale float64, sys *system.System) *drillPlan {
	p := &drillPlan{file: file, all: all, timeScale: timeScale, refs: map[*scenarios.Scenario]string{}}
	due := matrix.Due(m, now)
	if all {
		why := map[string]string{}
		for _, d := range due {
			why[d.Row.ID()] = d.Why
		}
		for _, r := range m.Rows() {
			w, ok := why[r.ID()]
			switch {
			case ok:
			case r.Last == nil:
				w = "not due (cadence " + r.Cadence + "): -all"
			default:
				w = "not due (last run " + r.Last.At.UTC().Format("2006-01-02 15:04 UTC") + ", cadence " + r.Cadence + "): -all"
			}
			p.rows = append(p.rows, plannedRow{row: r, why: w})
		}
	} else {
		for _, d := range due {
			p.rows = append(p.rows, plannedRow{row: d.Row, why: d.Why})
		}
	}
	first := map[string]string{} // scenario argument → the first row naming it
	for i := range p.rows {
		pr := &p.rows[i]
		arg := m.ScenarioArg(pr.row)
		if id, ok := first[arg]; ok {
			pr.note = "same drill as " + id
			continue
		}
		first[arg] = pr.row.ID()
		sc, err := scenarios.Lookup(arg)
		if err != nil {
			pr.note = "cannot run: " + err.Error()
			if p.err == nil {
				p.err = usageError{fmt.Errorf("%s:%d: scenario: %w", file, pr.row.Line, err)}
			}
			continue
		}
		p.scs = append(p.scs, sc)
		p.refs[sc] = arg
		load, settle := drillTime(sc, timeScale, sys)
		p.load += load
		p.settle += settle
	}
	return p
}

// drillTime is roughly how long the runner spends on a drill of sc: the
// load (its stages, at timeScale), and at most how long it then waits for
// the books to settle: for a described system its settle_after, or at most
// its settle_within; for the reference checkout the runner's own bound
// (gameday.SettleLimit, of the scaled scenario). Setup and the prediction
// are not counted.
func drillTime(sc *scenarios.Scenario, timeScale float64, sys *system.System) (load, settle time.Duration) {
	if timeScale > 0 && timeScale != 1 {
		sc = sc.Scaled(1, timeScale)
	}
	load = sc.TotalDuration()
	if sys == nil && sc.System != "" {
		s, err := system.LoadFile(sc.SystemPath(), nil)
		if err != nil {
			// The drill will say what is wrong; its system's default.
			return load, system.DefaultSettleWithin
		}
		sys = s
	}
	if sys != nil {
		if sys.Books.Settled == nil {
			return load, sys.Books.SettleAfter.D()
		}
		return load, sys.Books.SettleWithin.D()
	}
	return load, gameday.SettleLimit(sc)
}

// print lists the plan's rows and the estimate.
func (p *drillPlan) print(w io.Writer) {
	if len(p.rows) == 0 {
		if p.all {
			fmt.Fprintf(w, "%s: no row to drill\n", p.file)
		} else {
			fmt.Fprintf(w, "%s: no drill is due\n", p.file)
		}
		return
	}
	which := "due"
	if p.all {
		which = "to drill (-all)"
	}
	fmt.Fprintf(w, "%s: %s %s; %s, in this order:\n", p.file, plural(len(p.rows), "row"), which, plural(len(p.scs), "drill"))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, r := range p.rows {
		why := r.why
		if r.note != "" {
			why += "; " + r.note
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", r.row.ID(), r.row.Scenario, why)
	}
	tw.Flush()
	if len(p.scs) == 0 {
		return
	}
	stages := "scenarios' load stages"
	if p.timeScale != 1 {
		stages += fmt.Sprintf(" at -time-scale %g", p.timeScale)
	}
	fmt.Fprintf(w, "time: about %s, the %s (approximate: setup, the prediction and settling the books add seconds a drill as a rule; at most %s more if every drill waits its full limit for its books to settle)\n",
		roughly(p.load), stages, roughly(p.settle))
}

// roughly formats an estimate to the second: "9m50s", "32m", "1h5m".
func roughly(d time.Duration) string {
	s := d.Round(time.Second).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// plural is "1 row", "2 rows".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// errCode is the exit code main gives err.
func errCode(err error) int {
	var ue usageError
	var ee exitError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ue):
		return exitUsage
	case errors.As(err, &ee):
		return ee.code
	}
	return exitFailed
}

// recordInMatrix writes a run's result into the rows of its scenario. A run
// that could not be carried out proves nothing and is not recorded; a
// scenario no row names is reported, not an error.
func recordInMatrix(file, ref string, rec *gameday.Record, commit string, stdout io.Writer) error {
	if rec.Verdict == gameday.VerdictError {
		return nil
	}
	res := matrix.FromRecord(rec, commit)
	res.Scenario = ref
	err := matrix.Update(file, func(m *matrix.Matrix) error {
		_, err := m.Apply(res)
		return err
	})
	switch {
	case errors.Is(err, matrix.ErrNoRow):
		fmt.Fprintf(stdout, "  note: %s has no row for %s: %v\n", file, ref, err)
		return nil
	case err != nil:
		return usageError{fmt.Errorf("update %s: %w", file, err)}
	}
	fmt.Fprintf(stdout, "  recorded in %s\n", file)
	return nil
}
