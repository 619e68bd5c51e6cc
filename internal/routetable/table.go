// Package routetable is the pods' routing table as it lives in Redis: the
// contract between the router (checkout/router), which reads it, and those
// who write it (the runner, when it starts pods; a Pod Mover). Two hashes,
// shop -> route and pod -> base URL, and a version every writer INCRs;
// docs/pods.md describes it for a router of your own.
package routetable

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// The routing table's keys in Redis when none are given.
const (
	DefaultRoutesKey = "gameday:routes" // hash: shop -> pod
	DefaultPodsKey   = "gameday:pods"   // hash: pod -> base URL
)

// MovingPrefix marks a shop being moved: a route "moving:pod-2" sends the
// shop's reads (GET, HEAD) to pod-2 and refuses its writes with 503
// shop_moving until the route names a pod again.
const MovingPrefix = "moving:"

// Moving is the route of a shop being moved whose reads go to pod.
func Moving(pod string) string { return MovingPrefix + pod }

// Keys name the routing table's Redis keys. A zero field takes its default.
type Keys struct {
	// Routes is the hash of shop name -> route (a pod name, or
	// MovingPrefix and a pod name); "" means DefaultRoutesKey.
	Routes string
	// Pods is the hash of pod name -> the pod checkout's base URL
	// ("http://127.0.0.1:PORT"); "" means DefaultPodsKey.
	Pods string
	// Version is the string key holding an integer that every writer
	// INCRs with each change; "" means Routes + ":version".
	Version string
}

// WithDefaults returns k with every empty key given its default.
func (k Keys) WithDefaults() Keys {
	if k.Routes == "" {
		k.Routes = DefaultRoutesKey
	}
	if k.Pods == "" {
		k.Pods = DefaultPodsKey
	}
	if k.Version == "" {
		k.Version = k.Routes + ":version"
	}
	return k
}

// Table is one routing table as the router loaded it; it is also the body
// of GET /router/routes. A Table a Router hands out is shared: read it,
// never change it.
type Table struct {
	// Version is the table's version key when it was read.
	Version int64 `json:"version"`
	// LoadedAt is when the router last read the table from the store.
	LoadedAt time.Time `json:"loaded_at"`
	// Routes maps shop name -> route (a pod, or "moving:" and a pod).
	Routes map[string]string `json:"routes"`
	// Pods maps pod name -> the pod's base URL.
	Pods map[string]string `json:"pods"`
}

// ErrNoTable is the error of a load that found no version key: no table
// was ever written there, or the store lost it. The router keeps routing
// with the table it had, if any.
var ErrNoTable = errors.New("no routing table in the store")

// Read reads the table in one MULTI/EXEC, so that the version and
// both hashes are of the same moment even while a writer changes them.
func Read(ctx context.Context, rdb redis.Cmdable, k Keys) (*Table, error) {
	var routes, pods *redis.MapStringStringCmd
	var version *redis.StringCmd
	_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		routes = p.HGetAll(ctx, k.Routes)
		pods = p.HGetAll(ctx, k.Pods)
		version = p.Get(ctx, k.Version)
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("read routing table: %w", err)
	}
	if errors.Is(version.Err(), redis.Nil) {
		return nil, fmt.Errorf("%w (%s is not set)", ErrNoTable, k.Version)
	}
	for _, c := range []redis.Cmder{routes, pods, version} {
		if err := c.Err(); err != nil {
			return nil, fmt.Errorf("read routing table: %w", err)
		}
	}
	v, err := strconv.ParseInt(version.Val(), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("read routing table: %s is %q, not an integer", k.Version, version.Val())
	}
	return &Table{Version: v, Routes: routes.Val(), Pods: pods.Val()}, nil
}

// WriteTable replaces the routing table with routes (shop -> pod, or
// Moving(pod)) and pods (pod -> base URL), and INCRs the version, in one
// MULTI/EXEC: a router reads the old table or the new one, never a mix. It
// returns the new version, which a router's GET /router/routes shows once
// it routes by the new table. It checks the whole table first and writes
// nothing if a route names a pod that pods lacks or a URL is not an
// absolute http(s) URL.
func WriteTable(ctx context.Context, rdb redis.Cmdable, keys Keys, routes, pods map[string]string) (int64, error) {
	if err := checkTable(routes, pods); err != nil {
		return 0, err
	}
	k := keys.WithDefaults()
	var incr *redis.IntCmd
	_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, k.Routes, k.Pods)
		if len(routes) > 0 {
			p.HSet(ctx, k.Routes, routes)
		}
		if len(pods) > 0 {
			p.HSet(ctx, k.Pods, pods)
		}
		incr = p.Incr(ctx, k.Version)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("write routing table: %w", err)
	}
	return incr.Val(), nil
}

// SetRoute sets one shop's route (a pod, or Moving(pod)) and INCRs the
// version in one MULTI/EXEC, leaving the other shops as they are; it
// returns the new version. It does not check that the pod is in the table.
func SetRoute(ctx context.Context, rdb redis.Cmdable, keys Keys, shop, route string) (int64, error) {
	if shop == "" || strings.TrimPrefix(route, MovingPrefix) == "" {
		return 0, fmt.Errorf("set route: shop %q, route %q: want both named", shop, route)
	}
	k := keys.WithDefaults()
	var incr *redis.IntCmd
	_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, k.Routes, shop, route)
		incr = p.Incr(ctx, k.Version)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("set route of %s: %w", shop, err)
	}
	return incr.Val(), nil
}

// checkTable finds the first problem of a table about to be written.
func checkTable(routes, pods map[string]string) error {
	for pod, raw := range pods {
		if pod == "" {
			return errors.New("write routing table: a pod with no name")
		}
		if _, err := PodURL(raw); err != nil {
			return fmt.Errorf("write routing table: pod %s: %w", pod, err)
		}
	}
	for shop, route := range routes {
		pod := strings.TrimPrefix(route, MovingPrefix)
		if shop == "" {
			return errors.New("write routing table: a shop with no name")
		}
		if _, ok := pods[pod]; !ok {
			return fmt.Errorf("write routing table: shop %s routes to %q, which is not a pod of the table", shop, route)
		}
	}
	return nil
}

// PodURL parses a pod's base URL: absolute, http or https, with a host.
func PodURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("url %q: %w", raw, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("url %q: want http://HOST:PORT", raw)
	}
	return u, nil
}
