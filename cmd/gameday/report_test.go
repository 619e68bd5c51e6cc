package main

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gameday-dev/gameday/gameday"
	"github.com/gameday-dev/gameday/gameday/runrecord"
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
		// A run directory: the three reports written, and said so.
		{name: "good dir", args: []string{good}, rendered: []string{good},
			stdoutHas: []string{"wrote " + filepath.Join(good, "report.html") + ", " + filepath.Join(good, "junit.xml") + " and " + filepath.Join(good, "summary.md")}},
		// -format html is the default said aloud, and a flag may follow
		// the directories.
		{name: "format html", args: []string{good, "-format", "html"}, rendered: []string{good}},
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
				os.Remove(filepath.Join(dir, "summary.md"))
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
				summary, err := os.ReadFile(filepath.Join(dir, "summary.md"))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Contains(summary, []byte("[report.html](report.html)")) {
					t.Errorf("%s/summary.md does not link report.html:\n%s", dir, summary)
				}
			}
		})
	}
}

// listDir is every file under dir with its contents, to show that a
// command wrote nothing.
func listDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		files[path] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestReportMarkdown(t *testing.T) {
	fail, pass := fixtureRun(t, "fail"), fixtureRun(t, "pass")
	empty := t.TempDir()
	before := map[string]map[string]string{fail: listDir(t, fail), pass: listDir(t, pass)}
	cases := []struct {
		name      string
		args      []string
		usage     bool
		stdoutHas []string // in this order
		stderrHas []string
	}{
		// Two runs, one after the other, each under its heading and
		// linking its own report.html.
		{name: "two runs", args: []string{"-format", "markdown", fail, pass}, stdoutHas: []string{
			"## ✗ FAIL: payment-timeouts\n", "(" + filepath.ToSlash(filepath.Join(fail, "report.html")) + ")",
			"| charged after leaving is at most 0 | 1 | ✗ **broken** |",
			"\n\n## ✓ PASS: payment-latency\n", "(" + filepath.ToSlash(filepath.Join(pass, "report.html")) + ")"}},
		// The flag after the directory, and its short name.
		{name: "flag last", args: []string{filepath.Join(pass, "run.json"), "--format=md"}, stdoutHas: []string{"## ✓ PASS: payment-latency"}},
		// A bad directory among good ones: the good one is printed, the
		// bad one named, and the exit is 2.
		{name: "mixed", args: []string{"-format", "markdown", empty, fail}, usage: true,
			stdoutHas: []string{"## ✗ FAIL: payment-timeouts"},
			stderrHas: []string{empty + ": no run.json here", "1 of 2 run directories not summarised"}},
		// A format it does not know is a usage error naming the flag,
		// and nothing is done.
		{name: "bad format", args: []string{"-format", "pdf", fail}, usage: true, stderrHas: []string{`-format "pdf": want html or markdown`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := reportCmd(c.args, &stdout, &stderr)
			var ue usageError
			if got := errors.As(err, &ue); got != c.usage || (err != nil && !c.usage) {
				t.Fatalf("error %v, want usage error %v", err, c.usage)
			}
			if err != nil {
				stderr.WriteString(err.Error())
			}
			out := stdout.String()
			at := 0
			for _, want := range c.stdoutHas {
				i := strings.Index(out[at:], want)
				if i < 0 {
					t.Fatalf("stdout lacks %q after byte %d:\n%s", want, at, out)
				}
				at += i + len(want)
			}
			if len(c.stdoutHas) == 0 && out != "" {
				t.Errorf("stdout %q, want nothing", out)
			}
			for _, want := range c.stderrHas {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr %q lacks %q", stderr.String(), want)
				}
			}
			for dir, files := range before {
				if after := listDir(t, dir); !maps.Equal(after, files) {
					t.Errorf("%s changed: %d files before, %d after", dir, len(files), len(after))
				}
			}
		})
	}
	// A bad format exits 2, as main would.
	var stdout, stderr bytes.Buffer
	if code := run([]string{"report", "--format", "pdf", fail}, &stdout, &stderr); code != exitUsage {
		t.Errorf("report --format pdf exit %d, want %d", code, exitUsage)
	}
}

// TestReportHelp: -h prints the synopsis, what it does and the flag.
func TestReportHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"report", "-h"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("report -h exit %d, want %d; stderr %s", code, exitOK, stderr.String())
	}
	help := stdout.String() + stderr.String()
	for _, want := range []string{"usage: gameday report [-format html|markdown] RUN_DIR...", "GITHUB_STEP_SUMMARY", "-format", "summary.md"} {
		if !strings.Contains(help, want) {
			t.Errorf("report -h lacks %q:\n%s", want, help)
		}
	}
}

// The run's summary says a kept value was sent empty right after the why,
// before the figures the why may be made of.
func TestSummaryWarnsOfEmptyKeptValuesFirst(t *testing.T) {
	r := &gameday.Record{Reason: "charged after leaving is at most 0 (observed: 23)", CheckoutPrefix: "s1ttpio8f", EmptyKept: []runrecord.EmptyKept{
		{Step: "poll", Kept: "order", Requests: 61, KeptBy: "step place's keep.order (json: orderId)"}}}
	var b bytes.Buffer
	printSummary(&b, r)
	lines := strings.Split(b.String(), "\n")
	want := "  warning: step poll sent 61 requests with {{.Kept.order}} empty: no answer of an earlier step had it where step place's keep.order (json: orderId) says; what the system answered them may be what the verdict counts"
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "  why: ") || lines[1] != want {
		t.Errorf("summary:\n%s\nwant its second line:\n%s", b.String(), want)
	}
	// And it names the run's checkout ids, to filter the system's own
	// books and logs by.
	if !strings.Contains(b.String(), "  checkout ids: s1ttpio8f-0, s1ttpio8f-1, ... (filter your books and logs by s1ttpio8f-)\n") {
		t.Errorf("summary without the run's checkout ids:\n%s", b.String())
	}
}
