package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/gameday-dev/gameday/gameday/env/docker"
	"github.com/gameday-dev/gameday/gameday/faults"
	"github.com/gameday-dev/gameday/internal/redact"
)

// cleanupCmd undoes the faults that runners killed outright left (on
// Toxiproxies and containers that outlive them, and processes paused
// through a system file's handles), lists those it could not undo (set
// aside) and those of runners it judges alive, and with -drop forgets
// set-aside ones.
func cleanupCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("cleanup", stderr)
	journal := fs.String("journal", faults.DefaultJournalPath(), "the fault journal")
	containers := fs.Bool("containers", true, "also remove the containers and networks of containers environments whose runner is gone (needs Docker)")
	drop := fs.String("drop", "", "forget the set-aside faults of this run id (or \"all\") without undoing them: for faults dealt with by hand, or whose Toxiproxy or container is gone for good")
	describe(fs, "gameday cleanup [-journal FILE] [-containers=false] [-drop RUN_ID|all]", `
Undoes what runners killed outright (SIGKILL, a power cut, a pod evicted)
left behind: the faults their journal records — a toxic removed, a proxy
enabled, a Compose container started or unpaused, a process paused through
a system file's systemd, command or pid_file handle resumed (SIGCONT only
to the very process that was paused) — and the containers and networks of
containers environments whose runner is gone.

A runner here (same host and pid namespace) is gone when its process is.
A runner elsewhere (another host, container or pod sharing the journal)
renews a lease on its entries every 5 s while it runs, and is judged gone
once the lease has run out: 30 s after its last renewal, and 30 s more for
clocks that differ. Faults of runners judged alive, or that cannot be
judged (written elsewhere by a gameday without leases), are left alone and
listed. A fault it cannot undo (its Toxiproxy unreachable, its container
gone, a process paused on another host) is set aside: listed at every
cleanup, exit 1, until it is undone or forgotten with -drop. Every drill
does the same before it starts.

With nothing to clean up it changes nothing and leaves no file behind: the
journal exists only while it records a fault. It takes no argument. Exit 0
when everything was cleaned up, 1 when something could not be, 2 on bad
flags or when -drop finds no set-aside fault of that run.`)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	j := faults.OpenJournal(*journal)
	j.Engine = docker.Engine{}
	if *drop != "" {
		dropped, err := j.Drop(*drop)
		if err != nil {
			return err
		}
		for _, e := range dropped {
			fmt.Fprintf(stdout, "forgot the set-aside %s (run %s), not undone\n", e, e.RunID)
		}
		if len(dropped) == 0 {
			return usagef("cleanup -drop %s: no set-aside fault of that run in %s", *drop, *journal)
		}
		return nil
	}
	removed, aside, err := j.Cleanup(context.Background())
	var alive []faults.Entry // of runners judged alive, or that cannot be judged
	if err == nil {
		var left []faults.Entry
		left, err = j.Entries()
		for _, e := range left {
			if e.SetAside == "" {
				alive = append(alive, e)
			}
		}
	}
	for _, e := range aside {
		fmt.Fprintf(stdout, "set aside: %s (run %s) could not be undone: %s; undo it by hand, then gameday cleanup -drop %s\n", e, e.RunID, e.SetAside, e.RunID)
	}
	if len(aside) > 0 {
		err = errors.Join(err, fmt.Errorf("cleanup: %d faults of killed runners could not be undone (listed above)", len(aside)))
	}
	for _, e := range removed {
		switch {
		case e.Container != "", e.Paused != nil:
			fmt.Fprintf(stdout, "undid the %s (run %s)\n", e, e.RunID)
		case e.Disabled:
			fmt.Fprintf(stdout, "removed disabled proxy (enabled again) on %s/%s (run %s)\n", redact.URL(e.Toxiproxy), e.Proxy, e.RunID)
		default:
			fmt.Fprintf(stdout, "removed toxic %s on %s/%s (run %s)\n", e.Toxic, redact.URL(e.Toxiproxy), e.Proxy, e.RunID)
		}
	}
	now := time.Now()
	for _, e := range alive {
		fmt.Fprintf(stdout, "left alone: %s (run %s): its runner is %s\n", e, e.RunID, e.Runner(now))
	}
	n := len(removed)
	if *containers {
		left, cerr := docker.CleanupContainers(context.Background())
		for _, l := range left {
			fmt.Fprintf(stdout, "removed %s %s (runner %s)\n", l.Kind, l.Name, l.Owner)
		}
		n += len(left)
		if cerr != nil {
			err = errors.Join(err, fmt.Errorf("containers: %w (run with -containers=false where there is no Docker)", cerr))
		}
	}
	if err != nil {
		return err
	}
	if n == 0 {
		fmt.Fprintln(stdout, "nothing to clean up")
	}
	return nil
}
