// Package report renders a drill's run record (run.json) for people and
// for CI: report.html, a self-contained page with charts over time and
// the expectations and invariants tables, and junit.xml, one test case
// per promise.
//
// Both are pure functions of the record: the same run.json renders the
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
	HTMLFile  = "report.html"
	JUnitFile = "junit.xml"
)

var errNilRecord = errors.New("no run record")

// Write renders report.html and junit.xml into dir from the record. Each
// file is written atomically: a reader sees the old one or the new one.
func Write(dir string, r *runrecord.Record) error {
	if r == nil {
		return errNilRecord
	}
	var page, junit bytes.Buffer
	if err := HTML(&page, r); err != nil {
		return err
	}
	if err := JUnit(&junit, r); err != nil {
		return err
	}
	if err := runrecord.WriteFileAtomic(filepath.Join(dir, HTMLFile), page.Bytes()); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	if err := runrecord.WriteFileAtomic(filepath.Join(dir, JUnitFile), junit.Bytes()); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}
