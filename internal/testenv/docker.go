package testenv

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Docker makes sure the Docker Engine answers and holds images, and returns
// the docker command's path. Without Docker the test is skipped, unless
// GAMEDAY_REQUIRE_DOCKER=1 (scripts/test.sh sets it where docker is
// installed), which makes it fail: a green CI run must mean the Docker
// environments were drilled. A missing image always fails, with the command
// that builds it.
func Docker(tb testing.TB, images ...string) string {
	tb.Helper()
	docker, err := exec.LookPath("docker")
	if err == nil {
		err = exec.Command(docker, "info").Run()
	}
	if err != nil {
		if os.Getenv("GAMEDAY_REQUIRE_DOCKER") == "1" {
			tb.Fatalf("docker is needed (GAMEDAY_REQUIRE_DOCKER=1): %v", err)
		}
		tb.Skipf("docker is not reachable (%v); GAMEDAY_REQUIRE_DOCKER=1 makes this a failure", err)
	}
	for _, img := range images {
		if err := exec.Command(docker, "image", "inspect", img).Run(); err != nil {
			tb.Fatalf("image %s is not on this machine: run scripts/build-images.sh", img)
		}
	}
	return docker
}

// Leftovers lists the containers and networks carrying label (NAME or
// NAME=VALUE), as "container ID" and "network ID" lines.
func Leftovers(tb testing.TB, label string) []string {
	tb.Helper()
	var out []string
	for _, kind := range []string{"container", "network"} {
		args := []string{kind, "ls", "-q", "--filter", "label=" + label}
		if kind == "container" {
			args = []string{"ps", "-a", "-q", "--filter", "label=" + label}
		}
		b, err := exec.Command("docker", args...).Output()
		if err != nil {
			tb.Fatalf("docker %s: %v", strings.Join(args, " "), err)
		}
		for _, id := range strings.Fields(string(b)) {
			out = append(out, kind+" "+id)
		}
	}
	return out
}
