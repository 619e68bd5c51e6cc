package faults

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
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
	t.Cleanup(j.StopRenewing) // its live entries stay to the end
	// Entries as a runner in a container (pid 1, another start) left them.
	dead := []Entry{
		{RunID: "dead", Pid: 1, Started: "12345", Boot: owner.Self().Boot, Toxiproxy: c.Addr(), Proxy: "inventory", Toxic: "gameday-dead-slow"},
		{RunID: "dead", Pid: 1, Started: "12345", Boot: owner.Self().Boot, Toxiproxy: c.Addr(), Proxy: "sessions", Disabled: true},
	}
	for _, e := range dead {
		if err := j.update(true, func(es []Entry) []Entry { return append(es, e) }); err != nil {
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
	closed := testenv.ClosedAddr(t)

	j := OpenJournal(filepath.Join(t.TempDir(), "journal.json"))
	t.Cleanup(j.StopRenewing) // its live entries stay to the end
	boot := owner.Self().Boot
	for _, e := range []Entry{
		{RunID: "unreachable", Pid: 1, Started: "12345", Boot: boot, Toxiproxy: closed, Proxy: "inventory", Toxic: "gameday-unreachable-a"},
		{RunID: "unreachable", Pid: 1, Started: "12345", Boot: boot, Toxiproxy: closed, Proxy: "sessions", Disabled: true},
		{RunID: "nocontainer", Pid: 1, Started: "12345", Boot: boot, Container: "0123456789ab", Action: "kill"},
		{RunID: "dead", Pid: 1, Started: "12345", Boot: boot, Toxiproxy: c.Addr(), Proxy: "inventory", Toxic: "gameday-dead-slow"},
		{RunID: "elsewhere", Pid: 1, Started: "12345", Boot: boot, Where: "another-host@pid:[4026531836]", Toxiproxy: c.Addr(), Proxy: "inventory", Toxic: "gameday-elsewhere-slow"},
	} {
		if err := j.update(true, func(es []Entry) []Entry { return append(es, e) }); err != nil {
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

// A journal exists only while it records a fault: reading, cleaning up or
// dropping from one that does not exist creates nothing (no directory, no
// journal, no lock file), and the last entry removed takes the journal and
// its lock file with it. An empty journal left by an older gameday is
// removed by the next cleanup.
func TestJournalLeavesNothingWhenEmpty(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state", "gameday", "journal.json")
	j := OpenJournal(path)
	if es, err := j.Entries(); err != nil || len(es) != 0 {
		t.Fatalf("Entries of no journal: %v, %v", es, err)
	}
	if removed, aside, err := j.Cleanup(context.Background()); err != nil || len(removed)+len(aside) != 0 {
		t.Fatalf("Cleanup of no journal: %v, %v, %v", removed, aside, err)
	}
	if dropped, err := j.Drop("all"); err != nil || len(dropped) != 0 {
		t.Fatalf("Drop of no journal: %v, %v", dropped, err)
	}
	if err := j.Remove(Entry{RunID: "r"}); err != nil {
		t.Fatal(err)
	}
	if left := testenv.DirNames(t, dir); len(left) != 0 {
		t.Fatalf("with nothing journaled, %s holds %v; want nothing", dir, left)
	}

	e := Entry{RunID: "r", Toxiproxy: "127.0.0.1:1", Proxy: "inventory", Toxic: "gameday-r-slow"}
	if err := j.Add(e); err != nil {
		t.Fatal(err)
	}
	j.StopRenewing() // no renewal's lock file in the listings below
	if left := testenv.DirNames(t, filepath.Dir(path)); len(left) != 1 || left[0] != "journal.json" {
		t.Fatalf("while a fault is journaled the directory holds %v; want the journal alone", left)
	}
	if err := j.Remove(e); err != nil {
		t.Fatal(err)
	}
	if left := testenv.DirNames(t, filepath.Dir(path)); len(left) != 0 {
		t.Fatalf("after the last entry went the directory holds %v; want nothing", left)
	}

	if err := os.WriteFile(path, []byte("[]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := j.Cleanup(context.Background()); err != nil {
		t.Fatal(err)
	}
	if left := testenv.DirNames(t, filepath.Dir(path)); len(left) != 0 {
		t.Fatalf("after a cleanup of an empty journal the directory holds %v; want nothing", left)
	}
}

// The lock still excludes while its file comes and goes: runners adding
// and removing at once lose none of each other's entries (a waiter that
// locked a lock file its holder removed starts again on the new one).
func TestJournalConcurrentRunnersLoseNothing(t *testing.T) {
	j := OpenJournal(filepath.Join(t.TempDir(), "journal.json"))
	t.Cleanup(j.StopRenewing) // its live entries stay to the end
	const n = 24
	entry := func(i int) Entry {
		return Entry{RunID: fmt.Sprintf("run%02d", i), Toxiproxy: "127.0.0.1:1", Proxy: "inventory", Toxic: "slow"}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- j.Add(entry(i))
			if i%2 == 1 { // the odd runners are done at once
				errs <- j.Remove(entry(i))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	es, err := j.Entries()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range es {
		got = append(got, e.RunID)
	}
	slices.Sort(got)
	var want []string
	for i := 0; i < n; i += 2 {
		want = append(want, entry(i).RunID)
	}
	if !slices.Equal(got, want) {
		t.Errorf("journal holds %v, want %v", got, want)
	}
}
