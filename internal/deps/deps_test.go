// Package deps holds the test that keeps gameday's reading and judging
// packages light: a tool that renders a matrix, a report or a load plan
// links no Redis client, no Docker client and no Toxiproxy.
package deps

import (
	"os/exec"
	"strings"
	"testing"
)

// The packages a matrix reader, a report renderer or a load generator
// links, and what none of them may link.
var (
	light = []string{
		"github.com/gameday-dev/gameday/matrix",
		"github.com/gameday-dev/gameday/gameday/report",
		"github.com/gameday-dev/gameday/gameday/load",
		"github.com/gameday-dev/gameday/gameday/runrecord",
		"github.com/gameday-dev/gameday/gameday/flash",
		"github.com/gameday-dev/gameday/scenarios",
	}
	heavy = map[string]string{
		"github.com/redis/go-redis/":      "a Redis client",
		"github.com/docker/":              "a Docker client",
		"github.com/moby/":                "a Docker client",
		"github.com/testcontainers/":      "a Docker client",
		"github.com/Shopify/toxiproxy/v2": "Toxiproxy",
	}
)

func TestReadingAndJudgingLinkNoClients(t *testing.T) {
	for _, pkg := range light {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		deps := strings.Fields(string(out))
		if len(deps) == 0 || deps[len(deps)-1] != pkg {
			t.Fatalf("go list -deps %s listed %d packages, not ending with it", pkg, len(deps))
		}
		for _, d := range deps {
			for prefix, what := range heavy {
				if strings.HasPrefix(d, prefix) {
					t.Errorf("%s links %s (%s)", pkg, what, d)
				}
			}
		}
	}
}
