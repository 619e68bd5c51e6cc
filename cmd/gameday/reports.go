package main

import (
	"github.com/gameday-dev/gameday/gameday"
	"github.com/gameday-dev/gameday/gameday/report"
)

// writeReports renders report.html, junit.xml and summary.md next to
// run.json.
func writeReports(dir string, rec *gameday.Record) error { return report.Write(dir, rec) }
