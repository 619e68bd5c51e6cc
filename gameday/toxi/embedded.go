package toxi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/gorilla/mux"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	zlog "github.com/rs/zerolog/log"

	// gameday's versions of Toxiproxy's TCP toxics, registered under
	// Toxiproxy's names: a removal never waits on them for ever. (relays.go
	// and heads.go import it too.)
	_ "github.com/gameday-dev/gameday/gameday/toxi/tcp"
)

// Embedded is a Toxiproxy server running inside this process.
type Embedded struct {
	api      *toxiproxy.ApiServer
	listener net.Listener
	http     *http.Server
	done     chan error
	allow    listenGuard
	relays   *relays
}

// EmbeddedOptions says where the embedded Toxiproxy's proxies may listen.
// By default only on loopback: its API has no authentication, and a proxy
// listening on every interface would relay anyone on the network to a
// service that listens on loopback only.
type EmbeddedOptions struct {
	// AnyListen lets API callers open proxies on any address. Set only
	// when the operator asked for it (serve toxiproxy --allow-remote-listen).
	AnyListen bool
	// Listen holds the non-loopback addresses the operator wrote down
	// (a system file's dependencies' listen): proxies may listen there.
	Listen []string
	// RequestAware puts a relay behind every proxy, so that the
	// request-aware toxics (lost_reply) work on any of them; without it
	// only a proxy created with "request_aware": true has one. A relay
	// costs a loopback hop per request; a proxy without one costs what
	// Toxiproxy does.
	RequestAware bool
}

// StartEmbedded starts an embedded Toxiproxy whose HTTP API listens on addr
// (for example "127.0.0.1:0" for a free loopback port). A proxy created or
// moved through the API must listen on loopback, unless o allows it.
func init() {
	// Toxiproxy's toxics and links log through zerolog's global logger,
	// which zerolog starts at trace level: lines such as "BandwidthToxic
	// was interrupted" on every removal, printed amid a drill's or a
	// search's output. gameday says itself what matters of a fault.
	zlog.Logger = zerolog.Nop()
}

func StartEmbedded(addr string, o EmbeddedOptions) (*Embedded, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen toxiproxy api on %s: %w", addr, err)
	}
	api := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	e := &Embedded{
		api:      api,
		listener: ln,
		done:     make(chan error, 1),
		allow:    listenGuard{any: o.AnyListen, listen: map[string]bool{}},
		relays:   newRelays(api, o.RequestAware),
	}
	for _, l := range o.Listen {
		e.allow.listen[l] = true
	}
	e.http = &http.Server{
		Handler:           routes(api, e.allow, e.relays),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
	}
	go func() { e.done <- e.http.Serve(ln) }()
	return e, nil
}

// APIAddr is the host:port of the HTTP API.
func (e *Embedded) APIAddr() string { return e.listener.Addr().String() }

// Close removes every proxy (closing their listeners and connections) and
// stops the API.
func (e *Embedded) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	errShutdown := e.http.Shutdown(ctx)
	errClear := e.api.Collection.Clear()
	e.relays.closeAll()
	if err := <-e.done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve toxiproxy api: %w", err)
	}
	return errors.Join(errShutdown, errClear)
}

// routes mirrors toxiproxy-server's API so that its CLI and clients work.
// A proxy may have a relay behind it (relays.go), which the routes that
// take or show a proxy hide; the routes that change toxics tell the relays.
// Every proxy has gameday's heads in its chains (heads.go), put in by the
// routes that create proxies, kept by the reset, hidden by every route;
// a toxic of gameday's draws its toxicity itself (toxicity.go), and every
// route shows the toxicity its client set.
func routes(api *toxiproxy.ApiServer, g listenGuard, rs *relays) http.Handler {
	r := mux.NewRouter()
	r.Use(asSet)
	r.HandleFunc("/reset", rs.toxicsChanged(resetToxics(api))).Methods("POST")
	r.HandleFunc("/proxies", rs.showing(api.ProxyIndex)).Methods("GET")
	r.HandleFunc("/proxies", g.check(rs.proxies(createProxy(api), false, false), false)).Methods("POST")
	r.HandleFunc("/populate", g.check(rs.proxies(populate(api), true, false), true)).Methods("POST")
	r.HandleFunc("/proxies/{proxy}", rs.showing(api.ProxyShow)).Methods("GET")
	// Updates take PATCH, as Toxiproxy has since 2.6, and POST, which it
	// still takes (deprecated), as older servers want it.
	r.HandleFunc("/proxies/{proxy}", g.check(rs.proxies(api.ProxyUpdate, false, true), false)).Methods("POST", "PATCH")
	r.HandleFunc("/proxies/{proxy}", rs.deleted(api.ProxyDelete)).Methods("DELETE")
	r.HandleFunc("/proxies/{proxy}/toxics", api.ToxicIndex).Methods("GET")
	r.HandleFunc("/proxies/{proxy}/toxics", rs.toxicsChanged(toxicityToToxic(api, api.ToxicCreate))).Methods("POST")
	r.HandleFunc("/proxies/{proxy}/toxics/{toxic}", api.ToxicShow).Methods("GET")
	r.HandleFunc("/proxies/{proxy}/toxics/{toxic}", rs.toxicsChanged(toxicityToToxic(api, api.ToxicUpdate))).Methods("POST", "PATCH")
	r.HandleFunc("/proxies/{proxy}/toxics/{toxic}", rs.toxicsChanged(api.ToxicDelete)).Methods("DELETE")
	r.HandleFunc("/version", api.Version).Methods("GET")
	r.HandleFunc(CapabilitiesPath, rs.capabilities).Methods("GET")
	r.HandleFunc(RequestsPath, rs.requests).Methods("GET")
	return refuseBrowsers(r)
}

// refuseBrowsers keeps a web page open in the operator's browser from
// driving the unauthenticated API through the loopback address.
func refuseBrowsers(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.UserAgent(), "Mozilla/") {
			http.Error(w, "browsers may not use the toxiproxy api", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// listenGuard refuses proxies listening where the operator did not allow.
type listenGuard struct {
	any    bool
	listen map[string]bool
}

// maxProxyBody bounds what the API's wrappers read of a request: a
// populate of thousands of proxies is a few hundred kilobytes.
const maxProxyBody = 1 << 20

// readAPIBody reads a request's body for a wrapper of the API, refusing
// with 400 one that cannot be read or is larger than maxProxyBody; ok is
// false when it refused.
func readAPIBody(w http.ResponseWriter, r *http.Request) (body []byte, ok bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxProxyBody+1))
	if err != nil || len(body) > maxProxyBody {
		apiError(w, http.StatusBadRequest, "request body unreadable or larger than 1 MiB")
		return nil, false
	}
	return body, true
}

// check wraps a handler whose JSON body is one proxy (or, with many, a list
// of them), refusing with 403 any whose listen is not allowed. The body is
// handed on as it came.
func (g listenGuard) check(next http.HandlerFunc, many bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if g.any {
			next(w, r)
			return
		}
		body, ok := readAPIBody(w, r)
		if !ok {
			return
		}
		var err error
		type proxy struct {
			Listen string `json:"listen"`
		}
		var ps []proxy
		if many {
			err = json.Unmarshal(body, &ps)
		} else {
			var p proxy
			err = json.Unmarshal(body, &p)
			ps = append(ps, p)
		}
		if err != nil {
			apiError(w, http.StatusBadRequest, "bad request body: "+err.Error())
			return
		}
		for _, p := range ps {
			if p.Listen != "" && !g.listen[p.Listen] && !Loopback(p.Listen) {
				apiError(w, http.StatusForbidden, fmt.Sprintf("listen %q is not a loopback address: this Toxiproxy opens proxies on loopback only, unless its operator allows more (gameday serve toxiproxy --allow-remote-listen, or the address as a dependency's listen in the system file)", p.Listen))
				return
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next(w, r)
	}
}

// Loopback reports whether a listen address (host:port) is on loopback
// only: 127.0.0.0/8, ::1 or "localhost". An empty host listens on every
// interface; another name may resolve anywhere.
func Loopback(listen string) bool {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// apiError answers as toxiproxy-server does, so its clients show the text.
func apiError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": msg, "status": status})
}
