package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/gameday-dev/gameday/scenarios"
)

// validateCmd is "gameday validate FILE|NAME...": it parses and validates
// each scenario, a file path or a catalogue name, and says "ok" for each
// good one and what is wrong with each bad one. Any bad one makes it a
// usage error (exit 2).
func validateCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("validate", stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: gameday validate FILE|NAME...\n\nChecks scenario files and catalogue scenarios; exit 2 if any is invalid.")
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return usageError{fmt.Errorf("validate: %w", err)}
	}
	if fs.NArg() == 0 {
		return usagef("validate: name a scenario file or catalogue name (see gameday list)")
	}
	bad := 0
	for _, arg := range fs.Args() {
		s, err := scenarios.Lookup(arg)
		if err != nil {
			bad++
			fmt.Fprintln(stderr, err)
			continue
		}
		fmt.Fprintf(stdout, "ok  %s (%s)\n", s.Name, s.File)
	}
	if bad > 0 {
		return usagef("validate: %d of %d scenarios invalid", bad, fs.NArg())
	}
	return nil
}

// listCmd is "gameday list": the built-in scenarios, with the matrix row
// each proves and what it checks.
func listCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("list", stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: gameday list\n\nLists the built-in scenarios: run one with gameday run NAME.")
	}
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
