// Package matrix is the resiliency matrix: a YAML file kept in the user's
// repository that says, for every dependency and failure mode of the
// checkout, what shoppers experience, how fast it recovers, who owns it,
// how often it is drilled, which scenario proves it, and when that was
// last proven. This package parses it strictly, merges a run's results
// into it without disturbing anything else, writes it atomically under a
// lock, checks it and renders it. docs/matrix.md is the user's guide.
//
// # The file
//
// The default name is [DefaultFile], resiliency-matrix.yaml in the current
// directory:
//
//	# Comments anywhere; gameday keeps them.
//	version: 1                 # required; this package reads version 1
//	rows:
//	  - dependency: payment    # required, with failure: the row's name, once per file
//	    failure: latency
//	    expectation: Shoppers are refused fast (503, Retry-After) while payment is slow.
//	    recovery_objective: 10s  # optional duration; a pass that recovers later fails the promise
//	    runbook: https://wiki.example/runbooks/payment-latency   # optional
//	    owner: team-checkout     # optional
//	    cadence: weekly          # required: daily, weekly, monthly (30 days) or a duration ("72h")
//	    scenario: payment-latency  # required: a catalogue name, or a path relative to this file
//	    status: promise          # promise (default) or known_gap
//	    last:                    # written by gameday; leave it out for a new row
//	      at: 2026-11-29T14:00:00Z   # the run's start, UTC, to the second
//	      commit: 3f2a1c9            # of the system under test, when known
//	      verdict: pass              # pass, fail, error or inconclusive
//	      figures:                   # durations rounded to 10ms; absent when not measured
//	        breaker_opened_after: 1.2s
//	        recovered_after: 3.4s
//	        checkout_p95_during: 140ms
//	        oversold: 0              # the run's invariant counts
//	        lost_units: 0
//	        double_charges: 0
//	        charges_without_order: 0
//	        orders_without_charge: 0
//	        charged_after_leaving: 0
//
// [Parse] refuses, with an *[Error] naming file, line and field, and
// having changed nothing: files over 1 MiB, merge-conflict markers,
// anything but one YAML document holding a mapping, anchors, aliases and
// merge keys, unknown or repeated keys, values of the wrong type, a row
// without its dependency, failure, cadence or scenario, a scenario name
// that is not in the catalogue, and two rows for one dependency and
// failure.
//
// # Updates
//
// [Matrix.Apply] sets the `last` block of the rows a run proved and edits
// nothing else: the text is changed line by line, so comments, blank
// lines, quoting and order elsewhere survive byte for byte, and applying
// the same run record again changes no byte (a new run of course changes
// `at`, the run's start time). [Update] serialises writers of one file
// with an exclusive flock on FILE.lock, and writes by temporary file,
// fsync, rename and directory fsync: a writer killed at any point leaves
// the previous file intact.
//
// # Checks
//
// [Check] reports rows that need attention (see the Reason constants): a
// promise whose last run failed, errored or was inconclusive, or passed
// but recovered later than its objective; a known gap whose last run
// passed; a drill not run within its cadence plus a tenth, or never; a row
// whose scenario is missing, invalid or proves another row. [Due] lists
// the rows a scheduled drill should run: never run, or at least nine
// tenths of their cadence old.
//
// # Over time
//
// [Diff] compares two matrices row by row, worst news first. [Repo] reads
// the file's revisions from its git repository with the git program, and
// [BuildHistory] turns them into each row's runs: streaks, the run where
// a row's current failure began, its last pass, and whether it flaps
// (more than [FlapChanges] verdict changes in its last [FlapRuns] runs).
package matrix
