package matrix

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// repo is a git repository the test builds, commit by commit, with fixed
// authors and dates: the same commits, byte for byte, on every machine.
type repo struct {
	t    *testing.T
	dir  string
	tick int
}

func newRepo(t *testing.T) *repo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("git is needed: %v", err)
	}
	r := &repo{t: t, dir: t.TempDir()}
	r.git("init", "-q", "-b", "main")
	return r
}

func (r *repo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.dir
	date := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC).Add(time.Duration(r.tick) * time.Hour).Format(time.RFC3339)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=sre", "GIT_AUTHOR_EMAIL=sre@example.org", "GIT_COMMITTER_NAME=sre",
		"GIT_COMMITTER_EMAIL=sre@example.org", "GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date,
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// commit writes file and commits it (and whatever else is staged).
func (r *repo) commit(file, content, msg string) string {
	r.t.Helper()
	r.tick++
	path := filepath.Join(r.dir, file)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
	r.git("add", "-A")
	r.git("commit", "-q", "--no-gpg-sign", "-m", msg)
	return r.git("rev-parse", "HEAD")
}

// row is one row of a test matrix: a verdict ("" never run) at day.
type row struct {
	dep, failure, scenario, status, verdict string
	day                                     int
}

func matrixText(rows ...row) string {
	var b strings.Builder
	b.WriteString("version: 1\nrows:\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "  - dependency: %s\n    failure: %s\n    cadence: weekly\n    scenario: %s\n    runbook: https://wiki.example/runbooks/%s-%s\n", r.dep, r.failure, r.scenario, r.dep, r.failure)
		if r.status != "" {
			fmt.Fprintf(&b, "    status: %s\n", r.status)
		}
		if r.verdict != "" {
			fmt.Fprintf(&b, "    last:\n      at: %s\n      verdict: %s\n", time.Date(2026, 11, r.day, 10, 0, 0, 0, time.UTC).Format(time.RFC3339), r.verdict)
		}
	}
	return b.String()
}

// history builds a repository whose matrix has two rows and a row's
// verdict that flaps, a commit of conflict markers, a rename, and
// returns it with the history read.
func flappyRepo(t *testing.T) (*repo, string) {
	r := newRepo(t)
	latency := func(v string, day int) row { return row{"payment", "latency", "payment-latency", "", v, day} }
	down := func(v string, day int) row { return row{"payment", "down", "payment-down", "", v, day} }
	r.commit("ops/matrix.yaml", matrixText(latency("", 0), down("", 0)), "add the matrix")
	verdicts := []string{"pass", "fail", "pass", "pass", "fail", "pass", "fail", "fail"}
	for i, v := range verdicts {
		r.commit("ops/matrix.yaml", matrixText(latency(v, i+1), down("pass", i+1)), fmt.Sprintf("drill %d", i+1))
		if i == 3 {
			// A merge that went wrong: conflict markers committed, then
			// fixed by the next commit.
			r.commit("ops/matrix.yaml", "<<<<<<< HEAD\n"+matrixText(latency(v, i+1))+"=======\n"+matrixText(down(v, i+1))+">>>>>>> other\n", "merge, badly")
		}
	}
	r.git("mv", "ops/matrix.yaml", "resiliency-matrix.yaml")
	r.tick++
	r.git("commit", "-q", "--no-gpg-sign", "-m", "move the matrix to the top")
	return r, filepath.Join(r.dir, "resiliency-matrix.yaml")
}

func readHistory(t *testing.T, file string) History {
	t.Helper()
	ctx := context.Background()
	rp, err := OpenRepo(ctx, file)
	if err != nil {
		t.Fatal(err)
	}
	revs, err := rp.Revisions(ctx, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	h := BuildHistory(revs, m)
	h.Shallow = rp.Shallow(ctx)
	return h
}

// Each row's runs over a history with a rename and a commit of conflict
// markers: every run read once, the broken commit named and skipped, the
// flapping row found, the steady one not.
func TestHistoryOverGit(t *testing.T) {
	_, file := flappyRepo(t)
	h := readHistory(t, file)
	if len(h.Rows) != 2 || h.Rows[0].ID != "payment/latency" || h.Rows[1].ID != "payment/down" {
		t.Fatalf("rows %+v", h.Rows)
	}
	lat, down := h.Rows[0], h.Rows[1]
	if got := lat.timeline(FlapRuns); got != "PFPPFPFF" {
		t.Errorf("latency's timeline %q, want PFPPFPFF (every drill, across the rename)", got)
	}
	if lat.Streak != 2 || lat.Since == nil || lat.Since.At.Day() != 7 || lat.LastPass == nil || lat.LastPass.At.Day() != 6 {
		t.Errorf("latency: streak %d, since %+v, last pass %+v", lat.Streak, lat.Since, lat.LastPass)
	}
	if !lat.Flapping || lat.Changes != 5 {
		t.Errorf("latency: flapping %v with %d changes, want 5 changes: flapping", lat.Flapping, lat.Changes)
	}
	// One run of down per drill, though its `last` was carried through
	// the rename and the repair of the merge.
	if len(down.Runs) != 8 || down.Flapping || down.Since != nil || down.Streak != 8 {
		t.Errorf("down: %d runs, flapping %v, since %v, streak %d", len(down.Runs), down.Flapping, down.Since, down.Streak)
	}
	if len(h.Skipped) != 1 || !strings.Contains(h.Skipped[0], "merge-conflict") && !strings.Contains(h.Skipped[0], "conflict") {
		t.Errorf("skipped %q, want the commit of conflict markers", h.Skipped)
	}
	p := h.Flapping()
	if len(p) != 1 || p[0].Row.ID() != "payment/latency" || p[0].Reason != ReasonFlapping || !strings.Contains(p[0].Detail, "PFPPFPFF") {
		t.Errorf("flapping problems %v", p)
	}
	var table, markdown bytes.Buffer
	if err := RenderHistoryTable(&table, h, now); err != nil {
		t.Fatal(err)
	}
	golden(t, "history.txt.golden", table.Bytes())
	if err := RenderHistoryMarkdown(&markdown, h, now); err != nil {
		t.Fatal(err)
	}
	golden(t, "history.md.golden", markdown.Bytes())
	// The page: every run a mark with its time and commit, the flapping
	// row marked, the skipped commit said.
	var page bytes.Buffer
	if err := RenderHistoryHTML(&page, h, now); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<span class="v-fail" title="2026-11-07 10:00 UTC: fail (commit `, `<td class="flapping">yes: 5 changes in 8 runs</td>`, "Skipped commit "} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("the HTML history lacks %q", want)
		}
	}
	golden(t, "history.html.golden", page.Bytes())
}

// A shallow clone shows the history it has, and says so; it never fails.
func TestHistoryOfAShallowClone(t *testing.T) {
	r, _ := flappyRepo(t)
	clone := filepath.Join(t.TempDir(), "clone")
	cmd := exec.Command("git", "clone", "-q", "--depth", "3", "file://"+r.dir, clone)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	h := readHistory(t, filepath.Join(clone, "resiliency-matrix.yaml"))
	if !h.Shallow || h.Revisions == 0 || h.Revisions > 3 {
		t.Fatalf("shallow %v, %d revisions", h.Shallow, h.Revisions)
	}
	var b bytes.Buffer
	if err := RenderHistoryTable(&b, h, now); err != nil || !strings.Contains(b.String(), "shallow clone") {
		t.Errorf("%v\n%s", err, b.String())
	}
}

// A file outside git has no history: ErrNotInGit, not a crash.
func TestHistoryOutsideGit(t *testing.T) {
	file := fixture(t, "handwritten.yaml")
	if _, err := OpenRepo(context.Background(), file); err == nil {
		t.Fatal("a file in a temporary directory is in a git repository")
	}
}

// Diff between two revisions of the repository: a verdict that failed is
// worse and comes first; a verdict that came back is better; a promise
// made a known gap is worse; rows added and removed.
func TestDiff(t *testing.T) {
	base := mustParse(t, "base.yaml", []byte(matrixText(
		row{"payment", "latency", "payment-latency", "", "pass", 1},
		row{"payment", "down", "payment-down", "", "fail", 1},
		row{"inventory", "down", "inventory-down", "", "pass", 1},
		row{"inventory", "latency", "inventory-latency", "", "pass", 1},
	)))
	head := mustParse(t, "head.yaml", []byte(matrixText(
		row{"payment", "down", "payment-down", "", "pass", 2},
		row{"payment", "latency", "payment-latency", "", "fail", 2},
		row{"inventory", "down", "inventory-down", "known_gap", "pass", 1},
		row{"payment", "rate_limit", "payment-429", "", "", 0},
	)))
	changes := Diff(base, head)
	var kinds []string
	for _, c := range changes {
		kinds = append(kinds, fmt.Sprintf("%s:%s", c.ID, news(c)))
	}
	want := "payment/latency:worse inventory/down:worse inventory/latency:worse payment/down:better payment/rate_limit:added"
	if got := strings.Join(kinds, " "); got != want {
		t.Errorf("changes %s\nwant    %s", got, want)
	}
	if !Worse(changes) {
		t.Error("not worse")
	}
	// The same run again (a new at, the same verdict) is not news.
	again := mustParse(t, "again.yaml", []byte(matrixText(row{"payment", "latency", "payment-latency", "", "pass", 9})))
	first := mustParse(t, "first.yaml", []byte(matrixText(row{"payment", "latency", "payment-latency", "", "pass", 1})))
	if c := Diff(first, again); len(c) != 0 || Worse(c) {
		t.Errorf("a new pass: %+v", c)
	}
	var table, markdown bytes.Buffer
	if err := RenderDiffTable(&table, changes, "main (abc1234)", "resiliency-matrix.yaml"); err != nil {
		t.Fatal(err)
	}
	golden(t, "diff.txt.golden", table.Bytes())
	if err := RenderDiffMarkdown(&markdown, changes, "main (abc1234)", "resiliency-matrix.yaml"); err != nil {
		t.Fatal(err)
	}
	golden(t, "diff.md.golden", markdown.Bytes())
}

// The base of a diff read from git: the file as a commit had it, at the
// path it has now.
func TestRevisionAt(t *testing.T) {
	r := newRepo(t)
	first := r.commit("resiliency-matrix.yaml", matrixText(row{"payment", "latency", "payment-latency", "", "pass", 1}), "one")
	r.commit("resiliency-matrix.yaml", matrixText(row{"payment", "latency", "payment-latency", "", "fail", 2}), "two")
	rp, err := OpenRepo(context.Background(), filepath.Join(r.dir, "resiliency-matrix.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rv, err := rp.At(context.Background(), "HEAD~1")
	if err != nil || rv.Commit != first || !strings.Contains(string(rv.Data), "verdict: pass") {
		t.Fatalf("HEAD~1: %v, %+v", err, rv)
	}
	if _, err := rp.At(context.Background(), "no-such-branch"); err == nil {
		t.Error("a branch that is not there")
	}
	// Before a rename, the file is read at the path it had then.
	_, renamed := flappyRepo(t)
	rp2, err := OpenRepo(context.Background(), renamed)
	if err != nil {
		t.Fatal(err)
	}
	if rv, err := rp2.At(context.Background(), "HEAD~1"); err != nil || rv.Path != "ops/matrix.yaml" || !strings.Contains(string(rv.Data), "verdict: fail") {
		t.Errorf("HEAD~1, before the rename: %v, path %q", err, rv.Path)
	}
	r.git("branch", "-m", "main", "work")
	r.git("branch", "main", first)
	if mb, err := rp.MergeBase(context.Background()); err != nil || mb != first {
		t.Errorf("merge base %q, %v; want %s", mb, err, first)
	}
}

// BenchmarkHistory reads the history of a matrix of 10 rows over 1,000
// commits, each a drill of one row (the repository written once, with git
// fast-import): the commits listed, every revision's file read, parsed,
// and each row's runs judged.
func BenchmarkHistory(b *testing.B) {
	dir := b.TempDir()
	if out, err := exec.Command("git", "init", "-q", "-b", "main", dir).CombinedOutput(); err != nil {
		b.Fatalf("git init: %v\n%s", err, out)
	}
	var stream bytes.Buffer
	deps := []string{"payment", "inventory", "sessions", "redis", "postgres", "gateway", "search", "email", "tax", "fraud"}
	verdicts, runs := make([]string, len(deps)), make([]int, len(deps))
	for i := range verdicts {
		verdicts[i] = "pass"
	}
	const commits = 1000
	for c := range commits {
		d := c % len(deps)
		runs[d] = c
		if c%7 == 0 {
			verdicts[d] = "fail"
		} else {
			verdicts[d] = "pass"
		}
		var m strings.Builder
		m.WriteString("version: 1\nrows:\n")
		for i, dep := range deps {
			fmt.Fprintf(&m, "  - dependency: %s\n    failure: down\n    cadence: daily\n    scenario: ./drills/%s-down.yaml\n    last:\n      at: %s\n      verdict: %s\n",
				dep, dep, time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(runs[i])*time.Hour).Format(time.RFC3339), verdicts[i])
		}
		msg := fmt.Sprintf("drill %d", c)
		fmt.Fprintf(&stream, "commit refs/heads/main\ncommitter sre <sre@example.org> %d +0000\ndata %d\n%s\n", 1704067200+c*3600, len(msg), msg)
		fmt.Fprintf(&stream, "M 644 inline resiliency-matrix.yaml\ndata %d\n%s\n", m.Len(), m.String())
	}
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir, cmd.Stdin = dir, &stream
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("git fast-import: %v\n%s", err, out)
	}
	if out, err := exec.Command("git", "-C", dir, "checkout", "-q", "main").CombinedOutput(); err != nil {
		b.Fatalf("git checkout: %v\n%s", err, out)
	}
	ctx := context.Background()
	rp, err := OpenRepo(ctx, filepath.Join(dir, "resiliency-matrix.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	// Side by side: what git costs (one git log, one git cat-file
	// --batch), and that with every revision parsed and judged.
	b.Run("git", func(b *testing.B) {
		for range b.N {
			revs, err := rp.Revisions(ctx, "", 0)
			if err != nil || len(revs) != commits {
				b.Fatalf("%d revisions, %v", len(revs), err)
			}
		}
	})
	b.Run("history", func(b *testing.B) {
		for range b.N {
			revs, err := rp.Revisions(ctx, "", 0)
			if err != nil {
				b.Fatal(err)
			}
			h := BuildHistory(revs, nil)
			if h.Revisions != commits || len(h.Skipped) != 0 || len(h.Rows) != len(deps) || len(h.Rows[0].Runs) != commits/len(deps) {
				b.Fatalf("%d revisions, skipped %v, %d rows", h.Revisions, h.Skipped, len(h.Rows))
			}
		}
	})
}
