package gameday_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The runner depends on the description of the system under test only:
// no package of it imports the reference checkout, and the packages that
// read run records and drive load carry no Redis or Docker client.
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
	// What reads a matrix or a run record, renders a report or drives load
	// links no Redis client, no Docker client and no Toxiproxy: a tool
	// built on them stays small (a matrix check in CI, a load worker).
	heavy := map[string]string{
		"github.com/redis/go-redis/":      "a Redis client",
		"github.com/alicebob/miniredis":   "a Redis server",
		"github.com/docker/":              "a Docker client",
		"github.com/moby/":                "a Docker client",
		"github.com/testcontainers/":      "a Docker client",
		"github.com/Shopify/toxiproxy/v2": "Toxiproxy",
	}
	for _, pkg := range []string{"github.com/gameday-dev/gameday/gameday/load", "github.com/gameday-dev/gameday/gameday/report",
		"github.com/gameday-dev/gameday/matrix", "github.com/gameday-dev/gameday/gameday/runrecord",
		"github.com/gameday-dev/gameday/gameday/flash", "github.com/gameday-dev/gameday/scenarios", "github.com/gameday-dev/gameday/gameday/judge"} {
		for _, d := range deps(pkg) {
			for prefix, what := range heavy {
				if strings.HasPrefix(d, prefix) {
					t.Errorf("%s depends on %s: %s", pkg, what, d)
				}
			}
		}
	}
	// The runner, the environments it may start without Docker and the
	// fault injector link no Docker client: the Docker environments are a
	// value a program passes (package gameday/env/docker), so a local or
	// described drill from a program of its own does not carry moby.
	for _, pkg := range []string{"github.com/gameday-dev/gameday/gameday", "github.com/gameday-dev/gameday/gameday/env",
		"github.com/gameday-dev/gameday/gameday/faults"} {
		for _, d := range deps(pkg) {
			for _, prefix := range []string{"github.com/docker/", "github.com/moby/", "github.com/testcontainers/"} {
				if strings.HasPrefix(d, prefix) {
					t.Errorf("%s depends on %s: %s", pkg, heavy[prefix], d)
				}
			}
		}
	}
}
