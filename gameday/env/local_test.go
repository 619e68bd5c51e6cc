package env

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gameday-dev/gameday/internal/owner"
)

// The local environment's data lives in memory, is removed with the
// environment, and what a killed runner left there is removed the next
// time; a live runner's is not. Without the memory directory it is the
// run directory, kept.
func TestLocalDataDirectory(t *testing.T) {
	root := t.TempDir()
	old := memoryRoot
	memoryRoot = root
	t.Cleanup(func() { memoryRoot = old })

	// A runner that is gone (its pid with another start time), and one
	// that runs (this test).
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := owner.Self()
	dead.Pid, dead.Started = cmd.ProcessState.Pid(), "1"
	for name, o := range map[string]owner.Owner{"gameday-local-dead": dead, "gameday-local-live": owner.Self()} {
		if err := os.MkdirAll(filepath.Join(root, name, "redis-inventory"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name, "owner"), []byte(o.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Something else's directory is never touched.
	if err := os.Mkdir(filepath.Join(root, "PostgreSQL.1"), 0o755); err != nil {
		t.Fatal(err)
	}

	dir, remove, err := dataDir("/run/dir")
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(dir) != root {
		t.Fatalf("data in %s, want it under %s", dir, root)
	}
	for name, want := range map[string]bool{"gameday-local-dead": false, "gameday-local-live": true, "PostgreSQL.1": true, filepath.Base(dir): true} {
		if _, err := os.Stat(filepath.Join(root, name)); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", name, err == nil, want)
		}
	}
	if err := remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s still there after the environment closed: %v", dir, err)
	}

	memoryRoot = filepath.Join(root, "none")
	if dir, _, err := dataDir("/run/dir"); err != nil || dir != "/run/dir" {
		t.Errorf("without memory: %s, %v", dir, err)
	}
}
