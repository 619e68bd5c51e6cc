package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
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

  check [FILE]                          the rows that need attention (flapping ones included); exit 1 if any
  show [FILE] [-format table|markdown]  the matrix as a table, or Markdown for a pull request
  due [FILE]                            the rows gameday drill would run now, and roughly how long; runs nothing
  diff [BASE] [-matrix FILE]            what changed since BASE (a commit, branch or file); exit 1 if a row got worse
  history [ROW] [-matrix FILE]          each row's verdicts over the file's git history: streaks, since when, flapping

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
	case "diff":
		return matrixDiff(args[1:], stdout, stderr)
	case "history":
		return matrixHistory(args[1:], stdout, stderr)
	}
	fmt.Fprint(stderr, matrixUsage)
	return usagef("matrix: unknown command %q (want check, show, due, diff or history)", args[0])
}

// matrixCheck is "gameday matrix check [FILE]": one line per problem on
// stdout; exit 1 when there is any, 2 when the file or a row is invalid.
func matrixCheck(args []string, stdout, stderr io.Writer) error {
	flags := newFlagSet("matrix check", stderr)
	describe(flags, "gameday matrix check [FILE]", `
Prints one line per row that needs attention: a promise whose last run did
not prove it (fail, error or inconclusive, or recovered beyond its
recovery_objective), a known gap that passes, a drill overdue (older than its
cadence and a tenth, or never run), a row that cannot be drilled as written,
and, when the file is kept in git, a row that flaps (its verdict changed more
than `+fmt.Sprint(matrix.FlapChanges)+` times in its last `+fmt.Sprint(matrix.FlapRuns)+` runs, as the file's history records
them: a flaky drill cannot hide behind its last green run). FILE is the
resiliency matrix, by default `+matrix.DefaultFile+`. Exit 0 when every row
is proven on schedule, 1 when a row needs attention, 2 when the file or a
row is invalid.`)
	file, err := matrixFileArg(flags, args)
	if err != nil {
		return err
	}
	m, err := matrixLoad("matrix check", file, stderr)
	if err != nil {
		return err
	}
	problems := append(matrix.Check(m, matrixNow()), flapping("matrix check", file, m, stderr)...)
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
gameday matrix check says of it (a row that flaps in the file's git history
included); then the problems. FILE is the matrix, by
default `+matrix.DefaultFile+`. Markdown is for a pull-request comment or a CI
step summary; text from the file is escaped.`)
	format := flags.String("format", "table", "table (for a terminal) or markdown (for a pull-request comment)")
	file, err := matrixFileArg(flags, args)
	if err != nil {
		return err
	}
	render, err := pickFormat("matrix show", *format, matrix.RenderTable, matrix.RenderMarkdown)
	if err != nil {
		return err
	}
	m, err := matrixLoad("matrix show", file, stderr)
	if err != nil {
		return err
	}
	if err := render(stdout, m, matrixNow(), flapping("matrix show", file, m, stderr)...); err != nil {
		return fmt.Errorf("matrix show: %w", err)
	}
	return nil
}

// flapping are the rows of m (the matrix in file) that flap in the file's
// git history; a file outside git has no history to judge, and says
// nothing of it. A history that cannot be read is said on stderr.
func flapping(cmd, file string, m *matrix.Matrix, stderr io.Writer) []matrix.Problem {
	h, err := fileHistory(context.Background(), file, m, 0)
	if err != nil {
		if !errors.Is(err, matrix.ErrNotInGit) {
			fmt.Fprintf(stderr, "%s: the file's history: %v\n", cmd, err)
		}
		return nil
	}
	return h.Flapping()
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

// matrixDiff is "gameday matrix diff [BASE] [-matrix FILE] [-format
// table|markdown]".
func matrixDiff(args []string, stdout, stderr io.Writer) error {
	flags := newFlagSet("matrix diff", stderr)
	describe(flags, "gameday matrix diff [BASE] [-matrix FILE] [-format table|markdown]", `
Compares the matrix in the working tree with BASE: rows added and removed,
rows whose status, scenario, expectation, objective, cadence, owner or
runbook changed, and every last-run verdict that changed; worst news first.
BASE is a file, or a commit, branch or tag of the git repository the matrix is
in (the file as that commit had it); by default the merge base of HEAD with
the default branch (origin/HEAD, else main, else master): what this branch
changed. Markdown is one table for a pull-request comment, each row linking
its runbook. Exit 0, 1 when a row got worse (a promise whose verdict no longer
passes, or a new promise that failed its first run; a promise made a known
gap; a promise removed), 2 when either file is invalid or BASE cannot be read.`)
	file := flags.String("matrix", matrix.DefaultFile, "the resiliency matrix (the head of the comparison)")
	format := flags.String("format", "table", "table (for a terminal) or markdown (for a pull-request comment)")
	pos, err := parseInterleaved(flags, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usagef("matrix diff: one base at most, got %q and %q", pos[0], pos[1])
	}
	render, err := pickFormat("matrix diff", *format, matrix.RenderDiffTable, matrix.RenderDiffMarkdown)
	if err != nil {
		return err
	}
	head, err := matrixLoad("matrix diff", *file, stderr)
	if err != nil {
		return err
	}
	ctx := context.Background()
	var base *matrix.Matrix
	var baseName string
	if len(pos) == 1 {
		if _, statErr := os.Stat(pos[0]); statErr == nil {
			if base, err = matrixLoad("matrix diff", pos[0], stderr); err != nil {
				return err
			}
			baseName = pos[0]
		}
	}
	if base == nil {
		repo, err := matrix.OpenRepo(ctx, *file)
		if err != nil {
			return usagef("matrix diff: %v: name the base as a file", err)
		}
		rev := ""
		if len(pos) == 1 {
			rev = pos[0]
		} else if rev, err = repo.MergeBase(ctx); err != nil {
			return usagef("matrix diff: %v", err)
		}
		rv, err := repo.At(ctx, rev)
		if err != nil {
			return usagef("matrix diff: %v", err)
		}
		m, err := matrix.Parse(rv.Path+"@"+rv.Short(), rv.Data)
		if err != nil {
			for _, e := range matrix.Errors(err) {
				fmt.Fprintln(stderr, e)
			}
			return usagef("matrix diff: %s as %s has it is invalid", *file, rev)
		}
		base, baseName = m, "commit "+rv.Short()
		if len(pos) == 1 && !strings.HasPrefix(rv.Commit, pos[0]) {
			baseName = pos[0] + " (" + rv.Short() + ")"
		}
	}
	changes := matrix.Diff(base, head)
	if err := render(stdout, changes, baseName, *file); err != nil {
		return fmt.Errorf("matrix diff: %w", err)
	}
	if matrix.Worse(changes) {
		return exitError{exitFailed, "matrix diff: a row got worse"}
	}
	return nil
}

// matrixHistory is "gameday matrix history [ROW] [-matrix FILE] [-format
// table|markdown|html] [-limit N]".
func matrixHistory(args []string, stdout, stderr io.Writer) error {
	flags := newFlagSet("matrix history", stderr)
	describe(flags, "gameday matrix history [ROW] [-matrix FILE] [-format table|markdown|html] [-limit N]", `
Reads every commit that changed the matrix file (along the first parent, so a
merged pull request is one commit; renames followed) and prints each row's
runs: their verdicts as letters, oldest first (P pass, F fail, E error, I
inconclusive), the current streak, the commit whose run began the row's
current failure, how long since it last passed, and whether it flaps (its
verdict changed more than `+fmt.Sprint(matrix.FlapChanges)+` times in its last `+fmt.Sprint(matrix.FlapRuns)+` runs). ROW
(dependency/failure) shows one row. A commit whose file does not parse (merge
conflict markers committed) is named and skipped; a shallow clone shows the
history it has, and says so. -format html is one page with every run of
each row as a timeline (each mark names its time and commit). Exit 0, or 2
when the file is not in git or ROW is not a row.`)
	file := flags.String("matrix", matrix.DefaultFile, "the resiliency matrix")
	format := flags.String("format", "table", "table (for a terminal), markdown (for a pull-request comment) or html (a page: every run as a timeline)")
	limit := flags.Int("limit", 0, "read at most this many of the newest commits (0: all)")
	pos, err := parseInterleaved(flags, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usagef("matrix history: one row at most, got %q and %q", pos[0], pos[1])
	}
	render := matrix.RenderHistoryHTML
	if *format != "html" {
		if render, err = pickFormat("matrix history", *format, matrix.RenderHistoryTable, matrix.RenderHistoryMarkdown); err != nil {
			return usagef("matrix history: -format %q: want table, markdown or html", *format)
		}
	}
	if *limit < 0 {
		return usagef("matrix history: -limit %d: want 0 (all) or more", *limit)
	}
	m, err := matrixLoad("matrix history", *file, stderr)
	if err != nil {
		return err
	}
	h, err := fileHistory(context.Background(), *file, m, *limit)
	if err != nil {
		return usagef("matrix history: %v", err)
	}
	if len(pos) == 1 {
		i := slices.IndexFunc(h.Rows, func(r matrix.RowHistory) bool { return r.ID == pos[0] })
		if i < 0 {
			return usagef("matrix history: no row %q in %s or its history (rows are dependency/failure)", pos[0], *file)
		}
		h.Rows = h.Rows[i : i+1]
	}
	if err := render(stdout, h, matrixNow()); err != nil {
		return fmt.Errorf("matrix history: %w", err)
	}
	return nil
}

// fileHistory is the history of the matrix in file, m as the working tree
// has it: matrix.ErrNotInGit when the file is not kept in git.
func fileHistory(ctx context.Context, file string, m *matrix.Matrix, limit int) (matrix.History, error) {
	repo, err := matrix.OpenRepo(ctx, file)
	if err != nil {
		return matrix.History{}, err
	}
	revs, err := repo.Revisions(ctx, "", limit)
	if err != nil {
		return matrix.History{}, err
	}
	h := matrix.BuildHistory(revs, m)
	h.Shallow = repo.Shallow(ctx)
	return h, nil
}

// pickFormat is the renderer -format names: table or markdown (md).
func pickFormat[F any](cmd, format string, table, markdown F) (F, error) {
	switch format {
	case "table":
		return table, nil
	case "markdown", "md":
		return markdown, nil
	}
	var none F
	return none, usagef("%s: -format %q: want table or markdown", cmd, format)
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
