package faults

import (
	"context"
	"path/filepath"
	"strings"
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
	removed, aside, err := j.Cleanup(ctx)
	if err != nil || len(removed) != 2 || len(aside) != 0 {
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

// A fault cleanup cannot undo (its Toxiproxy unreachable, its container
// gone) is set aside, not an error: it no longer stops every later drill.
// It is tried again at every cleanup (and removed once it can be), keeps
// when it was first set aside, and -drop forgets it; nothing live is ever
// dropped. Entries of a runner on another host or in another pid namespace
// are not judged dead from here.
func TestCleanupSetsAsideWhatItCannotUndo(t *testing.T) {
	c := testenv.Toxiproxy(t)
	ctx := context.Background()
	rs := testenv.Redis(t)
	testenv.Proxy(t, c, "inventory", rs.Addr())
	testenv.AddToxic(t, c, "inventory", toxiFor("gameday-dead-slow"))
	testenv.AddToxic(t, c, "inventory", toxiFor("gameday-elsewhere-slow"))
	closed := testenv.FreeAddr(t)

	j := OpenJournal(filepath.Join(t.TempDir(), "journal.json"))
	boot := owner.Self().Boot
	for _, e := range []Entry{
		{RunID: "unreachable", Pid: 1, Started: "12345", Boot: boot, Toxiproxy: closed, Proxy: "inventory", Toxic: "gameday-unreachable-a"},
		{RunID: "unreachable", Pid: 1, Started: "12345", Boot: boot, Toxiproxy: closed, Proxy: "sessions", Disabled: true},
		{RunID: "nocontainer", Pid: 1, Started: "12345", Boot: boot, Container: "0123456789ab", Action: "kill"},
		{RunID: "dead", Pid: 1, Started: "12345", Boot: boot, Toxiproxy: c.Addr(), Proxy: "inventory", Toxic: "gameday-dead-slow"},
		{RunID: "elsewhere", Pid: 1, Started: "12345", Boot: boot, Where: "another-host@pid:[4026531836]", Toxiproxy: c.Addr(), Proxy: "inventory", Toxic: "gameday-elsewhere-slow"},
	} {
		if err := j.update(func(es []Entry) []Entry { return append(es, e) }); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Add(Entry{RunID: "live", Toxiproxy: closed, Proxy: "inventory", Toxic: "gameday-live-slow"}); err != nil {
		t.Fatal(err)
	}
	removed, aside, err := j.Cleanup(ctx)
	if err != nil || len(removed) != 1 || removed[0].RunID != "dead" || len(aside) != 3 {
		t.Fatalf("Cleanup: removed %v, set aside %v, %v; want dead removed and three set aside", removed, aside, err)
	}
	first := aside[0].SetAside
	if !strings.Contains(first, "(since ") {
		t.Errorf("set aside without the reason and time: %q", first)
	}
	ts, _ := c.Toxics(ctx, "inventory")
	if len(ts) != 1 || ts[0].Name != "gameday-elsewhere-slow" {
		t.Errorf("toxics after cleanup: %+v, want only the other host's runner's", ts)
	}
	_, aside, err = j.Cleanup(ctx)
	if err != nil || len(aside) != 3 || aside[0].SetAside != first {
		t.Errorf("second cleanup: %v, %v; want the same three, set aside since the first", aside, err)
	}
	if dropped, err := j.Drop("live"); err != nil || len(dropped) != 0 {
		t.Errorf("Drop of a live run: %v, %v", dropped, err)
	}
	if dropped, err := j.Drop("unreachable"); err != nil || len(dropped) != 2 {
		t.Errorf("Drop(unreachable): %v, %v", dropped, err)
	}
	if dropped, err := j.Drop("all"); err != nil || len(dropped) != 1 || dropped[0].RunID != "nocontainer" {
		t.Errorf("Drop(all): %v, %v", dropped, err)
	}
	left, _ := j.Entries()
	if len(left) != 2 {
		t.Errorf("journal keeps %+v, want the live and the other host's entries", left)
	}
}
