package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
	"syscall"

	"github.com/gameday-dev/gameday/gameday/system"
	"github.com/gameday-dev/gameday/gameday/toxi"
)

// serveToxiproxy runs the embedded Toxiproxy on its own, for operators who
// start the reference environment by hand and have no toxiproxy-server.
// With -system it creates the proxies a system file describes (each
// dependency's listen and upstream), so that a service that runs all the
// time can connect through them, and the system file can name it
// (toxiproxy: ADDRESS).
func serveToxiproxy(args []string, stderr io.Writer) error {
	fs := newFlagSet("serve toxiproxy", stderr)
	describe(fs, "gameday serve toxiproxy [flags]", `
Runs Toxiproxy embedded, serving its standard HTTP API (toxiproxy-cli works
against it), until SIGINT or SIGTERM, then removes every proxy. Proxies
open on loopback only unless -allow-remote-listen. With -system it creates
the proxy of each dependency of a system file (its listen and upstream), so
that a service that runs all the time connects through them and the system
file can name this Toxiproxy (toxiproxy: ADDRESS; docs/systems.md). Besides
Toxiproxy's toxics it serves the request-aware ones — lost_reply, and
http_error, http_lost_response, http_latency and http_malformed for HTTP/1.x
dependencies — on proxies with a relay behind them: created with
"request_aware": true, or all with -request-aware (docs/faults.md).`)
	listen := fs.String("listen", "127.0.0.1:8474", "address of the Toxiproxy HTTP API (it has no authentication: keep it on loopback)")
	sysFile := fs.String("system", "", "create the proxies of this system file's dependencies (their listen and upstream)")
	anyListen := fs.Bool("allow-remote-listen", false, "let API callers open proxies on any address, not only loopback (and the system file's listen addresses)")
	requestAware := fs.Bool("request-aware", false, "put a relay behind every proxy, so that the request-aware toxics (lost_reply, the HTTP toxics) work on all of them; it costs a loopback hop per request (docs/faults.md)")
	var lf logFlags
	log, err := lf.parse(fs, args, listen, stderr)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var sys *system.System
	if *sysFile != "" {
		if sys, err = system.LoadFile(*sysFile, nil); err != nil {
			return usageError{err}
		}
	}
	opts := toxi.EmbeddedOptions{AnyListen: *anyListen, RequestAware: *requestAware}
	if sys != nil {
		opts.Listen = sys.Listens()
	}
	e, err := toxi.StartEmbedded(*listen, opts)
	if err != nil {
		return usageError{err}
	}
	log.Info("listening", "addr", e.APIAddr())
	if sys != nil {
		c := toxi.NewClient(e.APIAddr())
		for _, dep := range slices.Sorted(maps.Keys(sys.Dependencies)) {
			d := sys.Dependencies[dep]
			if !d.Proxied() {
				continue // a process alone
			}
			if d.Listen == "" || d.Upstream == "" {
				_ = e.Close()
				return usagef("serve toxiproxy: %s: dependency %s has no listen and upstream to create its proxy from", *sysFile, dep)
			}
			if _, err := c.CreateProxy(ctx, d.Proxy, d.Listen, d.Upstream); err != nil {
				_ = e.Close()
				return fmt.Errorf("serve toxiproxy: create proxy %s: %w", d.Proxy, err)
			}
			log.Info("proxy", "dependency", dep, "name", d.Proxy, "listen", d.Listen, "upstream", d.Upstream)
		}
	}
	<-ctx.Done()
	log.Info("shutting down; removing every proxy")
	if err := e.Close(); err != nil {
		return err
	}
	log.Info("stopped")
	return nil
}
