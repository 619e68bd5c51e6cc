package toxi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gameday-dev/gameday/internal/noredirect"
	"github.com/gameday-dev/gameday/internal/redact"
)

// DefaultCallTimeout bounds every API call whose context has no deadline.
const DefaultCallTimeout = 5 * time.Second

// ErrNotFound is returned when the proxy or toxic named does not exist.
var ErrNotFound = errors.New("not found")

// Proxy is a Toxiproxy proxy as its API describes it.
type Proxy struct {
	Name     string `json:"name"`
	Listen   string `json:"listen"`
	Upstream string `json:"upstream"`
	Enabled  bool   `json:"enabled"`
	// RequestAware, gameday's Toxiproxy only: the proxy has a relay
	// behind it, which the request-aware toxics (lost_reply) need. A
	// stock Toxiproxy ignores it and never sets it.
	RequestAware bool    `json:"request_aware,omitempty"`
	Toxics       []Toxic `json:"toxics,omitempty"`
}

// Toxic is one fault on one direction of a proxy.
//
// Stream is "downstream" (server to client, Toxiproxy's default) or
// "upstream" (client to server). Toxicity is the probability, decided once
// per connection, that the toxic applies to it; Toxiproxy treats 0 as 1 when
// a toxic is created, so this type sends 1 when Toxicity is 0.
type Toxic struct {
	Name       string         `json:"name"`
	Type       string         `json:"type"`
	Stream     string         `json:"stream,omitempty"`
	Toxicity   float64        `json:"toxicity"`
	Attributes map[string]any `json:"attributes"`
}

// Client calls a Toxiproxy HTTP API. The zero value is not usable; use
// NewClient.
type Client struct {
	base string
	hc   *http.Client
}

// NewClient returns a client for the API at addr ("host:port" or a URL).
// It never follows a redirect: a 3xx answer is an error naming the status
// (what answers at addr is not a Toxiproxy, or not only one), and nothing
// is sent to where it points.
func NewClient(addr string) *Client {
	if !strings.Contains(addr, "://") {
		addr = "http://" + addr
	}
	hc := noredirect.Client(0)
	return &Client{base: strings.TrimRight(addr, "/"), hc: hc}
}

// Addr is the API's base URL.
func (c *Client) Addr() string { return c.base }

// Version asks the server for its version; it doubles as a readiness check.
func (c *Client) Version(ctx context.Context) (string, error) {
	var buf bytes.Buffer
	if err := c.do(ctx, http.MethodGet, "/version", nil, &buf); err != nil {
		return "", err
	}
	return strings.TrimSpace(buf.String()), nil
}

// CreateProxy creates an enabled proxy. listen may use port 0; the returned
// Proxy carries the address actually bound.
func (c *Client) CreateProxy(ctx context.Context, name, listen, upstream string) (Proxy, error) {
	return c.Create(ctx, Proxy{Name: name, Listen: listen, Upstream: upstream, Enabled: true})
}

// Create creates the proxy p describes (its toxics apart); with
// RequestAware, gameday's Toxiproxy puts a relay behind it.
func (c *Client) Create(ctx context.Context, p Proxy) (Proxy, error) {
	p.Toxics = nil
	var out Proxy
	err := c.do(ctx, http.MethodPost, "/proxies", p, &out)
	return out, err
}

// Capabilities asks gameday's Toxiproxy what it serves (CapabilitiesPath);
// a stock Toxiproxy answers ErrNotFound.
func (c *Client) Capabilities(ctx context.Context) (Capabilities, error) {
	var caps Capabilities
	err := c.do(ctx, http.MethodGet, CapabilitiesPath, nil, &caps)
	return caps, err
}

// Served is what the Toxiproxy at c serves, telling a stock Toxiproxy
// (stock: it has no capabilities route and serves no request-aware toxic)
// from gameday's; any other failure to ask is the error.
func (c *Client) Served(ctx context.Context) (caps Capabilities, stock bool, err error) {
	caps, err = c.Capabilities(ctx)
	if errors.Is(err, ErrNotFound) {
		return Capabilities{}, true, nil
	}
	return caps, false, err
}

// Requests returns the kinds of request the relay behind proxy saw from
// the second since (Unix time) on: gameday's Toxiproxy only, on a proxy
// with a relay.
func (c *Client) Requests(ctx context.Context, proxy string, since int64) (Requests, error) {
	var out Requests
	path := strings.Replace(RequestsPath, "{proxy}", url.PathEscape(proxy), 1) + "?since=" + strconv.FormatInt(since, 10)
	err := c.do(ctx, http.MethodGet, path, nil, &out)
	return out, err
}

// Proxy returns one proxy with its toxics.
func (c *Client) Proxy(ctx context.Context, name string) (Proxy, error) {
	var p Proxy
	err := c.do(ctx, http.MethodGet, "/proxies/"+url.PathEscape(name), nil, &p)
	return p, err
}

// Proxies returns every proxy by name.
func (c *Client) Proxies(ctx context.Context) (map[string]Proxy, error) {
	ps := map[string]Proxy{}
	err := c.do(ctx, http.MethodGet, "/proxies", nil, &ps)
	return ps, err
}

// DeleteProxy removes a proxy and closes its connections.
func (c *Client) DeleteProxy(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodDelete, "/proxies/"+url.PathEscape(name), nil, nil)
}

// SetEnabled enables or disables a proxy. A disabled proxy closes its
// listener and every open connection: the dependency is down.
func (c *Client) SetEnabled(ctx context.Context, name string, enabled bool) error {
	return c.do(ctx, http.MethodPost, "/proxies/"+url.PathEscape(name), map[string]bool{"enabled": enabled}, nil)
}

// AddToxic adds a toxic to the named proxy.
func (c *Client) AddToxic(ctx context.Context, proxy string, t Toxic) (Toxic, error) {
	if t.Toxicity == 0 {
		t.Toxicity = 1
	}
	if t.Attributes == nil {
		t.Attributes = map[string]any{}
	}
	var out Toxic
	err := c.do(ctx, http.MethodPost, "/proxies/"+url.PathEscape(proxy)+"/toxics", t, &out)
	return out, err
}

// RemoveToxic removes a toxic from the named proxy.
func (c *Client) RemoveToxic(ctx context.Context, proxy, toxic string) error {
	return c.do(ctx, http.MethodDelete, "/proxies/"+url.PathEscape(proxy)+"/toxics/"+url.PathEscape(toxic), nil, nil)
}

// Toxics lists the toxics on the named proxy.
func (c *Client) Toxics(ctx context.Context, proxy string) ([]Toxic, error) {
	var ts []Toxic
	err := c.do(ctx, http.MethodGet, "/proxies/"+url.PathEscape(proxy)+"/toxics", nil, &ts)
	return ts, err
}

// Reset enables every proxy and removes every toxic on the server. On a
// shared Toxiproxy it also removes other people's faults; gameday removes
// its own faults by name instead.
func (c *Client) Reset(ctx context.Context) error {
	return c.do(ctx, http.MethodPost, "/reset", nil, nil)
}

// APIError is an error answer from the Toxiproxy API.
type APIError struct {
	Method, Path string
	Status       int
	Message      string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("toxiproxy %s %s: %d %s", e.Method, e.Path, e.Status, e.Message)
}

// Is makes errors.Is(err, ErrNotFound) true for 404 answers.
func (e *APIError) Is(target error) bool {
	return target == ErrNotFound && e.Status == http.StatusNotFound
}

func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	deadline, ok := ctx.Deadline()
	if !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultCallTimeout)
		defer cancel()
		deadline, _ = ctx.Deadline()
	}
	budget := time.Until(deadline)
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encode toxiproxy request: %w", err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return fmt.Errorf("build toxiproxy request: %w", err)
	}
	req.Header.Set("User-Agent", "gameday")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return c.unanswered(method, path, budget, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return fmt.Errorf("read toxiproxy answer to %s %s: %w", method, path, err)
	}
	if resp.StatusCode >= 300 {
		var apiErr struct {
			Error string `json:"error"`
		}
		msg := strings.TrimSpace(string(data))
		if json.Unmarshal(data, &apiErr) == nil && apiErr.Error != "" {
			msg = apiErr.Error
		}
		if resp.StatusCode < 400 {
			msg = fmt.Sprintf("%s: a redirect (to %s), which gameday does not follow: give the Toxiproxy API's own address",
				http.StatusText(resp.StatusCode), redact.URL(resp.Header.Get("Location")))
		}
		return &APIError{Method: method, Path: path, Status: resp.StatusCode, Message: msg}
	}
	switch o := out.(type) {
	case nil:
		return nil
	case *bytes.Buffer:
		o.Write(data)
		return nil
	default:
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("decode toxiproxy answer to %s %s: %w", method, path, err)
		}
		return nil
	}
}

// unanswered is the error of a call that got no answer, naming the
// Toxiproxy called: past its deadline, how long the call waited, and for
// the removal of a toxic, why a stock Toxiproxy may never answer it.
func (c *Client) unanswered(method, path string, budget time.Duration, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // its URL is c's, named here
	}
	call := fmt.Sprintf("toxiproxy at %s: %s %s", redact.URL(c.base), method, path)
	if !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: %w", call, err)
	}
	var hint string
	if method == http.MethodDelete && strings.Contains(path, "/toxics/") {
		hint = "; " + removalHangs
	}
	return fmt.Errorf("%s: no answer within %s (%w)%s", call, budget.Round(time.Millisecond), err, hint)
}

// removalHangs says why removing a toxic may get no answer.
const removalHangs = "a stock Toxiproxy can hang for good removing a toxic whose data nobody reads, " +
	"and every later call on that proxy with it, until it restarts (Toxiproxy issue #558): the toxic may still be in place " +
	"(gameday's own Toxiproxy, gameday serve toxiproxy, hangs so only on a reset_peer whose toxicity is below 1: docs/faults.md)"
