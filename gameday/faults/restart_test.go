package faults

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gameday-dev/gameday/gameday/env"
	"github.com/gameday-dev/gameday/gameday/toxi"
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
