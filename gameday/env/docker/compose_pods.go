package docker

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/gameday-dev/gameday/gameday/env"
	"github.com/gameday-dev/gameday/gameday/system"
	"github.com/gameday-dev/gameday/internal/noredirect"
	"github.com/gameday-dev/gameday/internal/routetable"
)

// composePods is how many pods docker-compose.pods.yml has.
const composePods = 3

// composeLayout is a Compose project's parts: the service behind each
// dependency (and each checkout), the proxies by dependency, how each part
// is known to be reachable from the others, and the order to wait for them.
type composeLayout struct {
	file, config string
	services     map[string]string
	proxies      map[string]string
	reach        map[string]string
	order        []string
}

// peer is the service whose container runs dep's reachability check: a
// gameday image, on the same network. A Redis is checked from the
// checkout that uses it (the routing store from a checkout too), the
// payment stand-in from a checkout, a checkout from the stand-in.
func (l composeLayout) peer(dep string) string {
	anyCheckout := "checkout"
	if _, ok := l.services[anyCheckout]; !ok {
		anyCheckout = system.PodDependency(podName(1), "checkout")
	}
	switch {
	case dep == "checkout" || strings.HasSuffix(dep, "/checkout"):
		return env.Payment
	case strings.Contains(dep, "/"):
		pod, _, _ := strings.Cut(dep, "/")
		return system.PodDependency(pod, "checkout")
	}
	return anyCheckout
}

// podsLayout is docker-compose.pods.yml's.
func podsLayout() composeLayout {
	l := composeLayout{file: "docker-compose.pods.yml", config: "deploy/compose/toxiproxy-pods.json",
		services: map[string]string{env.Payment: "payment", env.Routes: "redis-routes"},
		proxies:  map[string]string{env.Payment: env.Payment, env.Routes: env.Routes},
		reach:    map[string]string{env.Payment: "http://payment:8081/healthz", env.Routes: "redis://redis-routes:6379"},
	}
	for k := 1; k <= composePods; k++ {
		pod := podName(k)
		for _, dep := range []string{env.Inventory, env.Sessions} {
			name, svc := system.PodDependency(pod, dep), "redis-"+pod+"-"+dep
			l.services[name], l.proxies[name], l.reach[name] = svc, pod+"-"+dep, "redis://"+svc+":6379"
			l.order = append(l.order, name)
		}
		co := system.PodDependency(pod, "checkout")
		l.services[co], l.reach[co] = "checkout-"+pod, "http://checkout-"+pod+":8080/healthz"
	}
	l.order = append(l.order, env.Routes, env.Payment)
	for k := 1; k <= composePods; k++ {
		l.order = append(l.order, system.PodDependency(podName(k), "checkout"))
	}
	return l
}

// route writes the router's table (the scenario's shops, the pods by
// their names on the project's network) to the routing store, and waits
// until the router routes by it.
func (c *Compose) route(ctx context.Context, o ComposeOptions) error {
	c.pods = map[string]string{}
	inside := map[string]string{}
	for k := 1; k <= o.Pods; k++ {
		pod := podName(k)
		c.pods[pod], inside[pod] = o.PodURLs[k-1], "http://checkout-"+pod+":8080"
	}
	for shop, pod := range o.Routes {
		if _, ok := inside[strings.TrimPrefix(pod, routetable.MovingPrefix)]; !ok {
			return fmt.Errorf("compose environment: the routing table sends shop %s to %s, which is not one of the %d pods", shop, pod, o.Pods)
		}
	}
	c.routes, c.routPw = o.RoutesAddr, o.RedisPassword
	rdb := redis.NewClient(&redis.Options{Addr: o.RoutesAddr, Password: o.RedisPassword, MaxRetries: -1})
	defer rdb.Close()
	wctx, cancel := context.WithTimeout(ctx, composeReady)
	defer cancel()
	v, err := routetable.WriteTable(wctx, rdb, routetable.Keys{}, o.Routes, inside)
	if err != nil {
		return fmt.Errorf("compose environment: the routing store at %s: %w", o.RoutesAddr, err)
	}
	// The router takes the table when it reads it: its version, and the
	// very routes (a store that lost its data starts its versions again).
	if err := routetable.WaitServed(wctx, noredirect.Client(0), o.RouterURL, func(t *routetable.Table) bool {
		return t.Version >= v && maps.Equal(t.Routes, o.Routes)
	}); err != nil {
		return fmt.Errorf("compose environment: within %s: %w", composeReady, err)
	}
	return nil
}

// Pods is each pod's checkout URL on loopback; nil for the one-checkout
// project.
func (c *Compose) Pods() map[string]string { return maps.Clone(c.pods) }

// RoutingStore is the routing table's Redis, published on loopback, and
// its password.
func (c *Compose) RoutingStore() (string, string) { return c.routes, c.routPw }
