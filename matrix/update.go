package matrix

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/gameday-dev/gameday/internal/durable"
	"github.com/gameday-dev/gameday/internal/filelock"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// testHook, when set by a test, is called at each stage of a write
// ("locked", "temp-written", "temp-synced", "renamed"), so that a test can
// kill the process there.
var testHook func(stage string)

func hook(stage string) {
	if testHook != nil {
		testHook(stage)
	}
}

// Update reads, changes and writes back the matrix file at path, holding an
// exclusive lock so that two runs cannot interleave: it takes the lock
// (flock on path+".lock", waiting for a holder to finish), loads the file,
// calls fn, and if the text changed writes it atomically: a temporary file
// in the same directory, fsynced, renamed over the file (keeping its
// permissions), then the directory fsynced. Readers see the old file or the
// new one, never a mix; a writer killed at any point leaves the old file.
//
// A file that fails to parse is left exactly as it was and the error
// returned (*Error values naming file, line and field); so is one when fn
// returns an error. When fn changes nothing — re-applying the same results
// — nothing is written at all: not a byte, not the file's modification
// time.
//
// The lock file exists only while an update holds it; one left by a
// process that was killed is harmless (the kernel released its lock) and
// the next update removes it, along with any temporary file it left.
func Update(path string, fn func(*Matrix) error) error {
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("update matrix: %w (gameday init writes a starter)", err)
		}
		return fmt.Errorf("update matrix: %w", err)
	}
	unlock, err := filelock.Lock(target + ".lock")
	if err != nil {
		return fmt.Errorf("update matrix %s: %w", path, err)
	}
	defer unlock()
	hook("locked")
	removeTemps(target)

	info, err := os.Stat(target)
	if err != nil {
		return fmt.Errorf("update matrix: %w", err)
	}
	data, err := readBounded(target)
	if err != nil {
		return fmt.Errorf("update matrix: %w", err)
	}
	m, err := Parse(path, data)
	if err != nil {
		return err
	}
	if err := fn(m); err != nil {
		return err
	}
	if bytes.Equal(m.data, data) {
		return nil
	}
	if err := writeAtomic(target, m.data, info.Mode().Perm()); err != nil {
		return fmt.Errorf("update matrix: %w", err)
	}
	return nil
}

// tempPrefix names the temporary files of updates to target: hidden, and
// not ending in .yaml, so that nothing takes one for the matrix.
func tempPrefix(target string) string { return "." + filepath.Base(target) + ".tmp-" }

// removeTemps removes temporary files that a killed update left next to
// target. Only a lock holder writes them, so none is in use.
func removeTemps(target string) {
	dir := filepath.Dir(target)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	prefix := tempPrefix(target)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) && e.Type().IsRegular() {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// writeAtomic replaces target with data: temporary file, fsync, rename,
// fsync of the directory.
func writeAtomic(target string, data []byte, perm fs.FileMode) (err error) {
	dir := filepath.Dir(target)
	tmp, err := os.CreateTemp(dir, tempPrefix(target)+"*")
	if err != nil {
		return err
	}
	renamed := false
	defer func() {
		if !renamed {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	hook("temp-written")
	if err := tmp.Chmod(perm); err != nil {
		return fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	hook("temp-synced")
	if err := os.Rename(tmp.Name(), target); err != nil {
		return err
	}
	renamed = true
	hook("renamed")
	return durable.SyncDir(dir)
}
