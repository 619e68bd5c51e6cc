package faults

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gameday-dev/gameday/gameday/env"
	"github.com/gameday-dev/gameday/gameday/toxi"
	"github.com/gameday-dev/gameday/internal/owner"
)

// containerEnv is an environment whose one dependency is a container that
// outlives the runner, as a Compose project's. The claim is about the
// journal's bookkeeping, which is the injector's own logic: the container
// is a stand-in that records what was done to it.
type containerEnv struct{ c *container }

func (e containerEnv) Info() env.Info                     { return env.Info{} }
func (e containerEnv) CheckoutURL() string                { return "" }
func (e containerEnv) PaymentURL() string                 { return "" }
func (e containerEnv) AdminToken() string                 { return "" }
func (e containerEnv) Toxiproxy() *toxi.Client            { return nil }
func (e containerEnv) ProxyName(string) (string, bool)    { return "", false }
func (e containerEnv) Process(string) (env.Process, bool) { return e.c, true }
func (e containerEnv) Close() error                       { return nil }

type container struct{ did []string }

func (c *container) Kill() error                 { c.did = append(c.did, "kill"); return nil }
func (c *container) Start(context.Context) error { c.did = append(c.did, "start"); return nil }
func (c *container) Pause() error                { c.did = append(c.did, "pause"); return nil }
func (c *container) Resume() error               { c.did = append(c.did, "resume"); return nil }
func (c *container) ContainerID() string         { return "0123456789ab" }

// A restart (kill, then start) is journaled while it runs and forgotten as
// soon as the container runs again: its "kill" entry once stayed for good,
// and the next cleanup started a container that was already running. A
// kill stays journaled until it is removed.
func TestRestartLeavesNoJournalEntry(t *testing.T) {
	j := OpenJournal(filepath.Join(t.TempDir(), "journal.json"))
	c := &container{}
	in := NewInjector(containerEnv{c}, j, "run1")
	ctx := context.Background()
	if err := in.Apply(ctx, Fault{Name: "bounce", Target: "redis", Process: "restart"}); err != nil {
		t.Fatal(err)
	}
	if es, err := j.Entries(); err != nil || len(es) != 0 {
		t.Errorf("after a restart the journal holds %+v, %v; want nothing", es, err)
	}
	if err := in.Apply(ctx, Fault{Name: "down", Target: "redis", Process: "kill"}); err != nil {
		t.Fatal(err)
	}
	if es, _ := j.Entries(); len(es) != 1 || es[0].Action != "kill" || es[0].Container != "0123456789ab" {
		t.Errorf("during a kill the journal holds %+v, want its entry", es)
	}
	if err := in.RemoveAll(); err != nil {
		t.Fatal(err)
	}
	if es, _ := j.Entries(); len(es) != 0 {
		t.Errorf("after the kill was undone the journal holds %+v", es)
	}
	if want := "kill start kill start"; strings.Join(c.did, " ") != want {
		t.Errorf("the container saw %q, want %q", strings.Join(c.did, " "), want)
	}
}

// A process whose handle names no container (a pid file, a command, a
// systemd unit of a described system) is not journaled: cleanup could not
// bring it back.
func TestOnlyContainersAreJournaled(t *testing.T) {
	j := OpenJournal(filepath.Join(t.TempDir(), "journal.json"))
	in := NewInjector(containerEnv{&container{}}, j, "run1")
	in2 := NewInjector(noContainerEnv{p: &noID{}}, j, "run2")
	ctx := context.Background()
	if err := in2.Apply(ctx, Fault{Name: "down", Target: "redis", Process: "kill"}); err != nil {
		t.Fatal(err)
	}
	if es, _ := j.Entries(); len(es) != 0 {
		t.Errorf("a kill of a process that is no container was journaled: %+v", es)
	}
	if err := in.Apply(ctx, Fault{Name: "down", Target: "redis", Process: "kill"}); err != nil {
		t.Fatal(err)
	}
	if es, _ := j.Entries(); len(es) != 1 || es[0].Container != "0123456789ab" {
		t.Errorf("a kill of a container: the journal holds %+v, want its entry", es)
	}
	if err := errors.Join(in.RemoveAll(), in2.RemoveAll()); err != nil {
		t.Fatal(err)
	}
}

// noID is a process handle with the method but no container behind it.
type noID struct{ container }

func (*noID) ContainerID() string { return "" }

type noContainerEnv struct {
	containerEnv
	p *noID
}

func (e noContainerEnv) Process(string) (env.Process, bool) { return e.p, true }

// engine is a container engine that hands out the stand-in container, and
// says so when it is asked for another.
type engine struct{ c *container }

func (e engine) Container(_ context.Context, name string) (env.Container, error) {
	if name != e.c.ContainerID() {
		return nil, errors.New("no such container: " + name)
	}
	return found{e.c}, nil
}

type found struct{ *container }

func (f found) ID() string   { return f.ContainerID() }
func (f found) Close() error { f.did = append(f.did, "close"); return nil }

// Cleanup brings back what a killed runner's process faults left, through
// the engine the journal is given: a killed container is started, a paused
// one resumed, and the connection closed each time. Without an engine the
// entries are set aside, saying one is needed, and kept for a later cleanup
// that has one.
func TestCleanupRestoresContainersThroughTheEngine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.json")
	boot := owner.Self().Boot
	dead := []Entry{
		{RunID: "dead", Pid: 1, Started: "12345", Boot: boot, Container: "0123456789ab", Action: "kill"},
		{RunID: "dead", Pid: 1, Started: "12345", Boot: boot, Container: "0123456789ab", Action: "pause"},
	}
	j := OpenJournal(path)
	for _, e := range dead {
		if err := j.update(true, func(es []Entry) []Entry { return append(es, e) }); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	removed, aside, err := j.Cleanup(ctx)
	if err != nil || len(removed) != 0 || len(aside) != 2 {
		t.Fatalf("without an engine: removed %v, aside %v, %v; want both set aside", removed, aside, err)
	}
	if !strings.Contains(aside[0].SetAside, "no container engine") {
		t.Errorf("set aside because %q; want it to say no container engine was given", aside[0].SetAside)
	}

	c := &container{}
	j = OpenJournal(path)
	j.Engine = engine{c}
	removed, aside, err = j.Cleanup(ctx)
	if err != nil || len(removed) != 2 || len(aside) != 0 {
		t.Fatalf("with an engine: removed %v, aside %v, %v; want both undone", removed, aside, err)
	}
	if want := "start close resume close"; strings.Join(c.did, " ") != want {
		t.Errorf("the container saw %q, want %q", strings.Join(c.did, " "), want)
	}
	if es, _ := j.Entries(); len(es) != 0 {
		t.Errorf("after cleanup the journal holds %+v", es)
	}
}

// A system file's own container outlives the runner even when the drill's
// Toxiproxy is embedded and dies with it (NewInjector given no journal):
// a pause of it is journaled all the same, and forgotten once resumed.
func TestContainerFaultsJournaledBesideAnOwnToxiproxy(t *testing.T) {
	j := OpenJournal(filepath.Join(t.TempDir(), "journal.json"))
	t.Cleanup(j.StopRenewing)
	c := &container{}
	in := NewInjector(containerEnv{c}, nil, "run1")
	in.JournalContainers(j)
	if err := in.Apply(context.Background(), Fault{Name: "freeze", Target: "redis", Process: "pause"}); err != nil {
		t.Fatal(err)
	}
	if es, _ := j.Entries(); len(es) != 1 || es[0].Action != "pause" || es[0].Container != "0123456789ab" {
		t.Errorf("during the pause the journal holds %+v, want its entry", es)
	}
	if err := in.RemoveAll(); err != nil {
		t.Fatal(err)
	}
	if es, _ := j.Entries(); len(es) != 0 {
		t.Errorf("after the resume the journal holds %+v", es)
	}
}
