package env

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gameday-dev/gameday/gameday/system"
	"github.com/gameday-dev/gameday/internal/noredirect"
	"github.com/gameday-dev/gameday/internal/routetable"
	"github.com/gameday-dev/gameday/scenarios"
)

// Routes is the dependency that holds the router's table in an
// environment of pods: a Redis of its own, behind its proxy, so that a
// drill can fault the routing store too.
const Routes = "routes"

// The names of pods and of their dependencies are the scenario's and the
// system file's.
var (
	podName       = scenarios.PodName
	podDependency = system.PodDependency
)

// Podded is an environment of pods (docs/pods.md): its CheckoutURL is the
// router's, and Pods gives each pod's own checkout, by pod name, for the
// books of the shops that live there.
type Podded interface {
	Pods() map[string]string
	// RoutingStore is the address of the Redis that holds the router's
	// table (internal/routetable), and its password, for a Pod Mover.
	RoutingStore() (addr, password string)
}

// RoutingStore is the routing table's Redis, reached directly; it wants
// no password.
func (l *Local) RoutingStore() (string, string) {
	if p, ok := l.redis[Routes].(interface{ Addr() string }); ok {
		return p.Addr(), ""
	}
	return "", ""
}

// Pods is each pod's checkout base URL by pod name; nil without pods.
func (l *Local) Pods() map[string]string { return maps.Clone(l.podURLs) }

// PodsOf is the pods of e (see Podded) by name; nil when it has none.
func PodsOf(e Environment) map[string]string {
	if p, ok := e.(Podded); ok {
		if pods := p.Pods(); len(pods) > 0 {
			return pods
		}
	}
	return nil
}

// startPods starts o.Pods checkouts, each on its own inventory and
// sessions (through their proxies) and all on the one payment stand-in,
// writes the routing table (o.Routes, with the pods' URLs) to the routing
// store, and starts the router in front of them, reading the table
// through its proxy. The router's URL is the environment's CheckoutURL.
func (l *Local) startPods(ctx context.Context, o LocalOptions, addrs, proxied map[string]string,
	startCheckout func(name, inventory, sessions string) (*child, error)) error {
	l.pods, l.podURLs = map[string]*child{}, map[string]string{}
	for i := 1; i <= o.Pods; i++ {
		pod := podName(i)
		c, err := startCheckout(pod, proxied[podDependency(pod, Inventory)], proxied[podDependency(pod, Sessions)])
		if err != nil {
			return fmt.Errorf("start %s: %w", pod, err)
		}
		l.pods[pod], l.podURLs[pod] = c, "http://"+c.Addr()
	}
	for shop, pod := range o.Routes {
		if _, ok := l.podURLs[strings.TrimPrefix(pod, routetable.MovingPrefix)]; !ok {
			return fmt.Errorf("the routing table sends shop %s to %s, which is not one of the %d pods", shop, pod, o.Pods)
		}
	}
	rdb := redis.NewClient(&redis.Options{Addr: addrs[Routes], MaxRetries: -1})
	defer rdb.Close()
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	version, err := routetable.WriteTable(wctx, rdb, routetable.Keys{}, o.Routes, l.podURLs)
	cancel()
	if err != nil {
		return err
	}
	l.checkout = &child{name: "router", bin: o.Binary, log: filepath.Join(o.Dir, "router.log"),
		args: []string{"serve", "router", "-routes-redis", proxied[Routes]},
		env:  []string{RedisPasswordVar + "="}}
	if err := l.checkout.start(ctx, "127.0.0.1:0"); err != nil {
		return err
	}
	l.closers = append(l.closers, func() error { return l.checkout.stop(5 * time.Second) })
	l.coURL = "http://" + l.checkout.Addr()
	if err := l.waitRouted(ctx, version); err != nil {
		return err
	}
	names := slices.Sorted(maps.Keys(l.podURLs))
	l.info.Checkout = fmt.Sprintf("%d pods of the reference checkout (%s) behind a router at %s", o.Pods, strings.Join(names, ", "), l.coURL)
	return nil
}

// waitRouted waits until the router routes by the table just written
// (version), for at most 10s.
func (l *Local) waitRouted(ctx context.Context, version int64) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := routetable.WaitServed(ctx, noredirect.Client(0), l.coURL, func(t *routetable.Table) bool { return t.Version >= version }); err != nil {
		return fmt.Errorf("within 10s: %w", err)
	}
	return nil
}
