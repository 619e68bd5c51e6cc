package faults

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/gameday-dev/gameday/internal/owner"
	"github.com/gameday-dev/gameday/internal/testenv"
)

// Cleanup removes a dead runner's toxic from a real Toxiproxy, enables a
// proxy it disabled, and keeps a live runner's entries.
func TestCleanupRemovesDeadRunnersFaults(t *testing.T) {
	c := testenv.Toxiproxy(t)
	ctx := context.Background()
	rs := testenv.Redis(t)
	testenv.Proxy(t, c, "inventory", rs.Addr())
	testenv.Proxy(t, c, "sessions", rs.Addr())
	testenv.AddToxic(t, c, "inventory", toxiFor("gameday-dead-slow"))
	testenv.SetEnabled(t, c, "sessions", false)
	testenv.AddToxic(t, c, "inventory", toxiFor("gameday-live-slow"))

	j := OpenJournal(filepath.Join(t.TempDir(), "journal.json"))
	// Entries as a runner in a container (pid 1, another start) left them.
	dead := []Entry{
		{RunID: "dead", Pid: 1, Started: "12345", Boot: owner.Self().Boot, Toxiproxy: c.Addr(), Proxy: "inventory", Toxic: "gameday-dead-slow"},
		{RunID: "dead", Pid: 1, Started: "12345", Boot: owner.Self().Boot, Toxiproxy: c.Addr(), Proxy: "sessions", Disabled: true},
	}
	for _, e := range dead {
		if err := j.update(func(es []Entry) []Entry { return append(es, e) }); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Add(Entry{RunID: "live", Toxiproxy: c.Addr(), Proxy: "inventory", Toxic: "gameday-live-slow"}); err != nil {
		t.Fatal(err)
	}
	removed, err := j.Cleanup(ctx)
	if err != nil || len(removed) != 2 {
		t.Fatalf("Cleanup removed %v, %v; want the dead runner's two", removed, err)
	}
	ts, _ := c.Toxics(ctx, "inventory")
	p, _ := c.Proxy(ctx, "sessions")
	if len(ts) != 1 || ts[0].Name != "gameday-live-slow" || !p.Enabled {
		t.Errorf("after cleanup: inventory toxics %+v, sessions enabled %v", ts, p.Enabled)
	}
	left, _ := j.Entries()
	if len(left) != 1 || left[0].RunID != "live" {
		t.Errorf("journal keeps %+v, want the live entry", left)
	}
}
