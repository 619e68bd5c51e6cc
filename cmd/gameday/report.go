package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/gameday-dev/gameday/gameday/report"
	"github.com/gameday-dev/gameday/gameday/runrecord"
)

// reportCmd is "gameday report RUN_DIR...": it re-renders report.html and
// junit.xml in each run directory from its run.json (a path to the
// run.json itself works too). A directory without a readable run record,
// or whose reports cannot be written, is reported and the others are
// still rendered; any such directory makes the exit code 2.
func reportCmd(args []string, stdout, stderr io.Writer) error {
	fset := newFlagSet("report", stderr)
	fset.Usage = func() {
		fmt.Fprintln(stderr, "Usage: gameday report RUN_DIR...\n\nRe-renders report.html and junit.xml in each run directory from its run.json.")
	}
	if err := fset.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return usageError{fmt.Errorf("report: %w", err)}
	}
	if fset.NArg() == 0 {
		return usagef("report: name a run directory (one holding run.json)")
	}
	bad := 0
	for _, arg := range fset.Args() {
		dir, err := renderRunDir(arg)
		if err != nil {
			bad++
			fmt.Fprintf(stderr, "report: %v\n", err)
			continue
		}
		fmt.Fprintf(stdout, "wrote %s and %s\n", filepath.Join(dir, report.HTMLFile), filepath.Join(dir, report.JUnitFile))
	}
	if bad > 0 {
		return usagef("report: %d of %d run directories not rendered", bad, fset.NArg())
	}
	return nil
}

// renderRunDir reads arg's run.json and writes its reports beside it,
// returning the run directory.
func renderRunDir(arg string) (string, error) {
	dir, path := arg, filepath.Join(arg, "run.json")
	if fi, err := os.Stat(arg); err == nil && !fi.IsDir() {
		dir, path = filepath.Dir(arg), arg
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%s: no run.json here (is it a run directory?)", arg)
	}
	rec, err := runrecord.Read(path)
	if err != nil {
		return "", err
	}
	if rec.Scenario == "" || !knownVerdict(rec.Verdict) {
		return "", fmt.Errorf("%s: not a gameday run record (no scenario, or verdict %q)", path, rec.Verdict)
	}
	if err := report.Write(dir, rec); err != nil {
		return "", fmt.Errorf("%s: %w", dir, err)
	}
	return dir, nil
}

func knownVerdict(v string) bool {
	switch v {
	case runrecord.VerdictPass, runrecord.VerdictFail, runrecord.VerdictError, runrecord.VerdictInconclusive:
		return true
	}
	return false
}
