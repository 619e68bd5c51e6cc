package main

import (
	"github.com/gameday-dev/gameday/gameday"
	"github.com/gameday-dev/gameday/gameday/report"
)

// writeReports renders report.html and junit.xml next to run.json.
func writeReports(dir string, rec *gameday.Record) error { return report.Write(dir, rec) }
