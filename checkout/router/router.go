// Package router is the pods' router: it maps each request's shop to a pod
// by a routing table it reads from Redis, not from code, and forwards the
// request to that pod's checkout (docs/pods.md, "The router").
//
// The table is reloaded in the background ([Router.Run]); a request is
// routed by the table in memory and never waits on the store. When the
// store cannot be reached the router keeps the last table it loaded, so a
// blip of the routing store takes no shop down.
//
// # HTTP API
//
// Every request but the two below is forwarded, method, path, query, body
// and headers kept (X-Forwarded-For, -Host and -Proto added, hop-by-hop
// headers dropped), to the pod of the shop named by the shop header; the
// answer carries [PodHeader]. The router's own answers are JSON
// {"status": ..., "reason": ...}:
//
//	400 error       no_shop          the request names no shop
//	404 error       unknown_shop     the shop is not in the table
//	502 error       no_pod           the shop's pod has no URL in the table
//	502 unavailable pod_unreachable  the pod did not answer (PodHeader names it)
//	503 unavailable shop_moving      a write (not GET or HEAD) to a shop being moved
//	503 unavailable no_routes        no table loaded yet
//
// "unavailable" answers carry Retry-After: 1 and "retry_after_ms": 1000, as
// the reference checkout's do.
//
// GET /router/routes answers the table in use ([Table]); GET /healthz
// answers 200 {"status":"ok","version":N} once a table is loaded, 503
// no_routes before.
package router

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gameday-dev/gameday/internal/routetable"
	"github.com/gameday-dev/gameday/internal/wait"
)

// PodHeader is the answer header naming the pod a request was sent to.
const PodHeader = "Gameday-Pod"

// The router's own paths; they are never forwarded.
const (
	RoutesPath = routetable.RoutesPath
	HealthPath = "/healthz"
)

// The defaults of Options' zero fields.
const (
	DefaultShopHeader  = "Shop"
	DefaultRefresh     = 100 * time.Millisecond
	DefaultLoadTimeout = time.Second
)

// retryAfter is what an "unavailable" answer tells the client to wait.
const retryAfter = time.Second

// Options configure New.
type Options struct {
	// Store is the Redis holding the routing table (required). The router
	// reads it in Run and Reload only, never while serving a request.
	Store redis.Cmdable
	// Keys name the table's keys; zero fields take their defaults.
	Keys Keys
	// ShopHeader names the request header that carries the shop; ""
	// means DefaultShopHeader.
	ShopHeader string
	// Refresh is how long Run waits after one load before the next; 0
	// means DefaultRefresh.
	Refresh time.Duration
	// LoadTimeout bounds one load; 0 means DefaultLoadTimeout. A store
	// that hangs delays the next load by this much, and routing not at
	// all.
	LoadTimeout time.Duration
	// Logger receives the table's changes and the store's outages; nil
	// discards them.
	Logger *slog.Logger
}

// Router routes requests by shop to pods. It is an http.Handler; its
// methods are safe for concurrent use.
type Router struct {
	opts  Options
	log   *slog.Logger
	proxy *httputil.ReverseProxy
	cur   atomic.Pointer[snapshot]
}

// snapshot is a loaded table and its pods' parsed URLs.
type snapshot struct {
	table   *Table
	targets map[string]*url.URL // pods whose URL parses
}

// dest is where one request goes, carried to the proxy in its context.
type dest struct {
	pod    string
	target *url.URL
}

type destKey struct{}

// New returns a Router with no table yet: it answers 503 no_routes until
// Reload succeeds, or Run's first load does.
func New(o Options) (*Router, error) {
	if o.Store == nil {
		return nil, errors.New("router: no Store")
	}
	if o.Refresh < 0 || o.LoadTimeout < 0 {
		return nil, fmt.Errorf("router: Refresh %s, LoadTimeout %s: want 0 (the default) or more", o.Refresh, o.LoadTimeout)
	}
	o.Keys = o.Keys.WithDefaults()
	if o.ShopHeader == "" {
		o.ShopHeader = DefaultShopHeader
	}
	o.ShopHeader = http.CanonicalHeaderKey(o.ShopHeader)
	if o.Refresh == 0 {
		o.Refresh = DefaultRefresh
	}
	if o.LoadTimeout == 0 {
		o.LoadTimeout = DefaultLoadTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	r := &Router{opts: o, log: o.Logger}
	r.proxy = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			d := pr.In.Context().Value(destKey{}).(dest)
			pr.SetURL(d.target)
			pr.Out.Header["X-Forwarded-For"] = pr.In.Header["X-Forwarded-For"]
			pr.SetXForwarded()
		},
		Transport: newTransport(),
		ModifyResponse: func(resp *http.Response) error {
			resp.Header.Set(PodHeader, resp.Request.Context().Value(destKey{}).(dest).pod)
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, req *http.Request, err error) {
			d := req.Context().Value(destKey{}).(dest)
			r.log.Debug("pod unreachable", "pod", d.pod, "path", req.URL.Path, "err", err)
			w.Header().Set(PodHeader, d.pod)
			unavailable(w, http.StatusBadGateway, "pod_unreachable")
		},
		ErrorLog: slog.NewLogLogger(o.Logger.Handler(), slog.LevelDebug),
	}
	return r, nil
}

// newTransport is the one transport to every pod: enough idle connections
// kept per pod for a few thousand requests a second on loopback, a short
// dial, and no timeout of its own on an answer (the pod's deadlines and the
// client's patience bound it).
func newTransport() *http.Transport {
	return &http.Transport{
		DialContext:         (&net.Dialer{Timeout: time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        4096,
		MaxIdleConnsPerHost: 1024,
		IdleConnTimeout:     90 * time.Second,
	}
}

// Table is the table the router routes by, nil before the first load.
// It is shared: read it, never change it.
func (r *Router) Table() *Table {
	if s := r.cur.Load(); s != nil {
		return s.table
	}
	return nil
}

// Reload reads the table from the store once and routes by it from then
// on. On error the router keeps the table it had.
func (r *Router) Reload(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, r.opts.LoadTimeout)
	defer cancel()
	t, err := routetable.Read(ctx, r.opts.Store, r.opts.Keys)
	if err != nil {
		return err
	}
	t.LoadedAt = time.Now()
	s := &snapshot{table: t, targets: make(map[string]*url.URL, len(t.Pods))}
	prev := r.Table()
	changed := prev == nil || prev.Version != t.Version
	for pod, raw := range t.Pods {
		u, err := routetable.PodURL(raw)
		if err != nil {
			if changed {
				r.log.Warn("pod has no usable URL: its shops are answered 502 no_pod", "pod", pod, "err", err)
			}
			continue
		}
		s.targets[pod] = u
	}
	r.cur.Store(s)
	if changed {
		r.log.Info("routing table loaded", "version", t.Version, "shops", len(t.Routes), "pods", len(t.Pods))
	}
	return nil
}

// Run reloads the table until ctx ends: at once, then Refresh after each
// load. An outage (the store unreachable, or holding no table) is logged
// once as a warning when it starts, each failed load of it at debug level,
// and its end once.
func (r *Router) Run(ctx context.Context) {
	var (
		down  string    // the last failed load's kind of error; "": it loaded
		since time.Time // when the outage started
	)
	for {
		err := r.Reload(ctx)
		if ctx.Err() != nil {
			return
		}
		kind := ""
		switch {
		case errors.Is(err, ErrNoTable):
			kind = "no table"
		case err != nil:
			kind = "unreachable"
		}
		switch {
		case kind != "" && kind == down:
			r.log.Debug("routing table reload failed", "err", err)
		case kind != "":
			if down == "" {
				since = time.Now()
			}
			down = kind
			if t := r.Table(); t != nil {
				r.log.Warn("routing table unreadable: routing by the last table", "version", t.Version, "err", err)
			} else {
				r.log.Warn("routing table unreadable: no table yet, answering 503 no_routes", "err", err)
			}
		case down != "":
			r.log.Info("routing table readable again", "outage", time.Since(since).Round(time.Millisecond))
			down = ""
		}
		if !wait.For(ctx, r.opts.Refresh) {
			return
		}
	}
}

// ServeHTTP answers the router's own paths and forwards every other
// request to its shop's pod.
func (r *Router) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	switch req.URL.Path {
	case RoutesPath:
		r.serveOwn(w, req, func(t *Table) any { return t })
		return
	case HealthPath:
		r.serveOwn(w, req, func(t *Table) any {
			return struct {
				Status  string `json:"status"`
				Version int64  `json:"version"`
			}{"ok", t.Version}
		})
		return
	}
	s := r.cur.Load()
	if s == nil {
		unavailable(w, http.StatusServiceUnavailable, "no_routes")
		return
	}
	shop := req.Header.Get(r.opts.ShopHeader)
	if shop == "" {
		refuse(w, http.StatusBadRequest, "no_shop")
		return
	}
	route, ok := s.table.Routes[shop]
	if !ok {
		refuse(w, http.StatusNotFound, "unknown_shop")
		return
	}
	pod, moving := strings.CutPrefix(route, MovingPrefix)
	if moving && req.Method != http.MethodGet && req.Method != http.MethodHead {
		unavailable(w, http.StatusServiceUnavailable, "shop_moving")
		return
	}
	target, ok := s.targets[pod]
	if !ok {
		refuse(w, http.StatusBadGateway, "no_pod")
		return
	}
	r.proxy.ServeHTTP(w, req.WithContext(context.WithValue(req.Context(), destKey{}, dest{pod, target})))
}

// serveOwn answers GET or HEAD of one of the router's paths with body(the
// table in use), or 503 no_routes before the first load.
func (r *Router) serveOwn(w http.ResponseWriter, req *http.Request, body func(*Table) any) {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		refuse(w, http.StatusMethodNotAllowed, "method_not_allowed")
		return
	}
	t := r.Table()
	if t == nil {
		unavailable(w, http.StatusServiceUnavailable, "no_routes")
		return
	}
	writeJSON(w, http.StatusOK, body(t))
}

// answer is the body of the router's own refusals, in the reference
// checkout's words.
type answer struct {
	Status       string `json:"status"`
	Reason       string `json:"reason"`
	RetryAfterMS int64  `json:"retry_after_ms,omitempty"`
}

func refuse(w http.ResponseWriter, code int, reason string) {
	writeJSON(w, code, answer{Status: "error", Reason: reason})
}

func unavailable(w http.ResponseWriter, code int, reason string) {
	w.Header().Set("Retry-After", fmt.Sprint(int(retryAfter/time.Second)))
	writeJSON(w, code, answer{Status: "unavailable", Reason: reason, RetryAfterMS: retryAfter.Milliseconds()})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
