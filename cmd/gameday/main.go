// Command gameday runs flash-sale fire drills and the services they drill.
//
// Exit codes: 0 success; 1 an expectation failed (or a server stopped with an
// error); 2 the command could not be carried out (bad flags, bad input,
// setup failed); 3 inconclusive.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// Exit codes shared by every command.
const (
	exitOK           = 0
	exitFailed       = 1
	exitUsage        = 2
	exitInconclusive = 3
)

// usageError is bad input from the user: exit code 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

const usage = `gameday — flash-sale fire drills for checkouts

Usage:
  gameday run [flags] SCENARIO...  run drills (catalogue names or files); -env local|containers|compose|external
  gameday drill [flags]            run the matrix rows that are due, record them, check
  gameday init [-matrix F] [DRILL...]  write a starter resiliency matrix: a row per drill file (none: per built-in scenario); -system F: a starter system file
  gameday matrix check [FILE]      the rows that need attention; exit 1 if any
  gameday matrix show [FILE] [--format table|markdown]
  gameday matrix due [FILE]        the rows gameday drill would run now, and roughly how long; runs nothing
  gameday predict SCENARIO [-runs N]  simulate a flash-sale drill: each figure's mean, p5 and p95
  gameday list                     list the built-in scenarios
  gameday validate [--system F] FILE...  check scenario and system files (and what a system's books let a drill judge)
  gameday explore [-system F] [BASE]  search a system's fault space for what breaks its books; shrink and write each finding as a scenario
  gameday judge RUN_DIR [-scenario F]  judge a finished run again from what it observed (with changed promises)
  gameday report RUN_DIR...        re-render report.html, junit.xml and summary.md from run.json; -format markdown prints the summary
  gameday cleanup                  remove faults and containers left by a runner that was killed
  gameday serve checkout [flags]   run the reference checkout
  gameday serve payment [flags]    run the payment-gateway stand-in
  gameday serve catalog [flags]    run the catalogue stand-in (the origin behind the product page's cache)
  gameday serve router [flags]     run the pods' router (shop -> pod, by a table in Redis)
  gameday serve toxiproxy [flags]  run Toxiproxy (its standard HTTP API) embedded
  gameday worker -coordinator URL  send one shard of a drill's load (gameday run -shards N)
  gameday health URL               exit 0 when URL answers 2xx (the images' health check)
  gameday version

Run "gameday COMMAND -h" (e.g. "gameday serve checkout -h") for what a
command does, its arguments and its flags.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without the process: it returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	err := dispatch(args, stdout, stderr)
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errHelp):
		return exitOK
	}
	fmt.Fprintf(stderr, "gameday: %v\n", err)
	var ue usageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	var ee exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return exitFailed
}

var errHelp = errors.New("help requested")

func dispatch(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return usagef("no command given")
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return errHelp
	case "run":
		return runCmd(args[1:], stdout, stderr)
	case "drill":
		return drillCmd(args[1:], stdout, stderr)
	case "init":
		return initCmd(args[1:], stdout, stderr)
	case "matrix":
		return matrixCmd(args[1:], stdout, stderr)
	case "explore":
		return exploreCmd(args[1:], stdout, stderr)
	case "judge":
		return judgeCmd(args[1:], stdout, stderr)
	case "report":
		return reportCmd(args[1:], stdout, stderr)
	case "cleanup":
		return cleanupCmd(args[1:], stdout, stderr)
	case "list":
		return listCmd(args[1:], stdout, stderr)
	case "predict":
		return predictCmd(args[1:], stdout, stderr)
	case "validate":
		return validateCmd(args[1:], stdout, stderr)
	case "version":
		return versionCmd(args[1:], stdout, stderr)
	case "health":
		return healthCmd(args[1:], stdout, stderr)
	case "worker":
		return workerCmd(args[1:], stdout, stderr)
	case "serve":
		return serveCmd(args[1:], stdout, stderr)
	}
	fmt.Fprint(stderr, usage)
	return usagef("unknown command %q", args[0])
}
