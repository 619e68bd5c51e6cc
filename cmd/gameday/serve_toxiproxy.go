package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/gameday-dev/gameday/gameday/toxi"
)

// serveToxiproxy runs the embedded Toxiproxy on its own, for operators who
// start the reference environment by hand and have no toxiproxy-server.
func serveToxiproxy(args []string, stderr io.Writer) error {
	fs := newFlagSet("serve toxiproxy", stderr)
	listen := fs.String("listen", "127.0.0.1:8474", "address of the Toxiproxy HTTP API (it has no authentication: keep it on loopback)")
	var lf logFlags
	lf.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	log, err := lf.logger(stderr)
	if err != nil {
		return err
	}
	if err := checkListen(*listen); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	e, err := toxi.StartEmbedded(*listen)
	if err != nil {
		return usageError{err}
	}
	log.Info("listening", "addr", e.APIAddr())
	<-ctx.Done()
	log.Info("shutting down; removing every proxy")
	if err := e.Close(); err != nil {
		return err
	}
	log.Info("stopped")
	return nil
}
