package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Bad input to gameday explore is refused before anything is prepared:
// exit 2, naming the flag, the file and the line; -resume needs the
// journal of an earlier search.
func TestExploreRefusesBadInput(t *testing.T) {
	system := filepath.Join("..", "..", "examples", "ticketshop", "gameday.yaml")
	out := t.TempDir()
	for _, c := range []struct {
		name    string
		journal string // written to -out/trials.jsonl first, when not ""
		args    []string
		want    string
	}{
		{"confirm", "", []string{"-confirm", "0"}, "-confirm 0: want at least 1"},
		{"needed", "", []string{"-replays", "2", "-needed", "3"}, "-needed 3 of -replays 2"},
		{"budget", "", []string{"-budget", "soon"}, `-budget "soon"`},
		{"family", "", []string{"-families", "latency,earthquake"}, `no fault family "earthquake"`},
		{"no journal", "", []string{"-resume"}, "-resume: open " + filepath.Join(out, "trials.jsonl")},
		{"bad journal", "{\"verdict\":\"PASS\"}\n", []string{"-resume"}, filepath.Join(out, "trials.jsonl") + ":1: a trial needs its schedule and verdict"},
		// An earlier search's journal is not replaced unasked.
		{"earlier search", "{}\n{}\n", nil, filepath.Join(out, "trials.jsonl") + " holds the 2 trials of an earlier search: go on with it (-resume), or start afresh and replace it (-fresh)"},
		{"resume and fresh", "", []string{"-resume", "-fresh"}, "-resume and -fresh"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.journal != "" {
				if err := os.WriteFile(filepath.Join(out, "trials.jsonl"), []byte(c.journal), 0o644); err != nil {
					t.Fatal(err)
				}
				defer os.Remove(filepath.Join(out, "trials.jsonl"))
			}
			var stdout, stderr bytes.Buffer
			err := exploreCmd(append([]string{"-system", system, "-out", out, "-quiet"}, c.args...), &stdout, &stderr)
			if code := matrixExit(err); code != exitUsage || err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("exit %d (%v), want 2 naming %q\n%s", code, err, c.want, stderr.String())
			}
			// Nothing was written: no log, no report.
			if _, err := os.Stat(filepath.Join(out, "log.jsonl")); err == nil {
				t.Errorf("a refused search wrote its log")
			}
			if got, _ := os.ReadFile(filepath.Join(out, "trials.jsonl")); c.journal != "" && string(got) != c.journal {
				t.Errorf("a refused search changed the journal there: %q, was %q", got, c.journal)
			}
		})
	}
}
