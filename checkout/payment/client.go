package payment

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gameday-dev/gameday/internal/noredirect"
	"github.com/gameday-dev/gameday/internal/rawsock"
	"github.com/gameday-dev/gameday/internal/redact"
)

// maxErrorBytes bounds how much of an error answer the client reads.
const maxErrorBytes = 64 << 10

var (
	// ErrRejected is wrapped by the error for an answer that says the request
	// itself is wrong (a 4xx other than 408 and 429). Retrying the same
	// request will not help.
	ErrRejected = errors.New("payment request rejected")
	// ErrKeyConflict is wrapped by the error for a 409 answer: the idempotency
	// key was already used with another amount, shopper or SKU. Such an error
	// also wraps ErrRejected.
	ErrKeyConflict = errors.New("payment idempotency key conflict")
)

// StatusError is the error for an answer with an unexpected HTTP status.
// Use errors.Is with ErrRejected and ErrKeyConflict to classify it.
type StatusError struct {
	// StatusCode is the HTTP status of the answer.
	StatusCode int
	// Message is the "error" field of the answer, or its start if it had none.
	Message string
	// Location is where a redirect (a 3xx) pointed. The client follows
	// none: the charge is not sent there.
	Location string
	// RetryAfter is how long the gateway asked to be left alone (its
	// Retry-After, in seconds or as an HTTP date), 0 when it did not say.
	RetryAfter time.Duration
}

// RetryAfter is how long err, a gateway's answer, asks a caller to wait
// before it tries again; 0 when it asks for no wait.
func RetryAfter(err error) time.Duration {
	var se *StatusError
	if errors.As(err, &se) {
		return se.RetryAfter
	}
	return 0
}

// parseRetryAfter reads a Retry-After value: whole seconds, or an HTTP
// date (the wait until then). Anything else, or a time past, is 0.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n <= 0 {
			return 0
		}
		return time.Duration(min(n, 86400)) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return min(t.Sub(now), 24*time.Hour)
	}
	return 0
}

// Error implements error.
func (e *StatusError) Error() string {
	if e.StatusCode/100 == 3 {
		return fmt.Sprintf("payment gateway answered %d %s, a redirect (to %s), which is not followed", e.StatusCode, http.StatusText(e.StatusCode), redact.URL(e.Location))
	}
	return fmt.Sprintf("payment gateway answered %d %s: %s", e.StatusCode, http.StatusText(e.StatusCode), e.Message)
}

// Unwrap returns ErrKeyConflict and ErrRejected for a 409, ErrRejected for
// another 4xx except 408 and 429, and nothing otherwise (the request may be
// retried). A redirect is not a rejection: what answered at the gateway's
// address cannot say that nothing was charged, so its charge is treated as
// one whose outcome is unknown (voided by its key).
func (e *StatusError) Unwrap() []error {
	switch {
	case e.StatusCode == http.StatusConflict:
		return []error{ErrKeyConflict, ErrRejected}
	case e.StatusCode == http.StatusRequestTimeout, e.StatusCode == http.StatusTooManyRequests:
		return nil
	case e.StatusCode >= 400 && e.StatusCode < 500:
		return []error{ErrRejected}
	}
	return nil
}

// Client calls a payment gateway's HTTP API. It never retries by itself. It
// is safe for concurrent use.
type Client struct {
	baseURL string
	hc      *http.Client
}

// NewClient returns a client for the gateway at baseURL, such as
// "http://127.0.0.1:8081". A nil hc means a client of its own, with
// keep-alives and room for many idle connections to the gateway, no proxy,
// and no overall timeout: pass a context with a deadline to every call.
//
// No redirect is followed, whatever hc's policy (package noredirect): it
// would re-send the charge, idempotency key and all, to another host. A 3xx
// is a [*StatusError] naming where it pointed.
func NewClient(baseURL string, hc *http.Client) *Client {
	if hc == nil {
		hc = &http.Client{Transport: newTransport(), CheckRedirect: noredirect.Check}
	} else {
		hc = noredirect.Refuse(hc)
	}
	return &Client{baseURL: strings.TrimRight(baseURL, "/"), hc: hc}
}

// CloseIdleConnections closes the client's idle keep-alive connections to
// the gateway, so that the next call dials afresh.
func (c *Client) CloseIdleConnections() { c.hc.CloseIdleConnections() }

// newTransport returns a transport fit for many concurrent calls to one host.
func newTransport() *http.Transport {
	return &http.Transport{
		Proxy: nil, // the gateway is part of the drill environment, never behind a proxy
		// Raw reads and writes (internal/rawsock): a charge is a write and
		// a read, and made the ordinary way each wakes the Go scheduler.
		DialContext: rawsock.Dialer(&net.Dialer{
			Timeout:   5 * time.Second,
			KeepAlive: 30 * time.Second,
		}),
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   256,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

// Charge asks for a charge and returns it as recorded, for a new key (201) or
// a key already charged (200). The caller checks its Status: a decline is not
// an error. A 409 answer gives an error wrapping ErrKeyConflict, another
// client error one wrapping ErrRejected; any other error may be retried with
// the same key.
func (c *Client) Charge(ctx context.Context, req ChargeRequest) (Charge, error) {
	var ch Charge
	if err := c.do(ctx, http.MethodPost, "/charges", req, &ch, http.StatusOK, http.StatusCreated); err != nil {
		return Charge{}, fmt.Errorf("charge payment %q: %w", req.Key, err)
	}
	return ch, nil
}

// Void voids the charge with the given idempotency key, or, if none has been
// recorded yet, makes sure that one recorded later is voided, never approved.
// A declined charge stays declined.
func (c *Client) Void(ctx context.Context, key string) error {
	if err := c.do(ctx, http.MethodPost, "/charges/void", voidBody{Key: key}, nil, http.StatusOK); err != nil {
		return fmt.Errorf("void payment %q: %w", key, err)
	}
	return nil
}

// List returns every charge the gateway recorded, ordered by creation.
func (c *Client) List(ctx context.Context) ([]Charge, error) {
	var body listBody
	if err := c.do(ctx, http.MethodGet, "/charges", nil, &body, http.StatusOK); err != nil {
		return nil, fmt.Errorf("list charges: %w", err)
	}
	if body.Charges == nil {
		body.Charges = []Charge{}
	}
	return body.Charges, nil
}

// do sends in (if not nil) as JSON and, when the answer has one of the ok
// statuses, decodes its body into out (if not nil).
func (c *Client) do(ctx context.Context, method, path string, in, out any, ok ...int) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encode request: %w", err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.baseURL+path, body)
	if err != nil {
		return fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return redact.Error(err) // a *url.Error: names the method and URL, wraps ctx errors
	}
	defer func() {
		// Drain a little so that the connection can be reused.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBytes))
		_ = resp.Body.Close()
	}()
	for _, code := range ok {
		if resp.StatusCode != code {
			continue
		}
		if out == nil {
			return nil
		}
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			return fmt.Errorf("decode answer: %w", err)
		}
		return nil
	}
	return readStatusError(resp)
}

// readStatusError builds the error for an answer with an unexpected status.
func readStatusError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBytes)) // best effort
	var eb errorBody
	msg := strings.TrimSpace(string(b))
	if json.Unmarshal(b, &eb) == nil && eb.Error != "" {
		msg = eb.Error
	} else if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	return &StatusError{StatusCode: resp.StatusCode, Message: msg, Location: resp.Header.Get("Location"),
		RetryAfter: parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())}
}
