package gameday_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The runner depends on the description of the system under test only:
// no package of it imports the reference checkout, and the packages that
// read run records and drive load carry no Redis client.
func TestRunnerDependsOnTheContractOnly(t *testing.T) {
	deps := func(pkg string) []string {
		t.Helper()
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		return strings.Fields(string(out))
	}
	for _, pkg := range []string{"github.com/gameday-dev/gameday/gameday", "github.com/gameday-dev/gameday/gameday/load",
		"github.com/gameday-dev/gameday/gameday/report", "github.com/gameday-dev/gameday/matrix", "github.com/gameday-dev/gameday/gameday/books",
		"github.com/gameday-dev/gameday/gameday/system"} {
		for _, d := range deps(pkg) {
			if strings.HasPrefix(d, "github.com/gameday-dev/gameday/checkout") || d == "github.com/gameday-dev/gameday/breakers" {
				t.Errorf("%s depends on the reference checkout's code: %s", pkg, d)
			}
		}
	}
	for _, pkg := range []string{"github.com/gameday-dev/gameday/gameday/load", "github.com/gameday-dev/gameday/gameday/report", "github.com/gameday-dev/gameday/matrix"} {
		for _, d := range deps(pkg) {
			if strings.Contains(d, "go-redis") || strings.Contains(d, "miniredis") {
				t.Errorf("%s depends on a Redis client: %s", pkg, d)
			}
		}
	}
}
