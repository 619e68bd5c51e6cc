package matrix

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Revision is the matrix file as one commit of its repository had it.
type Revision struct {
	// Commit is the commit's full hash; At its committer date.
	Commit string
	At     time.Time
	// Subject is the first line of its message.
	Subject string
	// Path is the file's path in that commit, from the repository's top
	// (renames are followed).
	Path string
	// Data is the file's content in that commit.
	Data []byte
}

// Short is the commit's hash cut to 7 characters.
func (r Revision) Short() string { return short(r.Commit) }

func short(commit string) string {
	if len(commit) > 7 {
		return commit[:7]
	}
	return commit
}

// Repo is the git repository a matrix file is kept in, read with the git
// program: it is on every machine that has a clone (a Raspberry Pi
// included), follows renames and reads a shallow clone as it is, and one
// `git log` and one `git cat-file --batch` read a thousand revisions in
// well under a second (docs/matrix.md).
type Repo struct {
	// Top is the repository's work tree; Path the matrix file in it,
	// slash-separated from Top.
	Top, Path string
}

// ErrNotInGit is wrapped by OpenRepo's error when the file is not in a git
// work tree, or git is not installed.
var ErrNotInGit = errors.New("not in a git repository")

// OpenRepo finds the repository that file is in.
func OpenRepo(ctx context.Context, file string) (*Repo, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, err
	}
	top, err := git(ctx, filepath.Dir(abs), nil, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, fmt.Errorf("%s: %w (%v)", file, ErrNotInGit, err)
	}
	t := strings.TrimSpace(string(top))
	// The top as git spells it (symlinks resolved), and the file the same
	// way, so that the one is a prefix of the other.
	if resolved, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		abs = filepath.Join(resolved, filepath.Base(abs))
	}
	if r, err := filepath.EvalSymlinks(t); err == nil {
		t = r
	}
	rel, err := filepath.Rel(t, abs)
	if err != nil || strings.HasPrefix(rel, "..") {
		return nil, fmt.Errorf("%s: not under the repository at %s", file, t)
	}
	return &Repo{Top: t, Path: filepath.ToSlash(rel)}, nil
}

// Shallow reports whether the repository is a shallow clone: the history
// it has stops at a commit whose parents are not here.
func (r *Repo) Shallow(ctx context.Context) bool {
	out, err := git(ctx, r.Top, nil, "rev-parse", "--is-shallow-repository")
	return err == nil && strings.TrimSpace(string(out)) == "true"
}

// Revisions are the commits that changed the matrix file, newest first,
// along the first parent of rev ("" is HEAD): a merge is the commit that
// brought its branch's changes, as a pull request does. Renames are
// followed; at most limit are read (0: all).
func (r *Repo) Revisions(ctx context.Context, rev string, limit int) ([]Revision, error) {
	args := []string{"log", "--first-parent", "--follow", "--name-only", "--format=%x1e%H%x1f%cI%x1f%s"}
	if limit > 0 {
		args = append(args, "-n", strconv.Itoa(limit))
	}
	if rev == "" {
		rev = "HEAD"
		if _, err := git(ctx, r.Top, nil, "rev-parse", "--verify", "-q", "HEAD"); err != nil {
			return nil, nil // no commit yet: no history
		}
	}
	args = append(args, rev, "--", r.Path)
	out, err := git(ctx, r.Top, nil, args...)
	if err != nil {
		return nil, err
	}
	var revs []Revision
	for _, rec := range strings.Split(string(out), "\x1e") {
		rec = strings.TrimSpace(rec)
		if rec == "" {
			continue
		}
		head, names, _ := strings.Cut(rec, "\n")
		f := strings.SplitN(head, "\x1f", 3)
		if len(f) != 3 {
			return nil, fmt.Errorf("git log: unexpected line %q", head)
		}
		at, err := time.Parse(time.RFC3339, f[1])
		if err != nil {
			return nil, fmt.Errorf("git log: %w", err)
		}
		path := r.Path
		for _, n := range strings.Split(strings.TrimSpace(names), "\n") {
			if n = strings.TrimSpace(n); n != "" {
				path = n
				break
			}
		}
		revs = append(revs, Revision{Commit: f[0], At: at.UTC(), Subject: f[2], Path: path})
	}
	if err := r.read(ctx, revs); err != nil {
		return nil, err
	}
	return revs, nil
}

// At is the matrix file as rev has it (a commit, branch or tag): at the
// path it has now, or, where rev has no file there, at the path it had
// before it was renamed (git's rename detection between rev and HEAD).
func (r *Repo) At(ctx context.Context, rev string) (Revision, error) {
	out, err := git(ctx, r.Top, nil, "log", "-1", "--format=%H%x1f%cI%x1f%s", rev, "--")
	if err != nil {
		return Revision{}, err
	}
	f := strings.SplitN(strings.TrimSpace(string(out)), "\x1f", 3)
	if len(f) != 3 {
		return Revision{}, fmt.Errorf("git log %s: unexpected output %q", rev, out)
	}
	at, err := time.Parse(time.RFC3339, f[1])
	if err != nil {
		return Revision{}, fmt.Errorf("git log: %w", err)
	}
	revs := []Revision{{Commit: f[0], At: at.UTC(), Subject: f[2], Path: r.Path}}
	if err := r.read(ctx, revs); err != nil {
		return Revision{}, err
	}
	if revs[0].Data == nil {
		if old, ok := r.renamedFrom(ctx, f[0]); ok {
			revs[0].Path = old
			if err := r.read(ctx, revs); err != nil {
				return Revision{}, err
			}
		}
	}
	if revs[0].Data == nil {
		return Revision{}, fmt.Errorf("%s has no %s", rev, r.Path)
	}
	return revs[0], nil
}

// renamedFrom is the path the matrix file had at commit, when it was
// renamed between commit and HEAD.
func (r *Repo) renamedFrom(ctx context.Context, commit string) (string, bool) {
	out, err := git(ctx, r.Top, nil, "diff", "-M", "-z", "--name-status", "--diff-filter=R", commit, "HEAD")
	if err != nil {
		return "", false
	}
	// -z: status, old path, new path, each ended by a NUL.
	f := strings.Split(string(out), "\x00")
	for i := 0; i+2 < len(f); i += 3 {
		if strings.HasPrefix(f[i], "R") && f[i+2] == r.Path {
			return f[i+1], true
		}
	}
	return "", false
}

// MergeBase is the commit where the current branch left the default one:
// the merge base of HEAD with the remote's default branch (origin/HEAD),
// else with main, else master.
func (r *Repo) MergeBase(ctx context.Context) (string, error) {
	var tried []string
	for _, b := range []string{"origin/HEAD", "origin/main", "origin/master", "main", "master"} {
		out, err := git(ctx, r.Top, nil, "merge-base", "HEAD", b)
		if err == nil {
			return strings.TrimSpace(string(out)), nil
		}
		tried = append(tried, b)
	}
	return "", fmt.Errorf("no default branch to compare with (tried %s): name the base, a commit, branch or file", strings.Join(tried, ", "))
}

// read fills in each revision's Data with one git cat-file --batch; a
// revision whose file is missing (deleted there) keeps nil.
func (r *Repo) read(ctx context.Context, revs []Revision) error {
	if len(revs) == 0 {
		return nil
	}
	var in bytes.Buffer
	for _, rv := range revs {
		fmt.Fprintf(&in, "%s:%s\n", rv.Commit, rv.Path)
	}
	out, err := git(ctx, r.Top, &in, "cat-file", "--batch")
	if err != nil {
		return err
	}
	br := bufio.NewReader(bytes.NewReader(out))
	for i := range revs {
		head, err := br.ReadString('\n')
		if err != nil {
			return fmt.Errorf("git cat-file: %w", err)
		}
		f := strings.Fields(head)
		if len(f) == 2 && f[1] == "missing" {
			continue
		}
		if len(f) != 3 {
			return fmt.Errorf("git cat-file: unexpected line %q", head)
		}
		if f[1] != "blob" {
			continue // a directory or a submodule by that name: no file
		}
		n, err := strconv.Atoi(f[2])
		if err != nil || n < 0 {
			return fmt.Errorf("git cat-file: unexpected size in %q", head)
		}
		if n > MaxSize {
			// Parse refuses it, naming the size: keep one byte more.
			n2 := MaxSize + 1
			data := make([]byte, n2)
			if _, err := io.ReadFull(br, data); err != nil {
				return fmt.Errorf("git cat-file: %w", err)
			}
			if _, err := br.Discard(n - n2 + 1); err != nil {
				return fmt.Errorf("git cat-file: %w", err)
			}
			revs[i].Data = data
			continue
		}
		data := make([]byte, n)
		if _, err := io.ReadFull(br, data); err != nil {
			return fmt.Errorf("git cat-file: %w", err)
		}
		if _, err := br.Discard(1); err != nil { // the newline after the content
			return fmt.Errorf("git cat-file: %w", err)
		}
		revs[i].Data = data
	}
	return nil
}

// git runs the git program in dir, with in as its input; its output, or an
// error with what it said.
func git(ctx context.Context, dir string, in io.Reader, args ...string) ([]byte, error) {
	// Paths as they are (not quoted), no signatures in the log.
	cmd := exec.CommandContext(ctx, "git", append([]string{"-c", "core.quotePath=false", "-c", "log.showSignature=false"}, args...)...)
	cmd.Dir = dir
	cmd.Stdin = in
	// No pager, no prompt, no local configuration that changes the
	// output's shape (log.showSignature, color).
	cmd.Env = append(cmd.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat", "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 300 {
			msg = msg[:300] + "…"
		}
		return nil, fmt.Errorf("git %s: %v: %s", strings.Join(args[:min(len(args), 2)], " "), err, msg)
	}
	return out, nil
}
