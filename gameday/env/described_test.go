package env

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/gameday-dev/gameday/gameday/system"
	"github.com/gameday-dev/gameday/internal/testenv"
)

func describe(t *testing.T, toxiproxy, deps string) *system.System {
	t.Helper()
	s, err := system.Parse("d.yaml", []byte(fmt.Sprintf(`
name: d
base_url: http://127.0.0.1:1
sku: s
purchase: {steps: [{url: /, answers: [{outcome: confirmed}]}]}
toxiproxy: %q
dependencies:
%s`, toxiproxy, deps)), nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// On a Toxiproxy the user runs, a proxy that exists is used by name, one
// that is missing is made from listen and upstream (and left for the
// service), and one that goes elsewhere, or that cannot be made, is refused
// before the drill, naming the dependency.
func TestDescribedOnAnExistingToxiproxy(t *testing.T) {
	c := testenv.Toxiproxy(t)
	rs := testenv.Redis(t)
	testenv.Proxy(t, c, "db-proxy", rs.Addr())
	ctx := context.Background()

	d, err := StartDescribed(ctx, describe(t, c.Addr(), "  db: {proxy: db-proxy}\n  cache: {listen: "+testenv.FreeAddr(t)+", upstream: "+rs.Addr()+"}\n"), nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := d.ProxyName("db"); !ok || n != "db-proxy" {
		t.Errorf("db's proxy: %q %v", n, ok)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	ps, err := c.Proxies(ctx)
	if err != nil || ps["cache"].Upstream != rs.Addr() {
		t.Errorf("the cache proxy should have been made and left: %+v %v", ps, err)
	}

	for _, bad := range []struct{ deps, want string }{
		{"  db: {proxy: db-proxy, listen: " + testenv.FreeAddr(t) + ", upstream: 127.0.0.1:9}\n", `proxy "db-proxy" goes to ` + rs.Addr() + `, not to upstream 127.0.0.1:9`},
		{"  queue: {proxy: kafka}\n", `has no proxy "kafka", and the system file gives no listen and upstream`},
	} {
		if _, err := StartDescribed(ctx, describe(t, c.Addr(), bad.deps), nil, nil, nil); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: %v, want %q", strings.TrimSpace(bad.deps), err, bad.want)
		}
	}
}

// Without a Toxiproxy named, one is started for the drill and every proxy
// made at its listen address; all of it goes when the drill ends.
func TestDescribedOwnToxiproxy(t *testing.T) {
	rs := testenv.Redis(t)
	d, err := StartDescribed(context.Background(), describe(t, "", "  cache: {listen: "+testenv.FreeAddr(t)+", upstream: "+rs.Addr()+"}\n"), nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !d.OwnToxiproxy() {
		t.Error("no Toxiproxy of its own")
	}
	ps, err := d.Toxiproxy().Proxies(context.Background())
	if err != nil || ps["cache"].Upstream != rs.Addr() {
		t.Fatalf("proxies %+v %v", ps, err)
	}
	api := d.Toxiproxy().Addr()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Toxiproxy().Proxies(context.Background()); err == nil {
		t.Errorf("the drill's Toxiproxy at %s still answers after Close", api)
	}
}

// A system whose processes are containers needs a container engine; a
// program without one is refused before a proxy is made, saying why. With
// one, the handle acts on the container the engine finds, and Close lets
// the engine's connection go.
func TestDescribedContainersNeedAnEngine(t *testing.T) {
	c := testenv.Toxiproxy(t)
	rs := testenv.Redis(t)
	ctx := context.Background()
	deps := "  cache: {listen: " + testenv.FreeAddr(t) + ", upstream: " + rs.Addr() + ", process: {container: shop-redis}}\n"

	if _, err := StartDescribed(ctx, describe(t, c.Addr(), deps), nil, nil, nil); err == nil || !strings.Contains(err.Error(), "no container engine") {
		t.Errorf("no engine: %v, want a refusal naming the missing engine", err)
	}
	if ps, err := c.Proxies(ctx); err != nil || len(ps) != 0 {
		t.Errorf("refused, but the Toxiproxy holds %v (%v)", ps, err)
	}

	ctr := &fakeContainer{}
	d, err := StartDescribed(ctx, describe(t, c.Addr(), deps), nil, nil, fakeEngine{"shop-redis": ctr})
	if err != nil {
		t.Fatal(err)
	}
	p, ok := d.Process("cache")
	if !ok {
		t.Fatal("no process for cache")
	}
	// Its faults are journaled by the container's id, as Compose's are.
	if id := p.(interface{ ContainerID() string }).ContainerID(); id != "0123456789ab" {
		t.Errorf("container id %q, want the engine's", id)
	}
	if err := p.Pause(); err != nil {
		t.Fatal(err)
	}
	if err := p.Resume(); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if want := "pause resume close"; strings.Join(ctr.did, " ") != want {
		t.Errorf("the container saw %q, want %q", strings.Join(ctr.did, " "), want)
	}
	if _, err := StartDescribed(ctx, describe(t, c.Addr(), deps), nil, nil, fakeEngine{}); err == nil || !strings.Contains(err.Error(), `container "shop-redis"`) {
		t.Errorf("a container the engine does not have: %v, want an error naming it", err)
	}
}

// fakeEngine hands out recording containers by name: the claim is about
// which handle the described environment builds, not about Docker.
type fakeEngine map[string]*fakeContainer

func (e fakeEngine) Container(_ context.Context, name string) (Container, error) {
	c, ok := e[name]
	if !ok {
		return nil, fmt.Errorf("no such container: %s", name)
	}
	return c, nil
}

type fakeContainer struct{ did []string }

func (c *fakeContainer) ID() string                  { return "0123456789ab" }
func (c *fakeContainer) Kill() error                 { c.did = append(c.did, "kill"); return nil }
func (c *fakeContainer) Start(context.Context) error { c.did = append(c.did, "start"); return nil }
func (c *fakeContainer) Pause() error                { c.did = append(c.did, "pause"); return nil }
func (c *fakeContainer) Resume() error               { c.did = append(c.did, "resume"); return nil }
func (c *fakeContainer) Close() error                { c.did = append(c.did, "close"); return nil }
