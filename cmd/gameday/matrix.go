package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gameday-dev/gameday/gameday/system"
	"github.com/gameday-dev/gameday/matrix"
	"github.com/gameday-dev/gameday/scenarios"
)

// matrixNow is the clock of the matrix commands; tests set it.
var matrixNow = time.Now

const matrixUsage = `usage: gameday matrix COMMAND [FILE] [flags]

Reads the resiliency matrix; changes nothing.

  check [FILE]                          the rows that need attention; exit 1 if any
  show [FILE] [-format table|markdown]  the matrix as a table, or Markdown for a pull request
  due [FILE]                            the rows gameday drill would run now, and roughly how long; runs nothing

FILE is the resiliency matrix, by default ` + matrix.DefaultFile + `; gameday init writes a
starter. "check" exits 0 when every row is proven on schedule, 1 when a promise
failed, a drill is overdue or a known gap passes, and 2 when the file or a
row is invalid. Run "gameday matrix COMMAND -h" for a command's flags.
`

// matrixCmd is "gameday matrix check|show|due".
func matrixCmd(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, matrixUsage)
		return usagef("matrix: check, show or due?")
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, matrixUsage)
		return errHelp
	case "check":
		return matrixCheck(args[1:], stdout, stderr)
	case "show":
		return matrixShow(args[1:], stdout, stderr)
	case "due":
		return matrixDue(args[1:], stdout, stderr)
	}
	fmt.Fprint(stderr, matrixUsage)
	return usagef("matrix: unknown command %q (want check, show or due)", args[0])
}

// matrixCheck is "gameday matrix check [FILE]": one line per problem on
// stdout; exit 1 when there is any, 2 when the file or a row is invalid.
func matrixCheck(args []string, stdout, stderr io.Writer) error {
	flags := newFlagSet("matrix check", stderr)
	describe(flags, "gameday matrix check [FILE]", `
Prints one line per row that needs attention: a promise whose last run did
not prove it (fail, error or inconclusive, or recovered beyond its
recovery_objective), a known gap that passes, a drill overdue (older than its
cadence and a tenth, or never run), a row that cannot be drilled as written.
FILE is the resiliency matrix, by default `+matrix.DefaultFile+`. Exit 0 when
every row is proven on schedule, 1 when a row needs attention, 2 when the
file or a row is invalid.`)
	file, err := matrixFileArg(flags, args)
	if err != nil {
		return err
	}
	m, err := matrixLoad("matrix check", file, stderr)
	if err != nil {
		return err
	}
	problems := matrix.Check(m, matrixNow())
	invalid := 0
	rows := map[int]bool{}
	for _, p := range problems {
		fmt.Fprintln(stdout, p)
		rows[p.Row.Line] = true
		if p.Reason == matrix.ReasonInvalid {
			invalid++
		}
	}
	n := len(m.Rows())
	switch {
	case invalid > 0:
		return usagef("matrix check: %s: %d of %d rows invalid", file, invalid, n)
	case len(problems) > 0:
		return exitError{exitFailed, fmt.Sprintf("matrix check: %s: %d of %d rows need attention", file, len(rows), n)}
	}
	fmt.Fprintf(stdout, "%s: %d rows, all proven on schedule\n", file, n)
	return nil
}

// matrixShow is "gameday matrix show [FILE] [--format table|markdown]".
func matrixShow(args []string, stdout, stderr io.Writer) error {
	flags := newFlagSet("matrix show", stderr)
	describe(flags, "gameday matrix show [FILE] [-format table|markdown]", `
Prints the resiliency matrix: each row's status, scenario, cadence, last run
and its age, verdict, figures against the recovery objective, books, and what
gameday matrix check says of it; then the problems. FILE is the matrix, by
default `+matrix.DefaultFile+`. Markdown is for a pull-request comment or a CI
step summary; text from the file is escaped.`)
	format := flags.String("format", "table", "table (for a terminal) or markdown (for a pull-request comment)")
	file, err := matrixFileArg(flags, args)
	if err != nil {
		return err
	}
	render := matrix.RenderTable
	switch *format {
	case "table":
	case "markdown", "md":
		render = matrix.RenderMarkdown
	default:
		return usagef("matrix show: -format %q: want table or markdown", *format)
	}
	m, err := matrixLoad("matrix show", file, stderr)
	if err != nil {
		return err
	}
	if err := render(stdout, m, matrixNow()); err != nil {
		return fmt.Errorf("matrix show: %w", err)
	}
	return nil
}

// matrixDue is "gameday matrix due [FILE]": the rows gameday drill would
// run now, why, and roughly how long; it runs nothing and changes nothing.
func matrixDue(args []string, stdout, stderr io.Writer) error {
	flags := newFlagSet("matrix due", stderr)
	describe(flags, "gameday matrix due [FILE]", `
Lists the rows gameday drill would run now (never run, or last run at least
nine tenths of their cadence ago), why each is due, the drills that would run
(each scenario once), and roughly how long they take: the scenarios' load
stages, and at most each drill's wait for the books to settle. It runs
nothing and changes nothing. FILE is the matrix, by default
`+matrix.DefaultFile+`. For the estimate with drill's flags (-time-scale,
-system), use gameday drill -dry-run. Exit 0, or 2 when the file is invalid or
a due row's scenario cannot be run (gameday drill would refuse to start).`)
	file, err := matrixFileArg(flags, args)
	if err != nil {
		return err
	}
	m, err := matrixLoad("matrix due", file, stderr)
	if err != nil {
		return err
	}
	p := planDrill(m, file, false, matrixNow(), 1, nil)
	p.print(stdout)
	return p.err
}

// matrixFileArg parses flags given before or after the one optional FILE
// argument and returns the file, by default matrix.DefaultFile.
func matrixFileArg(flags *flag.FlagSet, args []string) (string, error) {
	var pos []string
	for {
		if err := flags.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return "", errHelp
			}
			return "", usageError{fmt.Errorf("%s: %w", flags.Name(), err)}
		}
		args = flags.Args()
		if len(args) == 0 {
			break
		}
		pos, args = append(pos, args[0]), args[1:]
	}
	switch len(pos) {
	case 0:
		return matrix.DefaultFile, nil
	case 1:
		return pos[0], nil
	}
	return "", usagef("%s: one matrix file at most, got %q and %q", flags.Name(), pos[0], pos[1])
}

// matrixLoad loads the matrix; an unreadable or invalid file is a usage
// error (exit 2), each of its problems printed on stderr.
func matrixLoad(cmd, file string, stderr io.Writer) (*matrix.Matrix, error) {
	m, err := matrix.Load(file)
	if err == nil {
		return m, nil
	}
	if errs := matrix.Errors(err); len(errs) > 0 {
		for _, e := range errs {
			fmt.Fprintln(stderr, e)
		}
		return nil, usagef("%s: %s is invalid", cmd, file)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, usagef("%s: %v (gameday init writes a starter)", cmd, err)
	}
	return nil, usageError{fmt.Errorf("%s: %w", cmd, err)}
}

// initCmd is "gameday init [--matrix FILE]": it writes a starter matrix,
// one row per built-in scenario, and never overwrites a file.
func initCmd(args []string, stdout, stderr io.Writer) error {
	flags := newFlagSet("init", stderr)
	describe(flags, "gameday init [-matrix FILE] [DRILL.yaml...] | gameday init -system FILE", `
Writes a starter resiliency matrix (default `+matrix.DefaultFile+`): one row
per drill file given — your drills of your system, each row naming its file
relative to the matrix — or, with none, one row per built-in scenario (the
reference checkout's). Each row is a promise drilled weekly, with TODOs for
the owner and the runbook. Or, with -system, a commented starter system file
describing your checkout (docs/systems.md). A drill that does not parse is
named with its line and field, and nothing is written. It never overwrites
a file (exit 2). A fresh matrix has every row due: gameday matrix due lists
them and how long drilling them all takes; gameday drill prints that plan,
then runs them.`)
	file := flags.String("matrix", matrix.DefaultFile, "the matrix file to write")
	sysFile := flags.String("system", "", "write a starter system file here instead of a matrix (gameday.yaml, say)")
	drillFiles, err := parseInterleaved(flags, args)
	if err != nil {
		return err
	}
	if *sysFile != "" {
		if len(drillFiles) > 0 {
			return usagef("init: -system writes a system file, and takes no drill (%s)", strings.Join(drillFiles, " "))
		}
		if err := writeNewFile(*sysFile, system.Starter()); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return usagef("init: %s already exists: gameday init never overwrites a file", *sysFile)
			}
			return usageError{fmt.Errorf("init: %w", err)}
		}
		fmt.Fprintf(stdout, "wrote %s: a starter system file\n", *sysFile)
		fmt.Fprintf(stdout, "next: describe your checkout in it (docs/systems.md), check it with gameday validate --system %s,\nthen write a drill (the file's last comment shows one) and run it: gameday run --system %s DRILL.yaml\n", *sysFile, *sysFile)
		return nil
	}
	scs, what := []*scenarios.Scenario(nil), "one per drill given"
	if len(drillFiles) > 0 {
		for _, f := range drillFiles {
			sc, err := scenarios.LoadFile(f)
			if err != nil {
				return usageError{fmt.Errorf("init: %w", err)}
			}
			ref, err := relativeTo(*file, f)
			if err != nil {
				return usageError{fmt.Errorf("init: %w", err)}
			}
			sc.File = ref
			scs = append(scs, sc)
		}
	} else {
		cat, err := scenarios.Catalogue()
		if err != nil {
			return fmt.Errorf("init: %w", err)
		}
		scs, what = cat, "one per built-in scenario"
	}
	data, err := matrix.Starter(scs)
	if err != nil {
		return fmt.Errorf("init: %w", err)
	}
	if err := writeNewFile(*file, data); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return usagef("init: %s already exists: gameday init never overwrites a matrix (choose another with --matrix)", *file)
		}
		return usageError{fmt.Errorf("init: %w", err)}
	}
	fmt.Fprintf(stdout, "wrote %s: %d rows, %s\n", *file, len(scs), what)
	due, drill := "gameday matrix due", "gameday drill"
	if *file != matrix.DefaultFile {
		due, drill = due+" "+*file, drill+" -matrix "+*file
	}
	fmt.Fprintf(stdout, "next: fill in the TODOs (owner, runbook), remove the rows you do not need, commit it;\n%s lists the drills that are due and roughly how long they take (every row, at first),\n%s runs them and records the results, and gameday matrix check %s says what needs attention\n", due, drill, *file)
	return nil
}

// relativeTo is the path of file as a matrix at matrixFile names it:
// relative to the matrix's directory, with a "/" so that it reads as a
// path, not a catalogue name.
func relativeTo(matrixFile, file string) (string, error) {
	base, err := filepath.Abs(filepath.Dir(matrixFile))
	if err != nil {
		return "", err
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(base, abs)
	if err != nil {
		return "", err
	}
	rel = filepath.ToSlash(rel)
	if !strings.Contains(rel, "/") {
		rel = "./" + rel
	}
	return rel, nil
}

// writeNewFile creates path with data, failing with fs.ErrExist when it is
// already there; a file it could not write completely is removed.
func writeNewFile(path string, data []byte) (err error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.Remove(path)
		}
	}()
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
