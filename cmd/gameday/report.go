package main

import (
	"bytes"
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

const reportWhat = `
Renders each run directory's reports again from its run.json (the path of
a run.json works too).

-format html (the default) writes report.html, junit.xml and summary.md
into the run directory. -format markdown writes nothing: it prints each
run's summary (summary.md's Markdown, its link to report.html pointing
into the run directory) to stdout, one run after the other, for a
pull-request comment or a CI step summary:

  gameday report -format markdown runs/*/run.json >> "$GITHUB_STEP_SUMMARY"

A directory without a readable run record, or whose reports cannot be
written, is reported and the others are still done; any such directory
makes the exit code 2.`

// reportCmd is "gameday report [-format html|markdown] RUN_DIR...".
func reportCmd(args []string, stdout, stderr io.Writer) error {
	fset := newFlagSet("report", stderr)
	format := fset.String("format", "html", "html: write report.html, junit.xml and summary.md into each run directory; markdown: print each run's summary to stdout and write nothing")
	describe(fset, "gameday report [-format html|markdown] RUN_DIR...", reportWhat)
	dirs, err := reportArgs(fset, args)
	if err != nil {
		return err
	}
	markdown := false
	switch *format {
	case "html":
	case "markdown", "md":
		markdown = true
	default:
		return usagef("report: -format %q: want html or markdown", *format)
	}
	if len(dirs) == 0 {
		return usagef("report: name a run directory (one holding run.json)")
	}
	bad, printed := 0, 0
	for _, arg := range dirs {
		if markdown {
			var b bytes.Buffer
			if err := summariseRunDir(&b, arg); err != nil {
				bad++
				fmt.Fprintf(stderr, "report: %v\n", err)
				continue
			}
			if printed > 0 {
				fmt.Fprintln(stdout)
			}
			printed++
			stdout.Write(b.Bytes())
			continue
		}
		dir, err := renderRunDir(arg)
		if err != nil {
			bad++
			fmt.Fprintf(stderr, "report: %v\n", err)
			continue
		}
		fmt.Fprintf(stdout, "wrote %s, %s and %s\n", filepath.Join(dir, report.HTMLFile), filepath.Join(dir, report.JUnitFile), filepath.Join(dir, report.SummaryFile))
	}
	if bad > 0 {
		verb := "rendered"
		if markdown {
			verb = "summarised"
		}
		return usagef("report: %d of %d run directories not %s", bad, len(dirs), verb)
	}
	return nil
}

// reportArgs parses fset's flags given before, between or after
// the arguments, as "gameday report runs/x -format markdown" is typed,
// and returns the arguments. Everything after "--" is an argument.
func reportArgs(fset *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fset.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, errHelp
			}
			return nil, usageError{fmt.Errorf("%s: %w", fset.Name(), err)}
		}
		rest := fset.Args()
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}

// readRunDir reads arg's run record (arg is a run directory or the path
// of its run.json) and returns it with the run directory.
func readRunDir(arg string) (*runrecord.Record, string, error) {
	dir, path := arg, filepath.Join(arg, "run.json")
	if fi, err := os.Stat(arg); err == nil && !fi.IsDir() {
		dir, path = filepath.Dir(arg), arg
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, "", fmt.Errorf("%s: no run.json here (is it a run directory?)", arg)
	}
	rec, err := runrecord.Read(path)
	if err != nil {
		return nil, "", err
	}
	if rec.Scenario == "" || !knownVerdict(rec.Verdict) {
		return nil, "", fmt.Errorf("%s: not a gameday run record (no scenario, or verdict %q)", path, rec.Verdict)
	}
	return rec, dir, nil
}

// renderRunDir reads arg's run.json and writes its reports beside it,
// returning the run directory.
func renderRunDir(arg string) (string, error) {
	rec, dir, err := readRunDir(arg)
	if err != nil {
		return "", err
	}
	if err := report.Write(dir, rec); err != nil {
		return "", fmt.Errorf("%s: %w", dir, err)
	}
	return dir, nil
}

// summariseRunDir writes arg's summary to w, its link to report.html
// pointing into the run directory as arg names it.
func summariseRunDir(w io.Writer, arg string) error {
	rec, dir, err := readRunDir(arg)
	if err != nil {
		return err
	}
	href := filepath.ToSlash(filepath.Join(dir, report.HTMLFile))
	if err := report.MarkdownLinked(w, rec, href); err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	return nil
}

func knownVerdict(v runrecord.Verdict) bool {
	switch v {
	case runrecord.VerdictPass, runrecord.VerdictFail, runrecord.VerdictError, runrecord.VerdictInconclusive:
		return true
	}
	return false
}
