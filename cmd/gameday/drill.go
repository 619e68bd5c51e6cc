package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/gameday-dev/gameday/gameday"
	"github.com/gameday-dev/gameday/matrix"
	"github.com/gameday-dev/gameday/scenarios"
)

// drillCmd is "gameday drill": run the matrix rows that are due (or all),
// record each result in the matrix, then exit as "gameday matrix check".
func drillCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("drill", stderr)
	rf := addRunFlags(fs)
	file := fs.String("matrix", matrix.DefaultFile, "the resiliency matrix")
	all := fs.Bool("all", false, "run every row, not only those due")
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
	rows := m.Rows()
	if !*all {
		rows = matrix.Due(m, matrixNow())
	}
	// Each scenario once, in the matrix's order, even when rows share it.
	var scs []*scenarios.Scenario
	refs := map[*scenarios.Scenario]string{}
	seen := map[string]bool{}
	for _, r := range rows {
		arg := m.ScenarioArg(r)
		if seen[arg] {
			continue
		}
		seen[arg] = true
		sc, err := scenarios.Lookup(arg)
		if err != nil {
			return usageError{fmt.Errorf("%s:%d: scenario: %w", *file, r.Line, err)}
		}
		scs = append(scs, sc)
		refs[sc] = arg
	}
	if len(scs) == 0 {
		fmt.Fprintf(stdout, "%s: no drill is due\n", *file)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	worst, err := drills(ctx, scs, o, stdout, func(sc *scenarios.Scenario, rec *gameday.Record) error {
		return recordInMatrix(*file, refs[sc], rec, *rf.commit, stdout)
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
