package toxi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/gorilla/mux"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// Embedded is a Toxiproxy server running inside this process.
type Embedded struct {
	api      *toxiproxy.ApiServer
	listener net.Listener
	http     *http.Server
	done     chan error
}

// StartEmbedded starts an embedded Toxiproxy whose HTTP API listens on addr
// (for example "127.0.0.1:0" for a free loopback port). Proxies created
// through the API listen wherever the API caller asks.
func StartEmbedded(addr string) (*Embedded, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen toxiproxy api on %s: %w", addr, err)
	}
	api := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	e := &Embedded{
		api:      api,
		listener: ln,
		http: &http.Server{
			Handler:           routes(api),
			ReadHeaderTimeout: 5 * time.Second,
			ReadTimeout:       10 * time.Second,
			WriteTimeout:      30 * time.Second,
		},
		done: make(chan error, 1),
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
	if err := <-e.done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve toxiproxy api: %w", err)
	}
	return errors.Join(errShutdown, errClear)
}

// routes mirrors toxiproxy-server's API so that its CLI and clients work.
func routes(api *toxiproxy.ApiServer) http.Handler {
	r := mux.NewRouter()
	r.HandleFunc("/reset", api.ResetState).Methods("POST")
	r.HandleFunc("/proxies", api.ProxyIndex).Methods("GET")
	r.HandleFunc("/proxies", api.ProxyCreate).Methods("POST")
	r.HandleFunc("/populate", api.Populate).Methods("POST")
	r.HandleFunc("/proxies/{proxy}", api.ProxyShow).Methods("GET")
	r.HandleFunc("/proxies/{proxy}", api.ProxyUpdate).Methods("POST")
	r.HandleFunc("/proxies/{proxy}", api.ProxyDelete).Methods("DELETE")
	r.HandleFunc("/proxies/{proxy}/toxics", api.ToxicIndex).Methods("GET")
	r.HandleFunc("/proxies/{proxy}/toxics", api.ToxicCreate).Methods("POST")
	r.HandleFunc("/proxies/{proxy}/toxics/{toxic}", api.ToxicShow).Methods("GET")
	r.HandleFunc("/proxies/{proxy}/toxics/{toxic}", api.ToxicUpdate).Methods("POST")
	r.HandleFunc("/proxies/{proxy}/toxics/{toxic}", api.ToxicDelete).Methods("DELETE")
	r.HandleFunc("/version", api.Version).Methods("GET")
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
