package relay

import (
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/Shopify/toxiproxy/v2/toxics"
)

// The HTTP toxics' type names in Toxiproxy's API. They act on the requests
// of connections that speak HTTP/1.x (the relay reads each request and
// answer whole, keep-alive and pipelining included); a connection that
// does not is passed through, and counted (hits.not_http).
const (
	HTTPErrorType        = "http_error"
	HTTPLostResponseType = "http_lost_response"
	HTTPLatencyType      = "http_latency"
	HTTPMalformedType    = "http_malformed"
)

// HTTPMatch is which HTTP requests a toxic matches: Method, a regular
// expression matched against the whole method ("POST", "PUT|PATCH"); Path,
// one searched for in the request target (path and query:
// "^/v1/charges"); Header, "Name: expression", one of the request's values
// of that header matching the expression ("Idempotency-Key: ."). Empty
// matches every request.
type HTTPMatch struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	Header string `json:"header"`
}

var httpMatchAttributes = []string{"method", "path", "header"}

func (m *HTTPMatch) check(kind string) error {
	if _, err := regexp.Compile("^(?:" + m.Method + ")$"); err != nil {
		return fmt.Errorf("%s: method: %v", kind, err)
	}
	if _, err := regexp.Compile(m.Path); err != nil {
		return fmt.Errorf("%s: path: %v", kind, err)
	}
	if m.Header != "" {
		name, value, ok := strings.Cut(m.Header, ":")
		if !ok || strings.TrimSpace(name) == "" {
			return fmt.Errorf("%s: header: %q is not \"Name: expression\"", kind, m.Header)
		}
		if _, err := regexp.Compile(strings.TrimSpace(value)); err != nil {
			return fmt.Errorf("%s: header: %v", kind, err)
		}
	}
	return nil
}

// HTTPError answers the requests it picks itself, without forwarding them:
// Status (400 to 599), with Retry-After when RetryAfter is given (seconds,
// or an HTTP date, as written), and Body (of ContentType: by default JSON
// when the body looks like JSON, else plain text). The upstream never
// sees the request.
type HTTPError struct {
	HTTPMatch
	Status      int    `json:"status"`
	RetryAfter  string `json:"retry_after"`
	Body        string `json:"body"`
	ContentType string `json:"content_type"`
	Pick
}

func (t *HTTPError) Pipe(stub *toxics.ToxicStub) { passThrough(stub) }
func (t *HTTPError) pick() *Pick                 { return &t.Pick }

func (t *HTTPError) check() error {
	if t.Status < 400 || t.Status > 599 {
		return fmt.Errorf("%s: status: %d is not an error status (400 to 599)", HTTPErrorType, t.Status)
	}
	if strings.ContainsAny(t.RetryAfter, "\r\n") || strings.ContainsAny(t.ContentType, "\r\n") {
		return fmt.Errorf("%s: retry_after and content_type are one line each", HTTPErrorType)
	}
	if err := t.HTTPMatch.check(HTTPErrorType); err != nil {
		return err
	}
	return t.Pick.check(HTTPErrorType)
}

// synthetic is an answer the relay gives itself.
type synthetic struct {
	status             int
	retryAfter, ctype  string
	body               []byte
	closeAfterResponse bool
}

func (t *HTTPError) synthetic() *synthetic {
	ct := t.ContentType
	if ct == "" {
		ct = "text/plain; charset=utf-8"
		if b := strings.TrimSpace(t.Body); strings.HasPrefix(b, "{") || strings.HasPrefix(b, "[") {
			ct = "application/json"
		}
	}
	return &synthetic{status: t.Status, retryAfter: t.RetryAfter, ctype: ct, body: []byte(t.Body)}
}

// bytes is the answer as sent, to a request of method; closing says the
// connection ends after it.
func (s *synthetic) bytes(fault, method string, closing bool) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\n", s.status, http.StatusText(s.status))
	if s.retryAfter != "" {
		fmt.Fprintf(&b, "Retry-After: %s\r\n", s.retryAfter)
	}
	fmt.Fprintf(&b, "Content-Type: %s\r\nContent-Length: %s\r\nX-Gameday-Toxic: %s\r\n", s.ctype, strconv.Itoa(len(s.body)), fault)
	if closing {
		b.WriteString("Connection: close\r\n")
	}
	b.WriteString("\r\n")
	if method != http.MethodHead {
		b.Write(s.body)
	}
	return []byte(b.String())
}

// HTTPLostResponse forwards the requests it picks, waits for the
// upstream's whole answer, and discards it; then it resets the client's
// connection (then: reset, the default), holds it silent until the client
// gives up (hang), or answers 502 Bad Gateway and goes on (502).
type HTTPLostResponse struct {
	HTTPMatch
	Then string `json:"then"`
	Pick
}

func (t *HTTPLostResponse) Pipe(stub *toxics.ToxicStub) { passThrough(stub) }
func (t *HTTPLostResponse) pick() *Pick                 { return &t.Pick }

func (t *HTTPLostResponse) check() error {
	switch t.Then {
	case "", "reset", "hang", "502":
	default:
		return fmt.Errorf("%s: then: %q is none of reset, hang and 502", HTTPLostResponseType, t.Then)
	}
	if err := t.HTTPMatch.check(HTTPLostResponseType); err != nil {
		return err
	}
	return t.Pick.check(HTTPLostResponseType)
}

// HTTPLatency delays the upstream's answer to the requests it picks by
// Latency ± Jitter milliseconds; other requests, on the same connection
// too, are not delayed beyond waiting their turn (HTTP/1.1 answers in
// order).
type HTTPLatency struct {
	HTTPMatch
	Latency int64 `json:"latency"`
	Jitter  int64 `json:"jitter"`
	Pick
}

func (t *HTTPLatency) Pipe(stub *toxics.ToxicStub) { passThrough(stub) }
func (t *HTTPLatency) pick() *Pick                 { return &t.Pick }

func (t *HTTPLatency) check() error {
	if t.Latency < 0 || t.Jitter < 0 {
		return fmt.Errorf("%s: latency and jitter are milliseconds, not negative", HTTPLatencyType)
	}
	if t.Jitter > t.Latency {
		return fmt.Errorf("%s: jitter: %d is more than latency (%d)", HTTPLatencyType, t.Jitter, t.Latency)
	}
	if err := t.HTTPMatch.check(HTTPLatencyType); err != nil {
		return err
	}
	return t.Pick.check(HTTPLatencyType)
}

// HTTPMalformed spoils the upstream's answer to the requests it picks
// (the upstream did the work): truncate sends the head and half the body,
// then closes; wrong_length declares a Content-Length longer than the
// body it sends, then closes; cut_json sends half the body with a
// Content-Length that says so, a well-framed answer whose JSON is cut
// short, and goes on.
type HTTPMalformed struct {
	HTTPMatch
	How string `json:"how"`
	Pick
}

func (t *HTTPMalformed) Pipe(stub *toxics.ToxicStub) { passThrough(stub) }
func (t *HTTPMalformed) pick() *Pick                 { return &t.Pick }

func (t *HTTPMalformed) check() error {
	switch t.How {
	case "", "truncate", "wrong_length", "cut_json":
	default:
		return fmt.Errorf("%s: how: %q is none of truncate, wrong_length and cut_json", HTTPMalformedType, t.How)
	}
	if err := t.HTTPMatch.check(HTTPMalformedType); err != nil {
		return err
	}
	return t.Pick.check(HTTPMalformedType)
}
