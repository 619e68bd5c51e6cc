package env

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/gameday-dev/gameday/gameday/system"
	"github.com/gameday-dev/gameday/gameday/toxi"
)

// Described drills a system from its description alone: the Toxiproxy it
// names (or one started here, on loopback), a proxy in front of each
// dependency, and the process handles it declares. It starts nothing of
// the system under test.
type Described struct {
	sys      *system.System
	embedded *toxi.Embedded
	client   *toxi.Client
	proxies  map[string]string
	procs    map[string]*handle
	// upstreams are the dependencies' real addresses: the system file's,
	// or the existing proxy's.
	upstreams map[string]string
	info      Info
}

var _ Environment = (*Described)(nil)

// StartDescribed brings up what sys needs around it: with no toxiproxy
// named, an embedded Toxiproxy creates every dependency's proxy at its
// listen address (removed by Close); with one, each proxy must exist or is
// created from listen and upstream (and then left for the service, which
// connects through it). proxies overrides proxy names by dependency. A
// proxy created for a dependency in requestAware has a relay behind it
// (the request-aware toxics need one). engine acts on the containers the system file names as processes; nil
// refuses such a system before anything is created.
func StartDescribed(ctx context.Context, sys *system.System, proxies map[string]string, requestAware []string, engine Engine) (_ *Described, err error) {
	d := &Described{sys: sys, proxies: map[string]string{}, procs: map[string]*handle{}, upstreams: map[string]string{},
		info: Info{Kind: "external", Checkout: sys.Name + " " + sys.BaseURL}}
	defer func() {
		if err != nil {
			_ = d.Close()
		}
	}()
	for _, dep := range slices.Sorted(maps.Keys(sys.Dependencies)) {
		if p := sys.Dependencies[dep].Process; p != nil {
			h, err := newHandle(ctx, dep, p, sys.Dir(), engine)
			if err != nil {
				return nil, err
			}
			d.procs[dep] = h
		}
	}
	if sys.Toxiproxy == "" {
		// The system file's listen addresses are the operator's own
		// choice; anything else asked of the API stays on loopback.
		if d.embedded, err = toxi.StartEmbedded("127.0.0.1:0", toxi.EmbeddedOptions{Listen: sys.Listens()}); err != nil {
			return nil, err
		}
		d.client = toxi.NewClient(d.embedded.APIAddr())
		d.info.Toxiproxy = "embedded " + d.embedded.APIAddr()
	} else {
		d.client = toxi.NewClient(sys.Toxiproxy)
		d.info.Toxiproxy = sys.Toxiproxy
	}
	existing, err := d.client.Proxies(ctx)
	if err != nil {
		return nil, fmt.Errorf("toxiproxy at %s: %w", d.client.Addr(), err)
	}
	for _, dep := range slices.Sorted(maps.Keys(sys.Dependencies)) {
		dd := sys.Dependencies[dep]
		if !dd.Proxied() {
			continue // a process alone: no proxy
		}
		name := dd.Proxy
		if n := proxies[dep]; n != "" {
			name = n
		}
		d.proxies[dep] = name
		d.upstreams[dep] = dd.Upstream
		if p, ok := existing[name]; ok {
			d.upstreams[dep] = p.Upstream
			if dd.Upstream != "" && p.Upstream != dd.Upstream {
				return nil, fmt.Errorf("%s: toxiproxy's proxy %q goes to %s, not to upstream %s", sys.Where("dependencies."+dep), name, p.Upstream, dd.Upstream)
			}
			continue
		}
		if dd.Listen == "" || dd.Upstream == "" {
			return nil, fmt.Errorf("%s: toxiproxy at %s has no proxy %q, and the system file gives no listen and upstream to create it", sys.Where("dependencies."+dep), d.client.Addr(), name)
		}
		p := toxi.Proxy{Name: name, Listen: dd.Listen, Upstream: dd.Upstream, Enabled: true, RequestAware: slices.Contains(requestAware, dep)}
		if _, err := d.client.Create(ctx, p); err != nil {
			return nil, fmt.Errorf("dependency %s: create proxy %s (%s -> %s): %w", dep, name, dd.Listen, dd.Upstream, err)
		}
	}
	return d, nil
}

func (d *Described) Info() Info              { return d.info }
func (d *Described) CheckoutURL() string     { return d.sys.BaseURL }
func (d *Described) PaymentURL() string      { return "" }
func (d *Described) AdminToken() string      { return "" } // the system file says
func (d *Described) Toxiproxy() *toxi.Client { return d.client }

// ProxyName is the proxy in front of a dependency of the system.
func (d *Described) ProxyName(dep string) (string, bool) {
	n, ok := d.proxies[dep]
	return n, ok
}

// Process is the handle the system file declares for a dependency.
func (d *Described) Process(dep string) (Process, bool) {
	h, ok := d.procs[dep]
	if !ok {
		return nil, false
	}
	return h, true
}

// RedisOf is the Redis a dependency that speaks Redis is (its upstream),
// with the password its system file gives.
func (d *Described) RedisOf(dep string) (Redis, bool) {
	dd, ok := d.sys.Dependencies[dep]
	if !ok || dd.Protocol != "redis" || d.upstreams[dep] == "" {
		return Redis{}, false
	}
	return Redis{Addr: d.upstreams[dep], Password: dd.Password, DB: dd.Database}, true
}

// OwnToxiproxy reports whether the Toxiproxy dies with the runner (then
// nothing of a run needs a journal).
func (d *Described) OwnToxiproxy() bool { return d.embedded != nil }

// Close stops the embedded Toxiproxy, if there is one (its proxies go with
// it); proxies on a Toxiproxy the user runs stay.
func (d *Described) Close() error {
	var errs []error
	if d.embedded != nil {
		errs = append(errs, d.embedded.Close())
		d.embedded = nil
	}
	for dep, h := range d.procs {
		if h.close != nil {
			errs = append(errs, h.close())
		}
		delete(d.procs, dep)
	}
	return errors.Join(errs...)
}
