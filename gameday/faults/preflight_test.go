package faults

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/env"
	"github.com/gameday-dev/gameday/gameday/toxi"
	"github.com/gameday-dev/gameday/internal/owner"
	"github.com/gameday-dev/gameday/internal/testenv"
)

// toxiEnv is an environment with a real Toxiproxy and nothing else: the
// claims are about what Preflight finds on the Toxiproxy and does there.
type toxiEnv struct {
	containerEnv
	c *toxi.Client
}

func (e toxiEnv) Toxiproxy() *toxi.Client { return e.c }

var _ env.Environment = toxiEnv{}

// proxyState is what a proxy carries: its toxics' names and whether it
// is enabled.
func proxyState(t *testing.T, c *toxi.Client, name string) (toxics []string, enabled bool) {
	t.Helper()
	p, err := c.Proxy(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range p.Toxics {
		toxics = append(toxics, x.Name)
	}
	return toxics, p.Enabled
}

// A drill refuses to start on a proxy that carries a fault it did not add
// — a toxic no run journaled, one a gameday run named but journaled
// elsewhere, one of a runner that still runs, a disabled proxy nobody
// journaled — naming the Toxiproxy, the proxy and the toxic and saying how
// to remove it, and the refusal changes nothing (not even the dead
// runner's fault it would otherwise clean). Once only faults of dead
// runners are left, Preflight removes them by the journal's rules. A proxy
// the drill does not use is not looked at.
func TestPreflightRefusesFaultsItDidNotAdd(t *testing.T) {
	c := testenv.Toxiproxy(t)
	ctx := context.Background()
	up := testenv.FreeAddr(t)
	for _, p := range []string{"inventory", "sessions", "payment", "unused"} {
		testenv.Proxy(t, c, p, up)
	}
	e := toxiEnv{c: c}
	proxies := []string{"inventory", "sessions", "payment", "missing"}
	j := OpenJournal(filepath.Join(t.TempDir(), "journal.json"))
	t.Cleanup(j.StopRenewing)

	if cleaned, err := Preflight(ctx, e, j, proxies); err != nil || len(cleaned) != 0 {
		t.Fatalf("clean proxies: %v, %v", cleaned, err)
	}

	// A dead runner's toxic and disabled proxy, which Preflight may clean.
	boot := owner.Self().Boot
	testenv.AddToxic(t, c, "sessions", toxiFor("gameday-dead-slow"))
	testenv.SetEnabled(t, c, "payment", false)
	for _, x := range []Entry{
		{RunID: "dead", Pid: 1, Started: "12345", Boot: boot, Toxiproxy: c.Addr(), Proxy: "sessions", Toxic: "gameday-dead-slow"},
		{RunID: "dead", Pid: 1, Started: "12345", Boot: boot, Toxiproxy: strings.TrimPrefix(c.Addr(), "http://"), Proxy: "payment", Disabled: true},
	} {
		if err := j.update(true, func(es []Entry) []Entry { return append(es, x) }); err != nil {
			t.Fatal(err)
		}
	}
	testenv.AddToxic(t, c, "unused", toxiFor("not-looked-at"))
	// A runner that still runs, in another process.
	live := exec.Command("sleep", "60")
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = live.Process.Kill(); _ = live.Wait() })

	for _, bad := range []struct {
		name  string
		setup func()
		undo  func()
		want  []string
	}{
		{"a toxic no run journaled",
			func() { testenv.AddToxic(t, c, "inventory", toxiFor("slow")) },
			func() { testenv.RemoveToxic(t, c, "inventory", "slow") },
			[]string{c.Addr(), "proxy inventory", `toxic "slow" (latency, downstream)`, "no gameday run journaled it", "toxiproxy-cli -h " + c.Addr() + " toxic remove -n slow inventory", "curl -X DELETE " + c.Addr() + "/proxies/inventory/toxics/slow"}},
		{"a gameday toxic journaled elsewhere",
			func() { testenv.AddToxic(t, c, "inventory", toxiFor("gameday-m1x2-slow")) },
			func() { testenv.RemoveToxic(t, c, "inventory", "gameday-m1x2-slow") },
			[]string{"proxy inventory", "gameday run m1x2 named it, but did not journal it in the journal " + j.path, "gameday cleanup", "toxiproxy-cli"}},
		{"a live runner's toxic",
			func() {
				testenv.AddToxic(t, c, "inventory", toxiFor("gameday-live-slow"))
				o := owner.Of(live.Process.Pid)
				x := Entry{RunID: "live", Pid: o.Pid, Started: o.Started, Boot: o.Boot, Where: o.Where, Toxiproxy: c.Addr(), Proxy: "inventory", Toxic: "gameday-live-slow"}
				if err := j.update(true, func(es []Entry) []Entry { return append(es, x) }); err != nil {
					t.Fatal(err)
				}
			},
			func() {
				testenv.RemoveToxic(t, c, "inventory", "gameday-live-slow")
				if err := j.Remove(Entry{RunID: "live", Toxiproxy: c.Addr(), Proxy: "inventory", Toxic: "gameday-live-slow"}); err != nil {
					t.Fatal(err)
				}
			},
			[]string{"proxy inventory", `toxic "gameday-live-slow"`, "run live added it", "still running", "another drill"}},
		{"a toxic this process could not remove",
			func() {
				testenv.AddToxic(t, c, "inventory", toxiFor("gameday-mine-slow"))
				if err := j.Add(Entry{RunID: "mine", Toxiproxy: c.Addr(), Proxy: "inventory", Toxic: "gameday-mine-slow"}); err != nil {
					t.Fatal(err)
				}
			},
			func() {
				testenv.RemoveToxic(t, c, "inventory", "gameday-mine-slow")
				if err := j.Remove(Entry{RunID: "mine", Toxiproxy: c.Addr(), Proxy: "inventory", Toxic: "gameday-mine-slow"}); err != nil {
					t.Fatal(err)
				}
			},
			[]string{"proxy inventory", "run mine of this gameday process added it", "toxiproxy-cli"}},
		{"a disabled proxy nobody journaled",
			func() { testenv.SetEnabled(t, c, "inventory", false) },
			func() { testenv.SetEnabled(t, c, "inventory", true) },
			[]string{"proxy inventory is disabled", "no gameday run journaled it", "toxiproxy-cli -h " + c.Addr() + " toggle inventory"}},
	} {
		bad.setup()
		before, _ := j.Entries()
		cleaned, err := Preflight(ctx, e, j, proxies)
		var le *LeftoverError
		if !errors.As(err, &le) || len(le.Found) != 1 || len(cleaned) != 0 {
			t.Errorf("%s: cleaned %v, %v; want a refusal naming one fault", bad.name, cleaned, err)
		} else {
			for _, w := range bad.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s: the refusal lacks %q:\n%v", bad.name, w, err)
				}
			}
		}
		if ts, _ := proxyState(t, c, "sessions"); len(ts) != 1 {
			t.Errorf("%s: a refusal removed the dead runner's toxic", bad.name)
		}
		if _, on := proxyState(t, c, "payment"); on {
			t.Errorf("%s: a refusal enabled the dead runner's proxy", bad.name)
		}
		if after, _ := j.Entries(); len(after) != len(before) {
			t.Errorf("%s: a refusal changed the journal: %d entries, then %d", bad.name, len(before), len(after))
		}
		bad.undo()
	}

	cleaned, err := Preflight(ctx, e, j, proxies)
	if err != nil || len(cleaned) != 2 {
		t.Fatalf("with only a dead runner's faults: cleaned %v, %v; want both", cleaned, err)
	}
	if ts, _ := proxyState(t, c, "sessions"); len(ts) != 0 {
		t.Errorf("sessions still carries %v", ts)
	}
	if _, on := proxyState(t, c, "payment"); !on {
		t.Error("payment still disabled")
	}
	if es, _ := j.Entries(); len(es) != 0 {
		t.Errorf("the journal still holds %+v", es)
	}
	if ts, _ := proxyState(t, c, "unused"); len(ts) != 1 {
		t.Errorf("a proxy the drill does not use was touched: %v", ts)
	}
}

// Preflight without a journal refuses every fault it finds, and a
// Toxiproxy that does not answer stops it within the call deadline,
// naming the address.
func TestPreflightWithoutJournalOrToxiproxy(t *testing.T) {
	c := testenv.Toxiproxy(t)
	testenv.Proxy(t, c, "inventory", testenv.FreeAddr(t))
	testenv.AddToxic(t, c, "inventory", toxiFor("gameday-dead-slow"))
	_, err := Preflight(context.Background(), toxiEnv{c: c}, nil, []string{"inventory"})
	var le *LeftoverError
	if !errors.As(err, &le) || !strings.Contains(err.Error(), "gameday run dead named it, but did not journal it (this drill keeps no journal)") {
		t.Errorf("without a journal: %v; want a refusal", err)
	}
	closed := toxi.NewClient(testenv.FreeAddr(t))
	began := time.Now()
	_, err = Preflight(context.Background(), toxiEnv{c: closed}, nil, []string{"inventory"})
	if err == nil || !strings.Contains(err.Error(), closed.Addr()) || time.Since(began) > callTimeout+time.Second {
		t.Errorf("an unreachable Toxiproxy: %v after %s", err, time.Since(began))
	}
}
