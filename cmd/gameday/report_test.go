package main

import (
	"bytes"
	"encoding/xml"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixtureRun copies a run record from the report package's testdata
// into a new run directory and returns the directory.
func fixtureRun(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "gameday", "report", "testdata", name+".run.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "20261129T144936.363Z-"+name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "run.json"), string(data))
	return dir
}

func TestReportCmd(t *testing.T) {
	good := fixtureRun(t, "fail")
	goodFile := filepath.Join(fixtureRun(t, "pass"), "run.json")
	empty := t.TempDir()
	broken := t.TempDir()
	writeFile(t, filepath.Join(broken, "run.json"), `{"scenario": "x", "verdict": `)
	notRecord := t.TempDir()
	writeFile(t, filepath.Join(notRecord, "run.json"), `{"hello": "world"}`)

	cases := []struct {
		name      string
		args      []string
		usage     bool     // a usageError (exit 2)
		rendered  []string // run directories that must have both reports
		stdoutHas []string
		stderrHas []string
	}{
		// A run directory: both reports written, and said so.
		{name: "good dir", args: []string{good}, rendered: []string{good},
			stdoutHas: []string{"wrote " + filepath.Join(good, "report.html") + " and " + filepath.Join(good, "junit.xml")}},
		// The path of a run.json works as well as its directory.
		{name: "run.json path", args: []string{goodFile}, rendered: []string{filepath.Dir(goodFile)}},
		// A directory with no run.json says what is missing.
		{name: "no run.json", args: []string{empty}, usage: true,
			stderrHas: []string{empty + ": no run.json here"}},
		// A directory that does not exist.
		{name: "missing dir", args: []string{filepath.Join(empty, "nope")}, usage: true,
			stderrHas: []string{"no run.json here"}},
		// Truncated JSON names the file.
		{name: "bad json", args: []string{broken}, usage: true,
			stderrHas: []string{filepath.Join(broken, "run.json"), "unexpected end of JSON input"}},
		// Valid JSON that is not a run record.
		{name: "not a record", args: []string{notRecord}, usage: true,
			stderrHas: []string{"not a gameday run record"}},
		// A bad directory among good ones: the good ones are still
		// rendered, and the exit is 2.
		{name: "mixed", args: []string{empty, good}, usage: true, rendered: []string{good},
			stderrHas: []string{"no run.json here", "1 of 2 run directories not rendered"}},
		{name: "nothing", args: nil, usage: true, stderrHas: []string{"name a run directory"}},
		{name: "bad flag", args: []string{"-x", good}, usage: true, stderrHas: []string{"flag provided but not defined"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, dir := range c.rendered {
				os.Remove(filepath.Join(dir, "report.html"))
				os.Remove(filepath.Join(dir, "junit.xml"))
			}
			var stdout, stderr bytes.Buffer
			err := reportCmd(c.args, &stdout, &stderr)
			var ue usageError
			if got := errors.As(err, &ue); got != c.usage || (err != nil && !c.usage) {
				t.Fatalf("error %v, want usage error %v", err, c.usage)
			}
			if err != nil {
				stderr.WriteString(err.Error()) // as main prints it
			}
			for _, want := range c.stdoutHas {
				if !strings.Contains(stdout.String(), want) {
					t.Errorf("stdout %q lacks %q", stdout.String(), want)
				}
			}
			for _, want := range c.stderrHas {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr %q lacks %q", stderr.String(), want)
				}
			}
			for _, dir := range c.rendered {
				page, err := os.ReadFile(filepath.Join(dir, "report.html"))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Contains(page, []byte(`<svg`)) {
					t.Errorf("%s/report.html has no chart", dir)
				}
				junit, err := os.ReadFile(filepath.Join(dir, "junit.xml"))
				if err != nil {
					t.Fatal(err)
				}
				var v struct{}
				if err := xml.Unmarshal(junit, &v); err != nil {
					t.Errorf("%s/junit.xml: %v", dir, err)
				}
			}
		})
	}
}
