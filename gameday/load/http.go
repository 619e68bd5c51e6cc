package load

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gameday-dev/gameday/checkout"
	"github.com/gameday-dev/gameday/checkout/admission"
)

// maxAnswer bounds the body read from one answer; the checkout's answers
// are a few hundred bytes.
const maxAnswer = 64 << 10

// HTTPTarget returns a Target that POSTs each attempt as JSON to
// baseURL+"/checkout" and decodes the answer.
//
// With hc nil it uses a client tuned for a load generator: keep-alives, no
// cap on idle connections per host (there are never more than shoppers in
// flight, which Plan.MaxShoppers bounds, so every shopper of the pool can
// keep its connection), small connection buffers (the checkout's requests
// and answers are well under 1 KiB, and each waiting shopper holds its
// connection's buffers: 3 KiB instead of net/http's default 8 KiB), no
// compression, no client-wide timeout (each attempt's context carries the
// shopper's deadline), a 5 s dial timeout, and idle connections closed
// after 5 s (after a surge, each idle connection keeps two net/http
// goroutines that every garbage collection scans, which makes arrivals
// late).
//
// The returned Target also has a CloseIdleConnections() method, for a runner
// that wants the connections gone when the sale is over.
func HTTPTarget(baseURL string, hc *http.Client) Target {
	if hc == nil {
		hc = &http.Client{Transport: newTransport()}
	}
	return &httpTarget{url: strings.TrimRight(baseURL, "/") + "/checkout", hc: hc}
}

func newTransport() *http.Transport {
	d := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	return &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         d.DialContext,
		MaxIdleConnsPerHost: PoolLimit,
		IdleConnTimeout:     5 * time.Second,
		TLSHandshakeTimeout: 5 * time.Second,
		DisableCompression:  true,
		WriteBufferSize:     1 << 10,
		ReadBufferSize:      2 << 10,
	}
}

type httpTarget struct {
	url string
	hc  *http.Client
}

var _ Target = (*httpTarget)(nil)

// buffers hold answers while they are decoded (the decoded strings are
// copies, so a buffer is free again once Checkout returns).
var buffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// Checkout sends one attempt, with req.Token in the Waiting-Room-Token
// header when there is one. Any answer, whatever its status, is returned
// with a nil error; a body that is not the checkout's JSON leaves
// Answer.Body zero.
func (h *httpTarget) Checkout(ctx context.Context, req checkout.Request) (Answer, error) {
	// The body is the request's own: the transport may still be reading it
	// after Do returns (an answer that came before the whole body went).
	body := appendRequest(make([]byte, 0, 256), req)
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(body))
	if err != nil {
		return Answer{}, fmt.Errorf("post checkout: %w", err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	if req.Token != "" {
		hreq.Header.Set(admission.TokenHeader, req.Token)
	}
	resp, err := h.hc.Do(hreq)
	if err != nil {
		return Answer{}, fmt.Errorf("post checkout: %w", err)
	}
	defer resp.Body.Close()
	buf := buffers.Get().(*bytes.Buffer)
	defer buffers.Put(buf)
	buf.Reset()
	if _, err := buf.ReadFrom(io.LimitReader(resp.Body, maxAnswer)); err != nil {
		return Answer{Code: resp.StatusCode}, fmt.Errorf("read checkout answer: %w", err)
	}
	ans := Answer{Code: resp.StatusCode}
	if json.Unmarshal(buf.Bytes(), &ans.Body) != nil {
		ans.Body = checkout.Response{}
	}
	ans.RetryAfter = retryAfter(ans.Body.RetryAfterMS, resp.Header.Get("Retry-After"), time.Now)
	// A token longer than any the checkout signs is not kept: the shopper
	// would hold it and send it back on every retry.
	if tok := resp.Header.Get(admission.TokenHeader); len(tok) <= admission.MaxTokenLen {
		ans.Token = tok
	}
	return ans, nil
}

// CloseIdleConnections closes the client's idle keep-alive connections.
func (h *httpTarget) CloseIdleConnections() { h.hc.CloseIdleConnections() }

// retryAfter prefers the body's retry_after_ms (the checkout's exact wait)
// over the header, which is whole seconds or an HTTP date.
func retryAfter(ms int64, header string, now func() time.Time) time.Duration {
	const most = 24 * time.Hour // no overflow from a silly header
	if ms > 0 {
		return time.Duration(min(ms, most.Milliseconds())) * time.Millisecond
	}
	if header == "" {
		return 0
	}
	if s, err := strconv.ParseInt(strings.TrimSpace(header), 10, 64); err == nil {
		return time.Duration(min(max(s, 0), int64(most/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(header); err == nil {
		return min(max(t.Sub(now()), 0), most)
	}
	return 0
}
