package matrix

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/internal/testenv"
	"github.com/gameday-dev/gameday/scenarios"
)

// Update writes the change atomically, keeps the file's permissions and
// leaves neither lock nor temporary file behind; re-applying the same
// results writes nothing at all: the modification time stays.
func TestUpdateWritesOnceAndOnlyOnChange(t *testing.T) {
	path := fixture(t, "handwritten.yaml")
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	apply := func(m *Matrix) error {
		for _, r := range drills {
			if _, err := m.Apply(r); err != nil {
				return err
			}
		}
		return nil
	}
	if err := Update(path, apply); err != nil {
		t.Fatal(err)
	}
	if got, want := readFile(t, path), readFile(t, "testdata/applied.golden.yaml"); !bytes.Equal(got, want) {
		t.Errorf("after Update:\n%s", firstDiff(want, got))
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640", info.Mode().Perm())
	}
	if names := testenv.DirNames(t, filepath.Dir(path)); len(names) != 1 {
		t.Errorf("files left behind: %v", names)
	}

	// Age the file, so that a rewrite within the same clock tick would show.
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	var changed bool
	err = Update(path, func(m *Matrix) error {
		for _, r := range drills {
			c, err := m.Apply(r)
			if err != nil {
				return err
			}
			changed = changed || c
		}
		return nil
	})
	if err != nil || changed {
		t.Fatalf("second Update: changed %v, %v", changed, err)
	}
	after, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !after.ModTime().Equal(old) || !os.SameFile(info, after) {
		t.Errorf("the file was rewritten: mtime %v, want %v", after.ModTime(), old)
	}
}

// fn's error is returned and nothing is written; a missing file is an
// error that says how to make one.
func TestUpdateErrors(t *testing.T) {
	path := fixture(t, "handwritten.yaml")
	before := readFile(t, path)
	boom := errors.New("boom")
	err := Update(path, func(m *Matrix) error {
		if _, err := m.Apply(drills[0]); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) || !bytes.Equal(readFile(t, path), before) {
		t.Errorf("Update: %v; file changed: %v", err, !bytes.Equal(readFile(t, path), before))
	}
	err = Update(filepath.Join(t.TempDir(), DefaultFile), func(*Matrix) error { return nil })
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "gameday init") {
		t.Errorf("missing file: %v", err)
	}
}

// Update follows a symbolic link and replaces the file it points at.
func TestUpdateThroughSymlink(t *testing.T) {
	path := fixture(t, "handwritten.yaml")
	link := filepath.Join(t.TempDir(), DefaultFile)
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	if err := Update(link, func(m *Matrix) error { _, err := m.Apply(drills[0]); return err }); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v", err)
	}
	if !bytes.Contains(readFile(t, path), []byte("commit: \"1234567\"")) {
		t.Error("the target was not updated")
	}
}

// A writer killed at any point of an update leaves the previous matrix
// byte for byte; a temporary file it left is never taken for the matrix,
// and the next update removes it and takes the lock at once.
func TestKilledWriterLeavesMatrixIntact(t *testing.T) {
	if stage := os.Getenv("MATRIX_CRASH"); stage != "" {
		crashingWriter(stage, os.Getenv("MATRIX_FILE"))
		return
	}
	for _, stage := range []string{
		"in-fn",        // killed by the parent while holding the lock
		"temp-partial", // killed with half the new text written
		"temp-written", // killed with the whole text written, not synced
		"temp-synced",  // killed just before the rename
	} {
		t.Run(stage, func(t *testing.T) {
			path := fixture(t, "handwritten.yaml")
			before := readFile(t, path)
			cmd := exec.Command(os.Args[0], "-test.run=^TestKilledWriterLeavesMatrixIntact$", "-test.count=1")
			cmd.Env = append(os.Environ(), "MATRIX_CRASH="+stage, "MATRIX_FILE="+path)
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stderr = os.Stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if stage == "in-fn" {
				line, err := bufio.NewReader(stdout).ReadString('\n')
				if err != nil || line != "ready\n" {
					t.Fatalf("child said %q, %v", line, err)
				}
				if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
			}
			out, _ := bufio.NewReader(stdout).ReadString(0)
			err = cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("child was not killed: %v %s", err, out)
			}

			if after := readFile(t, path); !bytes.Equal(after, before) {
				t.Fatalf("the matrix changed:\n%s", firstDiff(before, after))
			}
			if _, err := Load(path); err != nil {
				t.Fatal(err)
			}
			var temps []string
			for _, n := range testenv.DirNames(t, filepath.Dir(path)) {
				if n != filepath.Base(path) && n != filepath.Base(path)+".lock" {
					temps = append(temps, n)
				}
			}
			if stage != "in-fn" && len(temps) != 1 {
				t.Errorf("want the killed writer's temporary file, found %v", temps)
			}
			for _, n := range temps {
				if !strings.HasPrefix(n, ".") || strings.HasSuffix(n, ".yaml") || strings.HasSuffix(n, ".yml") {
					t.Errorf("temporary file %q could be taken for a matrix", n)
				}
			}

			done := make(chan error, 1)
			go func() {
				done <- Update(path, func(m *Matrix) error { _, err := m.Apply(drills[0]); return err })
			}()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the lock of the killed writer was not released")
			}
			if names := testenv.DirNames(t, filepath.Dir(path)); len(names) != 1 {
				t.Errorf("left behind after the next update: %v", names)
			}
		})
	}
}

// crashingWriter is the child of TestKilledWriterLeavesMatrixIntact: it
// updates the matrix and dies at stage.
func crashingWriter(stage, path string) {
	die := func() {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		time.Sleep(time.Minute)
	}
	testHook = func(s string) {
		switch {
		case stage == "temp-partial" && s == "temp-written":
			dir := filepath.Dir(path)
			es, _ := os.ReadDir(dir)
			for _, e := range es {
				if strings.HasPrefix(e.Name(), tempPrefix(path)) {
					full := filepath.Join(dir, e.Name())
					if fi, err := os.Stat(full); err == nil {
						os.Truncate(full, fi.Size()/2)
					}
				}
			}
			die()
		case s == stage:
			die()
		}
	}
	err := Update(path, func(m *Matrix) error {
		if _, err := m.Apply(drills[0]); err != nil {
			return err
		}
		if stage == "in-fn" {
			fmt.Println("ready")
			time.Sleep(time.Minute)
		}
		return nil
	})
	fmt.Println("not killed:", err)
	os.Exit(1)
}

// Concurrent updates of one file, from goroutines and from processes,
// take turns: every one of them lands, none is lost.
func TestConcurrentUpdatesAllLand(t *testing.T) {
	if sc := os.Getenv("MATRIX_APPLY"); sc != "" {
		concurrentWriter(sc, os.Getenv("MATRIX_FILE"))
		return
	}
	scs, err := scenarios.Catalogue()
	if err != nil {
		t.Fatal(err)
	}
	data, err := Starter(scs)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), DefaultFile)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}

	// Half the scenarios from child processes, half from goroutines, all
	// started together; each holds the lock for a few milliseconds.
	var (
		wg       sync.WaitGroup
		inside   atomic.Int32
		overlaps atomic.Int32
		errs     = make(chan error, len(scs))
	)
	for i, sc := range scs {
		wg.Add(1)
		if i%2 == 0 {
			go func() {
				defer wg.Done()
				cmd := exec.Command(os.Args[0], "-test.run=^TestConcurrentUpdatesAllLand$", "-test.count=1")
				cmd.Env = append(os.Environ(), "MATRIX_APPLY="+sc.Name, "MATRIX_FILE="+path)
				if out, err := cmd.CombinedOutput(); err != nil {
					errs <- fmt.Errorf("process for %s: %v\n%s", sc.Name, err, out)
				}
			}()
			continue
		}
		go func() {
			defer wg.Done()
			errs <- Update(path, func(m *Matrix) error {
				if inside.Add(1) > 1 {
					overlaps.Add(1)
				}
				defer inside.Add(-1)
				time.Sleep(5 * time.Millisecond)
				_, err := m.Apply(Result{Scenario: sc.Name, At: runAt, Verdict: VerdictPass})
				return err
			})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := overlaps.Load(); n > 0 {
		t.Errorf("%d updates ran while another held the lock", n)
	}
	m, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range m.Rows() {
		if r.Last == nil || !r.Last.At.Equal(runAt.Truncate(time.Second)) {
			t.Errorf("row %s lost its update: %+v", r.ID(), r.Last)
		}
	}
	if names := testenv.DirNames(t, filepath.Dir(path)); len(names) != 1 {
		t.Errorf("files left behind: %v", names)
	}
}

// concurrentWriter is a child of TestConcurrentUpdatesAllLand.
func concurrentWriter(scenario, path string) {
	err := Update(path, func(m *Matrix) error {
		time.Sleep(5 * time.Millisecond)
		_, err := m.Apply(Result{Scenario: scenario, At: runAt, Verdict: VerdictPass})
		return err
	})
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	os.Exit(0)
}
