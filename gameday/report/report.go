// Package report renders a drill's run record (run.json) for people and
// for CI: report.html, a self-contained page with charts over time and
// the expectations and invariants tables; junit.xml, one test case per
// promise; and summary.md, the run in a few lines of Markdown for a
// pull-request comment or a CI step summary.
//
// All are pure functions of the record: the same run.json renders the
// same bytes, so a report can be re-rendered at any time (gameday report
// RUN_DIR) and kept under golden-file tests.
package report

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/gameday-dev/gameday/gameday/runrecord"
)

// File names written into a run directory.
const (
	HTMLFile    = "report.html"
	JUnitFile   = "junit.xml"
	SummaryFile = "summary.md"
)

var errNilRecord = errors.New("no run record")

// Write renders report.html, junit.xml and summary.md into dir from the
// record. All three are rendered before any is written, and each file is
// written atomically: a reader sees the old one or the new one.
func Write(dir string, r *runrecord.Record) error {
	if r == nil {
		return errNilRecord
	}
	var page, junit, summary bytes.Buffer
	if err := HTML(&page, r); err != nil {
		return err
	}
	if err := JUnit(&junit, r); err != nil {
		return err
	}
	if err := Markdown(&summary, r); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{HTMLFile, page.Bytes()}, {JUnitFile, junit.Bytes()}, {SummaryFile, summary.Bytes()}} {
		if err := runrecord.WriteFileAtomic(filepath.Join(dir, f.name), f.data); err != nil {
			return fmt.Errorf("write report: %w", err)
		}
	}
	return nil
}
