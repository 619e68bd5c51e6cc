package gameday_test

import (
	"context"
	"strings"
	"testing"
)

// In the local environment the system under test runs on the runner's
// host: the drill watches its processes (the checkout, the payment
// stand-in and, where redis-server is installed, the Redis servers) for
// time they wait for a CPU, and the record names them. Whatever it found
// is kept in the observations: the run judged again gets its judgement
// (run checks it).
func TestLocalDrillWatchesTheSystemsProcesses(t *testing.T) {
	sc := lookup(t, "baseline")
	o := options(t)
	o.TimeScale = 0.2
	rec := run(t, context.Background(), sc, o)
	sys := rec.Host.System
	if sys == nil || sys.Unwatched != "" {
		t.Fatalf("host.system %+v: want the system's processes watched", sys)
	}
	watched := strings.Join(sys.Watched, ", ")
	for _, name := range []string{"checkout (pid ", "payment (pid "} {
		if !strings.Contains(watched, name) {
			t.Errorf("watched %q: no %s...)", watched, name)
		}
	}
}
