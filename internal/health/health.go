// Package health asks a server whether it answers: an HTTP endpoint, a TCP
// port, or a Redis server. It is the "gameday health" command, and how the
// runner knows that a restarted dependency is back.
package health

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/gameday-dev/gameday/internal/noredirect"
	"github.com/gameday-dev/gameday/internal/redact"
)

// Check asks the server named by raw, within ctx: GET an http(s) URL and
// want a 2xx (a redirect is not followed: it is not ready, and the error
// says where it pointed); connect to tcp://host:port; or send PING to
// redis://host:port and want PONG (a Redis still loading its data answers
// LOADING, which is not ready; one that wants a password answers NOAUTH
// unless the URL carries it, redis://:PASSWORD@host:port, which is sent
// with AUTH first). It returns what the server answered.
func Check(ctx context.Context, raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		// Not url.Parse's error: it quotes the URL, password and all.
		return "", errors.New("not a URL")
	}
	switch u.Scheme {
	case "http", "https":
		return checkHTTP(ctx, raw)
	case "tcp":
		return checkTCP(ctx, u.Host)
	case "redis":
		pw, _ := u.User.Password()
		return checkRedis(ctx, u.Host, pw)
	}
	return "", fmt.Errorf("%q: %w", redact.URL(raw), ErrScheme)
}

// Redact is raw as messages may show it (redact.URL).
func Redact(raw string) string { return redact.URL(raw) }

// ErrScheme is the error for a URL whose scheme Check does not speak.
var ErrScheme = fmt.Errorf("want an http, https, tcp or redis URL")

func checkHTTP(ctx context.Context, raw string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err != nil {
		return "", redact.Error(err)
	}
	// A redirect is not followed: a 3xx is not ready (package noredirect).
	resp, err := noredirect.Client(0).Do(req)
	if err != nil {
		return "", redact.Error(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if noredirect.Is(resp) {
		return "", noredirect.Error(resp)
	}
	if resp.StatusCode/100 != 2 {
		return "", fmt.Errorf("answered %s", resp.Status)
	}
	return resp.Status, nil
}

func checkTCP(ctx context.Context, hostport string) (string, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", hostport)
	if err != nil {
		return "", err
	}
	c.Close()
	return "connected", nil
}

func checkRedis(ctx context.Context, hostport, password string) (string, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", hostport)
	if err != nil {
		return "", err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	r := bufio.NewReader(io.LimitReader(c, 1024))
	if password != "" {
		// As a RESP array, so that any byte of the password is sent as is.
		if _, err := fmt.Fprintf(c, "*2\r\n$4\r\nAUTH\r\n$%d\r\n%s\r\n", len(password), password); err != nil {
			return "", err
		}
		line, err := r.ReadString('\n')
		if err != nil {
			return "", err
		}
		if line = strings.TrimSpace(line); line != "+OK" {
			return "", fmt.Errorf("answered %q to AUTH", line)
		}
	}
	if _, err := io.WriteString(c, "PING\r\n"); err != nil {
		return "", err
	}
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimSpace(line)
	if line != "+PONG" {
		return "", fmt.Errorf("answered %q to PING", line)
	}
	return "PONG", nil
}
