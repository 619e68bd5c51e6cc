package main

import (
	"fmt"
	"io"
	"runtime/debug"
)

// releaseVersion is set by scripts/release.sh (-ldflags -X).
var releaseVersion string

func version() string {
	if releaseVersion != "" {
		return releaseVersion
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

// versionCmd is "gameday version".
func versionCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("version", stderr)
	describe(fs, "gameday version", `
Prints gameday's version: the release's (scripts/release.sh), else the Go
module's, else (devel) for a build from a work tree.`)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "gameday", version())
	return nil
}
