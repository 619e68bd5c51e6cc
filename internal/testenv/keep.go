package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// KeepRun copies a drill's run directory into $GAMEDAY_ARTIFACTS/runs when
// the test fails, so that a CI failure keeps its evidence (run.json,
// attempts.csv, the logs) beside the screenshots.
func KeepRun(t testing.TB, dir string) {
	t.Helper()
	art := os.Getenv("GAMEDAY_ARTIFACTS")
	if art == "" || dir == "" {
		return
	}
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		dst := filepath.Join(art, "runs", strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()))
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return
		}
		if out, err := exec.Command("cp", "-r", dir, dst).CombinedOutput(); err != nil {
			t.Logf("keep the run: %v %s", err, out)
			return
		}
		t.Logf("the run is kept in %s", dst)
	})
}
