package gameday_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday"
)

// A runner stalled on purpose in the middle of a fault — SIGSTOP, a third
// of a second, SIGCONT: its timer records the stall — beside a promise
// that nothing but the system broke (nine in ten confirmed while payment
// is down, and none were). The stall explains a few outcomes, never all of
// them: the command exits 1 with FAIL, not 3 with INCONCLUSIVE, and the
// record keeps the stall as evidence.
func TestStallDoesNotExcuseWhatItCannotExplain(t *testing.T) {
	runs := t.TempDir()
	cmd := exec.Command(binary, "run", "-runs-dir", runs, "-journal", filepath.Join(t.TempDir(), "j.json"), "testdata/starved-payment-down.yaml")
	cmd, stderr := startCmd(t, cmd)
	waitFor(t, stderr, "faults=[provider-down]", time.Minute)
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	dirs, _ := filepath.Glob(filepath.Join(runs, "*", "run.json"))
	if len(dirs) != 1 {
		t.Fatalf("exit %d; run.json files: %v", exitCode(err), dirs)
	}
	rec, rerr := gameday.ReadRecord(dirs[0])
	if rerr != nil {
		t.Fatal(rerr)
	}
	if rec.Host == nil || len(rec.Host.StarvedSpans) == 0 {
		t.Fatalf("no stall recorded (host %+v): the test did not stall the runner", rec.Host)
	}
	if code := exitCode(err); code != 1 || rec.Verdict != gameday.VerdictFail {
		summary, _ := os.ReadFile(filepath.Join(filepath.Dir(dirs[0]), "summary.txt"))
		t.Fatalf("exit %d, verdict %s (%s), want 1 and fail\n%s", code, rec.Verdict, rec.Reason, summary)
	}
	if !strings.Contains(rec.Reason, "confirmed") || len(rec.Host.Starved) != 0 {
		t.Errorf("reason %q, starved %q: want the broken promise, nothing excused", rec.Reason, rec.Host.Starved)
	}
}
