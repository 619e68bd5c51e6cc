package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// healthCmd checks that a server answers within the timeout: GET an
// http(s) URL and want a 2xx; connect to tcp://host:port; or send PING to
// redis://host:port and want PONG (a Redis still loading its data answers
// LOADING, which is not ready). The images have no shell, no curl and no
// redis-cli in the gameday image, so their health checks, and the
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
	u, err := url.Parse(raw)
	if err != nil {
		return usagef("health: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	var what string
	switch u.Scheme {
	case "http", "https":
		what, err = healthHTTP(ctx, raw)
	case "tcp":
		what, err = healthTCP(ctx, u.Host)
	case "redis":
		what, err = healthRedis(ctx, u.Host)
	default:
		return usagef("health: %q: want an http, https, tcp or redis URL", raw)
	}
	if err != nil {
		return fmt.Errorf("health: %s: %w", raw, err)
	}
	fmt.Fprintf(stdout, "%s: %s\n", raw, what)
	return nil
}

func healthHTTP(ctx context.Context, raw string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return "", fmt.Errorf("answered %s", resp.Status)
	}
	return resp.Status, nil
}

func healthTCP(ctx context.Context, hostport string) (string, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", hostport)
	if err != nil {
		return "", err
	}
	c.Close()
	return "connected", nil
}

func healthRedis(ctx context.Context, hostport string) (string, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", hostport)
	if err != nil {
		return "", err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	if _, err := io.WriteString(c, "PING\r\n"); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(io.LimitReader(c, 512)).ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimSpace(line)
	if line != "+PONG" {
		return "", fmt.Errorf("answered %q to PING", line)
	}
	return "PONG", nil
}
