package gameday_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The release build for a Raspberry Pi 4 (linux/arm64, static) runs a
// short drill under qemu-aarch64-static user emulation: the runner, and the
// checkout and payment stand-in it starts (through GAMEDAY_EXEC_WRAPPER,
// since this machine cannot run arm64 programs by itself), are all the
// arm64 binary. Emulation is several times slower than a Pi, so the drill
// is the baseline at a quarter of its rate.
func TestArm64ReleaseDrillsUnderEmulation(t *testing.T) {
	if runtime.GOARCH == "arm64" {
		t.Skip("on arm64 every test already runs the arm64 build")
	}
	qemu, err := exec.LookPath("qemu-aarch64-static")
	if err != nil {
		t.Fatal("qemu-aarch64-static is needed (Debian's qemu-user-static); the README's test command installs it")
	}
	dist := t.TempDir()
	build := exec.Command("bash", "../scripts/release.sh", "arm64")
	build.Env = append(os.Environ(), "DIST="+dist)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("release build: %v\n%s", err, out)
	}
	bin := filepath.Join(dist, "gameday-linux-arm64")
	if out, err := exec.Command("file", bin).Output(); err == nil && !strings.Contains(string(out), "ARM aarch64") {
		t.Fatalf("not an arm64 binary: %s", out)
	}
	cmd := exec.Command(qemu, bin, "run", "-quiet", "-time-scale", "0.3", "-rate-scale", "0.25",
		"-runs-dir", t.TempDir(), "-journal", filepath.Join(t.TempDir(), "j.json"), "baseline")
	cmd.Env = append(os.Environ(), "GAMEDAY_EXEC_WRAPPER="+qemu)
	out, err := cmd.CombinedOutput()
	if code := exitCode(err); code != 0 || !strings.Contains(string(out), "PASS") {
		t.Fatalf("arm64 drill under emulation: exit %d\n%s", code, out)
	}
}
