package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/gameday-dev/gameday/internal/health"
)

// healthCmd checks that a server answers within the timeout: GET an
// http(s) URL and want a 2xx; connect to tcp://host:port; or send PING to
// redis://host:port and want PONG. The images have no shell, no curl and
// no redis-cli in the gameday image, so their health checks, and the
// runner's check that a restarted container is reachable by its peers, are
// this command.
func healthCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("health", stderr)
	timeout := fs.Duration("timeout", 2*time.Second, "how long to wait for the answer")
	if err := parseFlags2(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("health: want one URL, such as http://127.0.0.1:8080/healthz, tcp://db:5432 or redis://redis:6379")
	}
	raw := fs.Arg(0)
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	what, err := health.Check(ctx, raw)
	if errors.Is(err, health.ErrScheme) {
		return usagef("health: %v", err)
	}
	if err != nil {
		return fmt.Errorf("health: %s: %w", raw, err)
	}
	fmt.Fprintf(stdout, "%s: %s\n", raw, what)
	return nil
}
