package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"time"

	"github.com/gameday-dev/gameday/internal/health"
)

// healthCmd checks that a server answers within the timeout: GET an
// http(s) URL and want a 2xx; connect to tcp://host:port; or send PING to
// redis://host:port and want PONG (with the password in $REDISCLI_AUTH,
// as redis-cli takes it, when the URL has none). The images have no shell, no curl and
// no redis-cli in the gameday image, so their health checks, and the
// runner's check that a restarted container is reachable by its peers, are
// this command.
func healthCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("health", stderr)
	describe(fs, "gameday health [flags] URL", `
Exits 0 when URL answers within -timeout, 1 when it does not: GET an
http(s):// URL and want a 2xx; connect to tcp://HOST:PORT; or send PING to
redis://HOST:PORT and want PONG (the password from the URL, else from
$REDISCLI_AUTH, as redis-cli takes it). The images have no shell, curl or
redis-cli: their health checks are this command.`)
	timeout := fs.Duration("timeout", 2*time.Second, "how long to wait for the answer")
	if err := parseFlags2(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("health: want one URL, such as http://127.0.0.1:8080/healthz, tcp://db:5432 or redis://redis:6379")
	}
	// Never print a password: neither the URL's nor REDISCLI_AUTH's.
	raw, shown := fs.Arg(0), health.Redact(fs.Arg(0))
	if u, err := url.Parse(raw); err == nil {
		if pw := os.Getenv("REDISCLI_AUTH"); u.Scheme == "redis" && u.User == nil && pw != "" {
			u.User = url.UserPassword("", pw)
			raw = u.String()
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	what, err := health.Check(ctx, raw)
	if errors.Is(err, health.ErrScheme) {
		return usagef("health: %q: %v", shown, health.ErrScheme)
	}
	if err != nil {
		return fmt.Errorf("health: %s: %w", shown, err)
	}
	fmt.Fprintf(stdout, "%s: %s\n", shown, what)
	return nil
}
