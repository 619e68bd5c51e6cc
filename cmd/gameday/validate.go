package main

import (
	"fmt"
	"io"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/gameday-dev/gameday/gameday"
	"github.com/gameday-dev/gameday/gameday/system"
	"github.com/gameday-dev/gameday/scenarios"
)

// listFlag collects a repeatable flag's values.
type listFlag []string

func (l *listFlag) String() string     { return fmt.Sprint([]string(*l)) }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// validateCmd is "gameday validate FILE|NAME...": it parses and validates
// each scenario, a file path or a catalogue name, and says "ok" for each
// good one and what is wrong with each bad one. Any bad one makes it a
// usage error (exit 2).
func validateCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("validate", stderr)
	describe(fs, "gameday validate [--system FILE]... FILE|NAME...", `
Checks scenario files and catalogue scenarios, and system files (--system);
a scenario is checked against the system it drills (the one --system, or
its own system: file). Exit 2 if any is invalid. Nothing is contacted.`)
	var systems listFlag
	fs.Var(&systems, "system", "a system file to check (repeatable); its ${NAME}s must be set")
	files, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(files) == 0 && len(systems) == 0 {
		return usagef("validate: name a scenario file or catalogue name (see gameday list), or a system file with --system")
	}
	bad := 0
	var only *system.System // the one --system: the scenarios drill it, as with run --system
	for _, file := range systems {
		sys, err := system.LoadFile(file, nil)
		if err != nil {
			bad++
			fmt.Fprintln(stderr, err)
			continue
		}
		if len(systems) == 1 {
			only = sys
		}
		deps := plural(len(sys.Dependencies), "dependency")
		if len(sys.Dependencies) != 1 {
			deps = fmt.Sprintf("%d dependencies", len(sys.Dependencies))
		}
		fmt.Fprintf(stdout, "ok  %s (%s): %s, %s, %s\n", sys.Name, sys.File, plural(len(sys.Purchase.Steps), "step"), deps, plural(len(sys.Stores), "store"))
		printCoverage(stdout, sys)
	}
	for _, arg := range files {
		s, err := scenarios.Lookup(arg)
		if err == nil {
			err = checkAgainstSystem(s, only)
		}
		if err != nil {
			bad++
			fmt.Fprintln(stderr, err)
			if looksLikeSystem(arg) {
				fmt.Fprintf(stderr, "%s has a purchase: it looks like a system file: check it with gameday validate --system %s\n", arg, arg)
			}
			continue
		}
		fmt.Fprintf(stdout, "ok  %s (%s)\n", s.Name, s.File)
	}
	if bad > 0 {
		return usagef("validate: %d of %d files invalid", bad, len(files)+len(systems))
	}
	return nil
}

// looksLikeSystem says whether file, given where a scenario was wanted,
// has a system file's purchase: at the top level (its every key was
// reported as unknown to a scenario).
func looksLikeSystem(file string) bool {
	// Only a regular file: opening a FIFO would wait for a writer.
	if fi, err := os.Stat(file); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	f, err := os.Open(file)
	if err != nil {
		return false
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 1<<20))
	return systemTopLevel.Match(b)
}

var systemTopLevel = regexp.MustCompile(`(?m)^purchase:`)

// checkAgainstSystem checks a scenario against the described system it
// would drill: sys (given with --system), else its own system: file.
func checkAgainstSystem(sc *scenarios.Scenario, sys *system.System) error {
	if sys == nil && sc.System != "" {
		s, err := system.LoadFile(sc.SystemPath(), nil)
		if err != nil {
			return err
		}
		sys = s
	}
	if sys == nil && sc.System == "" && needsReference(sc) {
		// The reference checkout as the local environment starts it:
		// its journeys, for the streams' mixes; its dependencies, for
		// cache faults; its counters.
		s, err := system.Reference(map[string]string{"CHECKOUT_URL": "http://127.0.0.1:1", "TOXIPROXY": "127.0.0.1:1", "CATALOG_URL": "http://127.0.0.1:1"})
		if err != nil {
			return err
		}
		sys = s
	}
	if sys == nil {
		return nil
	}
	return gameday.CheckScenario(sc, sys)
}

// needsReference reports whether sc, drilling the reference checkout, asks
// for what only its system file says: journeys (streams), a dependency's
// protocol and books (cache faults), a counter.
func needsReference(sc *scenarios.Scenario) bool {
	if len(sc.Load.Streams) > 0 {
		return true
	}
	for _, f := range sc.Faults {
		if f.Cache != nil {
			return true
		}
	}
	for _, e := range sc.Expect {
		if e.Metric != nil && e.Metric.Counter != "" {
			return true
		}
	}
	return false
}

// listCmd is "gameday list": the built-in scenarios, with the matrix row
// each proves and what it checks.
func listCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("list", stderr)
	describe(fs, "gameday list", `
Lists the built-in scenarios, with the matrix row each proves and what it
checks: run one with gameday run NAME.`)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	all, err := scenarios.Catalogue()
	if err != nil {
		return fmt.Errorf("list: %w", err)
	}
	tw := tabwriter.NewWriter(stdout, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tMATRIX\tDESCRIPTION")
	for _, s := range all {
		fmt.Fprintf(tw, "%s\t%s/%s\t%s\n", s.Name, s.Matrix.Dependency, s.Matrix.Failure, s.Summary())
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("list: %w", err)
	}
	return nil
}

// printCoverage says what a drill of sys can judge from its books, what it
// cannot and why, and when it reads them: what the description leaves
// unjudged is seen before a drill, not in its report.
func printCoverage(w io.Writer, sys *system.System) {
	checked, notChecked := gameday.Coverage(sys)
	if len(checked) == 0 {
		fmt.Fprintln(w, "    judges: no invariant of the books")
	} else {
		fmt.Fprintf(w, "    judges: %s\n", strings.Join(checked, ", "))
	}
	for _, name := range slices.Sorted(maps.Keys(notChecked)) {
		fmt.Fprintf(w, "    not judged: %s (needs %s)\n", name, notChecked[name])
	}
	if rule := gameday.SettleRule(sys); rule != "" {
		fmt.Fprintf(w, "    books read: %s\n", rule)
	}
}
