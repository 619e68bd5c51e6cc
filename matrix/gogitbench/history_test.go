// Package gogitbench measures reading a matrix file's history with go-git
// beside reading it with the git program, as gameday does (matrix.Repo),
// on the same repository in the same run. It is a module of its own so
// that go-git never becomes a dependency of gameday.
package gogitbench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/gameday-dev/gameday/matrix"
)

const (
	commits = 1000
	file    = "resiliency-matrix.yaml"
)

// history writes a repository whose matrix of ten rows has one row's run
// in each of its commits (one git fast-import), and returns its directory.
func history(tb testing.TB) string {
	dir := tb.TempDir()
	deps := []string{"payment", "inventory", "sessions", "redis", "postgres", "gateway", "search", "email", "tax", "fraud"}
	last := make([]int, len(deps))
	var in bytes.Buffer
	for c := range commits {
		last[c%len(deps)] = c
		var m strings.Builder
		m.WriteString("version: 1\nrows:\n")
		for i, dep := range deps {
			verdict := "pass"
			if last[i]%7 == 0 {
				verdict = "fail"
			}
			at := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(last[i]) * time.Hour)
			fmt.Fprintf(&m, "  - {dependency: %s, failure: down, cadence: daily, scenario: ./drills/%s-down.yaml, last: {at: %s, verdict: %s}}\n", dep, dep, at.Format(time.RFC3339), verdict)
		}
		subject := fmt.Sprintf("drill %d", c)
		fmt.Fprintf(&in, "commit refs/heads/main\ncommitter sre <sre@example.org> %d +0000\ndata %d\n%s\nM 644 inline %s\ndata %d\n%s\n",
			1704067200+c*3600, len(subject), subject, file, m.Len(), m.String())
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"fast-import", "--quiet"}, {"checkout", "-q", "main"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if args[0] == "fast-import" {
			cmd.Stdin = &in
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			tb.Fatalf("git %s: %v\n%s", args[0], err, out)
		}
	}
	return dir
}

// goGitRevisions are the commits that changed path along the first parent
// of HEAD, newest first, each with its file: what matrix.Repo.Revisions
// reads with the git program, read with go-git (which has no rename
// following: the path is taken as it is).
func goGitRevisions(dir, path string) ([]matrix.Revision, error) {
	repo, err := git.PlainOpen(dir)
	if err != nil {
		return nil, err
	}
	ref, err := repo.Head()
	if err != nil {
		return nil, err
	}
	c, err := repo.CommitObject(ref.Hash())
	if err != nil {
		return nil, err
	}
	blob := func(c *object.Commit) (*object.File, error) {
		f, err := c.File(path)
		if errors.Is(err, object.ErrFileNotFound) {
			return nil, nil
		}
		return f, err
	}
	var revs []matrix.Revision
	for c != nil {
		f, err := blob(c)
		if err != nil {
			return nil, err
		}
		var parent *object.Commit
		before := plumbing.ZeroHash
		if c.NumParents() > 0 {
			if parent, err = c.Parent(0); err != nil {
				return nil, err
			}
			pf, err := blob(parent)
			if err != nil {
				return nil, err
			}
			if pf != nil {
				before = pf.Hash
			}
		}
		if f != nil && f.Hash != before {
			text, err := f.Contents()
			if err != nil {
				return nil, err
			}
			subject, _, _ := strings.Cut(c.Message, "\n")
			revs = append(revs, matrix.Revision{Commit: c.Hash.String(), At: c.Committer.When.UTC(), Subject: subject, Path: path, Data: []byte(text)})
		}
		c = parent
	}
	return revs, nil
}

// Both read the same revisions, byte for byte.
func TestSameRevisions(t *testing.T) {
	dir := history(t)
	rp, err := matrix.OpenRepo(context.Background(), filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}
	want, err := rp.Revisions(context.Background(), "", 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := goGitRevisions(dir, file)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != commits || len(want) != commits {
		t.Fatalf("go-git read %d revisions, git %d; want %d", len(got), len(want), commits)
	}
	for i := range want {
		if got[i].Commit != want[i].Commit || !got[i].At.Equal(want[i].At) || got[i].Subject != want[i].Subject || !bytes.Equal(got[i].Data, want[i].Data) {
			t.Fatalf("revision %d: go-git %s %s %q, git %s %s %q", i, got[i].Short(), got[i].At, got[i].Subject, want[i].Short(), want[i].At, want[i].Subject)
		}
	}
}

// BenchmarkRevisions reads a thousand revisions of the matrix file with
// the git program (as gameday does) and with go-git, side by side; and
// the history built from them, as gameday matrix history builds it.
func BenchmarkRevisions(b *testing.B) {
	dir := history(b)
	ctx := context.Background()
	rp, err := matrix.OpenRepo(ctx, filepath.Join(dir, file))
	if err != nil {
		b.Fatal(err)
	}
	read := map[string]func() ([]matrix.Revision, error){
		"git-program": func() ([]matrix.Revision, error) { return rp.Revisions(ctx, "", 0) },
		"go-git":      func() ([]matrix.Revision, error) { return goGitRevisions(dir, file) },
	}
	for _, name := range []string{"git-program", "go-git"} {
		b.Run(name, func(b *testing.B) {
			for range b.N {
				revs, err := read[name]()
				if err != nil || len(revs) != commits {
					b.Fatalf("%d revisions, %v", len(revs), err)
				}
			}
		})
		b.Run(name+"+history", func(b *testing.B) {
			for range b.N {
				revs, err := read[name]()
				if err != nil {
					b.Fatal(err)
				}
				if h := matrix.BuildHistory(revs, nil); len(h.Rows) != 10 {
					b.Fatalf("%d rows", len(h.Rows))
				}
			}
		})
	}
}
