package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/gameday-dev/gameday/gameday"
	"github.com/gameday-dev/gameday/gameday/runrecord"
)

const judgeWhat = `
Judges a finished run again from what it observed (the run directory's
observations.json.gz), with the scenario it ran (its scenario.yaml) or,
with -scenario, with another file's promises: the expect block and the
invariants' allowances may change; the faults must be the run's (name,
target and kind, in order), since judging again cannot change what was
done. The scenario is scaled as the run was (run.json's rate_scale and
time_scale).

It prints the verdict as gameday run does, says whether it is the run's
own (verdict.json, byte for byte), and writes the judgement as
verdict.json holds it to -o (default RUN_DIR/rejudged.json); run.json,
verdict.json and the reports are left as they are.

The exit code is the new verdict's: 0 pass, 1 fail, 3 inconclusive; 2 when
the run cannot be judged (no observations: a run that ended before its
load, or one written by an older gameday; an observations version this
gameday does not read; a scenario that does not parse or whose faults are
not the run's).`

// judgeCmd is "gameday judge [-scenario FILE] [-o FILE] RUN_DIR".
func judgeCmd(args []string, stdout, stderr io.Writer) error {
	fset := newFlagSet("judge", stderr)
	scenarioFile := fset.String("scenario", "", "judge with this scenario's promises instead of the run's own")
	out := fset.String("o", "", "write the judgement here (default RUN_DIR/rejudged.json)")
	describe(fset, "gameday judge [-scenario FILE] [-o FILE] RUN_DIR", judgeWhat)
	dirs, err := parseInterleaved(fset, args)
	if err != nil {
		return err
	}
	if len(dirs) != 1 {
		return usagef("judge: name one run directory (one holding run.json)")
	}
	_, dir, err := readRunDir(dirs[0])
	if err != nil {
		return usageError{err}
	}
	r, err := gameday.Rejudge(dir, *scenarioFile)
	if err != nil {
		return usageError{fmt.Errorf("judge: %w", err)}
	}
	data, err := gameday.EncodeJudged(r.Judged)
	if err != nil {
		return err
	}
	path := *out
	if path == "" {
		path = filepath.Join(dir, "rejudged.json")
	}
	if err := runrecord.WriteFileAtomic(path, data); err != nil {
		return usageError{fmt.Errorf("judge: %w", err)}
	}
	colour := isTerminal(stdout) && os.Getenv("NO_COLOR") == ""
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "%s\t%s\t%s\n", paint(colour, r.Record.Verdict), r.Record.Scenario, dir)
	tw.Flush()
	printSummary(stdout, r.Record)
	switch {
	case r.Before == nil:
		fmt.Fprintf(stdout, "  judged with %s; the run kept no verdict.json to compare with (it was %s)\n", r.Scenario, r.Was)
	case r.Unchanged() == nil:
		fmt.Fprintf(stdout, "  judged with %s: the run's own judgement, byte for byte\n", r.Scenario)
	case r.Was == r.Record.Verdict:
		fmt.Fprintf(stdout, "  judged with %s: the same verdict as the run's (%s), judged differently in its details\n", r.Scenario, r.Was)
	default:
		fmt.Fprintf(stdout, "  judged with %s: %s, where the run was %s\n", r.Scenario, r.Record.Verdict, r.Was)
	}
	fmt.Fprintf(stdout, "wrote %s\n", path)
	return codeError(exitCode(r.Record.Verdict))
}
