package main

import "github.com/gameday-dev/gameday/gameday"

// Temporary until the report and matrix packages land (this session).
func writeReports(string, *gameday.Record) error { return nil }

func recordInMatrix(string, string, *gameday.Record, string) error { return nil }
