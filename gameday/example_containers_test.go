package gameday_test

import (
	"context"
	"testing"

	"github.com/gameday-dev/gameday/gameday"
	"github.com/gameday-dev/gameday/gameday/env/docker"
	"github.com/gameday-dev/gameday/scenarios"
)

// A fire drill in a team's own test suite, as docs/docker.md shows it: the
// payment provider's container is killed mid-sale, and the drill must pass.
// Everything runs in containers that the drill removes. At full length: a
// restarted container's first calls through the private network are slow
// for a few seconds, which a halved drill's "after" window cannot absorb
// (docs/docker.md).
func TestPaymentOutageFireDrill(t *testing.T) {
	needImages(t) // a team's suite would skip without Docker instead

	sc, err := scenarios.Lookup("payment-killed") // or scenarios.LoadFile("drills/ours.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// testcontainers' process-wide settings (its logger; its reaper, off
	// where the reaper's image is not on this machine) are the program's.
	docker.ConfigureProcess(context.Background())
	rec, dir, err := gameday.Run(context.Background(), sc, gameday.Options{
		Environment: docker.ContainersOptions{}, // every part in a container, removed afterwards
		RunsDir:     t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Verdict != gameday.VerdictPass {
		t.Fatalf("fire drill %s: %s (see %s)", rec.Verdict, rec.Reason, dir)
	}
	if rec.Environment.Kind != "containers" {
		t.Errorf("environment %q, want containers", rec.Environment.Kind)
	}
	noLeftovers(t, docker.LabelEnv)
}
