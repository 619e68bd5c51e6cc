package faults

import (
	"context"
	"strings"
	"testing"

	"github.com/gameday-dev/gameday/gameday/env"
	"github.com/gameday-dev/gameday/gameday/toxi"
	"github.com/gameday-dev/gameday/internal/testenv"
)

// proxyEnv is an environment whose dependencies are the proxies of a real
// Toxiproxy of the same names.
type proxyEnv struct {
	containerEnv
	c *toxi.Client
}

func (e proxyEnv) Toxiproxy() *toxi.Client                { return e.c }
func (e proxyEnv) ProxyName(target string) (string, bool) { return target, true }
func (e proxyEnv) Process(string) (env.Process, bool)     { return nil, false }

var _ env.Environment = proxyEnv{}

// What a request-aware toxic did is read back as it is removed. When it
// cannot be — the toxic gone from the Toxiproxy behind the runner's back
// (a POST /reset), an API that does not answer — the hits are not known,
// and the injector says why: a fault whose hits could not be read must
// never pass for one that acted.
func TestHitsThatCannotBeReadSayWhy(t *testing.T) {
	c := testenv.Toxiproxy(t)
	ctx := context.Background()
	if _, err := c.Create(ctx, toxi.Proxy{Name: "db", Listen: "127.0.0.1:0", Upstream: testenv.FreeAddr(t), Enabled: true, RequestAware: true}); err != nil {
		t.Fatal(err)
	}
	in := NewInjector(proxyEnv{c: c}, nil, "run1")
	lost := func(name string) Fault {
		return Fault{Name: name, Target: "db", Toxic: &toxi.Toxic{Type: "lost_reply", Stream: "downstream", Toxicity: 1, Attributes: map[string]any{"match": "COMMIT"}}}
	}
	if err := in.Apply(ctx, lost("read")); err != nil {
		t.Fatal(err)
	}
	if err := in.Remove(ctx, "read"); err != nil {
		t.Fatal(err)
	}
	if h, err := in.Hits("read"), in.HitsError("read"); h == nil || err != nil {
		t.Errorf("hits of a toxic removed as usual: %v, %v", h, err)
	}
	if err := in.Apply(ctx, lost("vanished")); err != nil {
		t.Fatal(err)
	}
	if err := c.RemoveToxic(ctx, "db", in.ToxicName(lost("vanished"))); err != nil {
		t.Fatal(err)
	}
	if err := in.Remove(ctx, "vanished"); err != nil {
		t.Fatal(err)
	}
	err := in.HitsError("vanished")
	if in.Hits("vanished") != nil || err == nil || !strings.Contains(err.Error(), "read what vanished did from the Toxiproxy at "+c.Addr()) {
		t.Errorf("hits of a toxic gone behind the runner's back: %v, %v", in.Hits("vanished"), err)
	}
}
