package testenv

import (
	"fmt"
	"os"
	"os/exec"
)

// GoBuild builds the command package pkg into out as the release does
// (scripts/release.sh: static, CGO_ENABLED=0, -trimpath), so that the
// binaries the tests start are the kind gameday ships, and so that a test
// command which has built the release, or run `CGO_ENABLED=0 go vet
// -trimpath`, finds every package already compiled in Go's build cache.
func GoBuild(out, pkg string) error {
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", pkg, err, b)
	}
	return nil
}
