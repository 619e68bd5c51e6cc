package relay

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/internal/loopback"
)

// provider is an HTTP upstream that records every request it served, and
// how many connections it accepted.
type provider struct {
	srv   *httptest.Server
	mu    sync.Mutex
	done  []string
	conns atomic.Int64
}

func newProvider(t *testing.T, h http.HandlerFunc) *provider {
	return newProviderIdle(t, h, 0)
}

// newProviderIdle is newProvider, closing connections idle for idle.
func newProviderIdle(t *testing.T, h http.HandlerFunc, idle time.Duration) *provider {
	t.Helper()
	p := &provider{}
	p.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		p.mu.Lock()
		p.done = append(p.done, r.Method+" "+r.URL.Path+" "+string(body))
		p.mu.Unlock()
		if h != nil {
			h(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"ch_%d","path":%q}`, len(p.record()), r.URL.Path)
	}))
	p.srv.Config.IdleTimeout = idle
	p.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			p.conns.Add(1)
		}
	}
	p.srv.Start()
	t.Cleanup(p.srv.Close)
	return p
}

func (p *provider) addr() string { return p.srv.Listener.Addr().String() }

func (p *provider) record() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.done...)
}

// httpClient talks to the relay with keep-alive, one connection at most,
// and no retries of its own beyond what net/http does.
func httpClient(t *testing.T) *http.Client {
	tr := &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1, DisableCompression: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// post sends a POST and returns the status and body, or the error.
func post(c *http.Client, url, body string) (int, string, error) {
	resp, err := c.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// http_error answers the requests it picks itself — the upstream never
// sees them — with the status, Retry-After and body it was given, on the
// same keep-alive connection as the requests it lets through; requests
// it does not match are untouched.
func TestHTTPErrorAnswersInsteadOfTheUpstream(t *testing.T) {
	pr := newProvider(t, nil)
	f := fault(t, 1, &HTTPError{HTTPMatch: HTTPMatch{Method: "POST", Path: "^/v1/charges"}, Status: 429, RetryAfter: "2", Body: `{"error":"rate_limited"}`, Pick: Pick{Every: 2}})
	r := startRelay(t, pr.addr(), f)
	c := httpClient(t)
	var got []string
	for i := range 6 {
		code, body, err := post(c, "http://"+r.Addr()+"/v1/charges", fmt.Sprintf(`{"order":%d}`, i))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprint(code))
		if code == 429 && body != `{"error":"rate_limited"}` {
			t.Errorf("429 body %q", body)
		}
	}
	if code, _, err := post(c, "http://"+r.Addr()+"/v1/refunds", `{}`); err != nil || code != 200 {
		t.Errorf("a refund the toxic does not match: %d, %v", code, err)
	}
	if s := strings.Join(got, " "); s != "200 429 200 429 200 429" {
		t.Errorf("answers %s, want every second charge answered 429", s)
	}
	if rec := pr.record(); len(rec) != 4 || rec[1] != `POST /v1/charges {"order":2}` {
		t.Errorf("the upstream served %q: want the charges let through and the refund only", rec)
	}
	if n := pr.conns.Load(); n != 1 {
		t.Errorf("the upstream saw %d connections, want the one kept alive", n)
	}
	resp, err := c.Post("http://"+r.Addr()+"/v1/charges", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == 429 && (resp.Header.Get("Retry-After") != "2" || resp.Header.Get("Content-Type") != "application/json") {
		t.Errorf("429 headers %v", resp.Header)
	}
	if matched, hit, _, first := f.pick.Hits.Counts(); matched != 7 || hit != 3 || first[0] != "POST /v1/charges HTTP/1.1" {
		t.Errorf("hits: matched %d, hit %d, first %q", matched, hit, first)
	}
}

// http_lost_response lets the request through and loses the answer: the
// charge is made, and the client is reset (then: reset), or told 502 on a
// connection that goes on (then: 502). (The requests carry X-Order, not
// Idempotency-Key: net/http sends a POST with an idempotency key again
// when its connection breaks, which is what a client with keys should do,
// and what this test does not look at.)
func TestHTTPLostResponseAfterTheChargeWasMade(t *testing.T) {
	pr := newProvider(t, nil)
	reset := fault(t, 1, &HTTPLostResponse{HTTPMatch: HTTPMatch{Path: "^/v1/charges$", Header: "X-Order: ^k1$"}})
	r := startRelay(t, pr.addr(), reset)
	c := httpClient(t)
	send := func(key string) (int, error) {
		req, _ := http.NewRequest(http.MethodPost, "http://"+r.Addr()+"/v1/charges", strings.NewReader(`{"amount":5}`))
		req.Header.Set("X-Order", key)
		resp, err := c.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		_, err = io.ReadAll(resp.Body)
		return resp.StatusCode, err
	}
	if code, err := send("k0"); err != nil || code != 200 {
		t.Fatalf("a charge the toxic does not match: %d, %v", code, err)
	}
	if code, err := send("k1"); err == nil {
		t.Fatalf("the charge whose answer was lost answered %d", code)
	} else if ue := (*url.Error)(nil); errors.As(err, &ue) && ue.Timeout() {
		t.Fatalf("then: reset held the connection until the client gave up: %v", err)
	}
	if rec := pr.record(); len(rec) != 2 {
		t.Fatalf("the upstream served %q: want both charges made", rec)
	}
	r.SetFaults([]*Fault{namedFault(t, "bad", 1, &HTTPLostResponse{HTTPMatch: HTTPMatch{Header: "X-Order: ^k2$"}, Then: "502"})})
	if code, err := send("k2"); err != nil || code != http.StatusBadGateway {
		t.Fatalf("then 502: %d, %v", code, err)
	}
	if code, err := send("k3"); err != nil || code != 200 {
		t.Fatalf("after a 502 the connection goes on: %d, %v", code, err)
	}
	if rec := pr.record(); len(rec) != 4 {
		t.Errorf("the upstream served %q: want every charge made", rec)
	}
}

// http_latency delays only the answers it picks: a slow charge does not
// slow a refund on another connection.
func TestHTTPLatencyDelaysOnlyWhatItMatches(t *testing.T) {
	pr := newProvider(t, nil)
	f := fault(t, 1, &HTTPLatency{HTTPMatch: HTTPMatch{Path: "^/v1/charges"}, Latency: 1500})
	r := startRelay(t, pr.addr(), f)
	slow := make(chan time.Time, 1)
	go func() {
		c := httpClient(t)
		post(c, "http://"+r.Addr()+"/v1/charges", `{}`)
		slow <- time.Now()
	}()
	start := time.Now()
	for len(pr.record()) == 0 && time.Since(start) < 5*time.Second {
		time.Sleep(5 * time.Millisecond)
	}
	if code, _, err := post(httpClient(t), "http://"+r.Addr()+"/v1/refunds", `{}`); err != nil || code != 200 {
		t.Fatalf("refund: %d, %v", code, err)
	}
	select {
	case <-slow:
		t.Error("the delayed charge answered before the refund it does not delay")
	default:
	}
	// The charge's answer is being held: the fault has acted on it
	// already, so a fault lifted (its hits read) now says so, and a
	// drill whose fault is shorter than its latency is not taken for
	// one that did nothing. The upstream answered at once; the hold
	// begins as soon as the relay has the answer's head.
	var matched, hit int64
	for wait := time.Now(); time.Since(wait) < time.Second; time.Sleep(5 * time.Millisecond) {
		if matched, hit, _, _ = f.pick.Hits.Counts(); hit > 0 {
			break
		}
	}
	if matched != 1 || hit != 1 {
		t.Errorf("while the charge's answer is held: matched %d, hit %d; want 1 and 1", matched, hit)
	}
	select {
	case <-slow:
		t.Error("the delayed charge answered before its latency")
	default:
	}
	select {
	case s := <-slow:
		if s.Sub(start) < 1500*time.Millisecond {
			t.Errorf("the charge answered after %s, want at least its latency", s.Sub(start))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the delayed charge never answered")
	}
}

// http_malformed spoils the answer of work done: cut short mid-body with
// the connection closed (truncate), a Content-Length longer than what
// comes (wrong_length), or well framed with its JSON cut (cut_json, and
// the connection goes on).
func TestHTTPMalformedAnswers(t *testing.T) {
	pr := newProvider(t, nil)
	for _, how := range []string{"truncate", "wrong_length", "cut_json"} {
		t.Run(how, func(t *testing.T) {
			r := startRelay(t, pr.addr(), fault(t, 1, &HTTPMalformed{HTTPMatch: HTTPMatch{Path: "^/v1/charges"}, How: how, Pick: Pick{First: 1}}))
			c := httpClient(t)
			code, body, err := post(c, "http://"+r.Addr()+"/v1/charges", `{}`)
			switch how {
			case "cut_json":
				var v map[string]any
				if err != nil || code != 200 || json.Unmarshal([]byte(body), &v) == nil {
					t.Errorf("cut_json: %d %q %v: want 200 with JSON that does not parse", code, body, err)
				}
				if code, body, err := post(c, "http://"+r.Addr()+"/v1/charges", `{}`); err != nil || code != 200 || json.Unmarshal([]byte(body), &v) != nil {
					t.Errorf("the next answer on the connection: %d %q %v", code, body, err)
				}
			default:
				if !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Errorf("%s: %d %q %v: want the body cut short", how, code, body, err)
				}
			}
		})
	}
}

// Pipelined requests are answered in order, an answer the relay gives
// itself in its request's turn; HEAD, 204, 304, a chunked answer and a
// request that waits for 100 Continue are framed as HTTP frames them, and
// the connection goes on after each.
func TestHTTPFramingOnOneConnection(t *testing.T) {
	pr := newProvider(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/empty":
			w.WriteHeader(http.StatusNoContent)
		case "/same":
			w.WriteHeader(http.StatusNotModified)
		case "/chunked":
			w.Header().Set("Content-Type", "text/plain")
			for i := range 3 {
				fmt.Fprintf(w, "part %d\n", i)
				w.(http.Flusher).Flush()
			}
		default:
			w.Header().Set("Content-Length", "5")
			io.WriteString(w, "hello")
		}
	})
	r := startRelay(t, pr.addr(), fault(t, 1, &HTTPError{HTTPMatch: HTTPMatch{Path: "^/refused"}, Status: 503, Body: "busy"}))
	conn, err := net.DialTimeout("tcp", r.Addr(), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	reqs := "GET /a HTTP/1.1\r\nHost: x\r\n\r\n" +
		"POST /refused HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nbody" +
		"HEAD /b HTTP/1.1\r\nHost: x\r\n\r\n" +
		"GET /empty HTTP/1.1\r\nHost: x\r\n\r\n" +
		"GET /same HTTP/1.1\r\nHost: x\r\n\r\n" +
		"POST /chunked HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nwxyz\r\n0\r\n\r\n"
	if _, err := io.WriteString(conn, reqs); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	var got []string
	for _, method := range []string{"GET", "POST", "HEAD", "GET", "GET", "POST"} {
		resp, err := http.ReadResponse(br, &http.Request{Method: method})
		if err != nil {
			t.Fatalf("after %q: %v", got, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("after %q: %v", got, err)
		}
		got = append(got, fmt.Sprintf("%d %s", resp.StatusCode, b))
	}
	want := []string{"200 hello", "503 busy", "200 ", "204 ", "304 ", "200 part 0\npart 1\npart 2\n"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("answers %q, want %q", got, want)
	}
	if rec := pr.record(); len(rec) != 5 || rec[4] != "POST /chunked wxyz" {
		t.Errorf("the upstream served %q", rec)
	}
	// Expect: 100-continue: the 100 goes back at once, then the body.
	c := httpClient(t)
	c.Transport.(*http.Transport).ExpectContinueTimeout = 5 * time.Second
	req, _ := http.NewRequest(http.MethodPost, "http://"+r.Addr()+"/continue", strings.NewReader("later"))
	req.Header.Set("Expect", "100-continue")
	var continued atomic.Bool
	req = req.WithContext(httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{Got100Continue: func() { continued.Store(true) }}))
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || !continued.Load() {
		t.Errorf("100-continue: %d, continued %v", resp.StatusCode, continued.Load())
	}
}

// An upstream that closes an idle keep-alive connection closes the
// client's too: the client's next request goes on a new connection
// instead of one the relay would forward into a closed socket.
func TestHTTPIdleCloseReachesTheClient(t *testing.T) {
	pr := newProviderIdle(t, nil, 100*time.Millisecond)
	r := startRelay(t, pr.addr(), fault(t, 1, &HTTPLatency{HTTPMatch: HTTPMatch{Path: "^/never"}, Latency: 1}))
	c := httpClient(t)
	for i := range 3 {
		if code, _, err := post(c, "http://"+r.Addr()+"/v1/charges", `{}`); err != nil || code != 200 {
			t.Fatalf("charge %d: %d, %v", i, code, err)
		}
		time.Sleep(time.Second) // ten times the upstream's idle timeout
	}
	if n := pr.conns.Load(); n != 3 {
		t.Errorf("the upstream saw %d connections, want 3 (each closed idle)", n)
	}
}

// A connection that is not HTTP passes through an HTTP toxic untouched,
// and is counted.
func TestHTTPToxicLetsOtherProtocolsThrough(t *testing.T) {
	s := newLineServer(t)
	f := fault(t, 1, &HTTPError{Status: 500})
	r := startRelay(t, s.ln.Addr().String(), f)
	c := dial(t, r.Addr())
	for _, line := range []string{"CHARGE a", "CHARGE b"} {
		if ans, err := c.ask(line, 2*time.Second); err != nil || ans != "done "+line {
			t.Fatalf("ask %q: %q, %v", line, ans, err)
		}
	}
	if matched, hit, notHTTP, _ := f.pick.Hits.Counts(); matched != 0 || hit != 0 || notHTTP != 2 {
		t.Errorf("hits: matched %d, hit %d, not HTTP %d", matched, hit, notHTTP)
	}
}

// The HTTP toxics' attributes are checked, each error naming it.
func TestHTTPToxicAttributesAreChecked(t *testing.T) {
	for typ, cases := range map[string]map[string]string{
		HTTPErrorType: {
			`{"status":200}`:                     "status: 200 is not an error status",
			`{"status":503,"path":"("}`:          "path:",
			`{"status":503,"header":"NoColon"}`:  `header: "NoColon" is not "Name: expression"`,
			`{"status":503,"retry_after":"1\n"}`: "one line each",
			`{"status":503,"stauts":1}`:          `http_error has no attribute "stauts"`,
		},
		HTTPLostResponseType: {`{"then":"drop"}`: `then: "drop" is none of reset, hang and 502`},
		HTTPLatencyType:      {`{"latency":10,"jitter":20}`: "jitter: 20 is more than latency (10)"},
		HTTPMalformedType:    {`{"how":"garble"}`: `how: "garble" is none of truncate, wrong_length and cut_json`},
	} {
		for attrs, want := range cases {
			if err := Check(typ, json.RawMessage(attrs)); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s %s: %v, want %q", typ, attrs, err, want)
			}
		}
	}
	if err := Check(HTTPErrorType, json.RawMessage(`{"status":429,"retry_after":"2","method":"POST","path":"^/v1/charges","header":"Idempotency-Key: .","first":3}`)); err != nil {
		t.Errorf("a good http_error: %v", err)
	}
}

// closeWithin closes r and fails the test if that takes longer than d: a
// connection that never ends keeps Close waiting.
func closeWithin(t *testing.T, r *Relay, d time.Duration) {
	t.Helper()
	done := make(chan struct{})
	go func() { r.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("Close did not return within %s: a connection was stuck", d)
	}
}

// rawUpstream answers every request it reads (up to its blank line) with
// answer.
func rawUpstream(t *testing.T, answer string) string {
	t.Helper()
	return loopback.Serve(t, func(_ int, c net.Conn) {
		br := bufio.NewReader(c)
		for {
			if _, err := readHead(br); err != nil {
				return
			}
			if _, err := io.WriteString(c, answer); err != nil {
				return
			}
		}
	})
}

// The first request of a connection answered by the relay itself: the
// upstream never speaks, and the answer comes all the same.
func TestHTTPErrorOnTheFirstRequest(t *testing.T) {
	pr := newProvider(t, nil)
	f := fault(t, 1, &HTTPError{Status: 503, Body: "busy"})
	r := startRelay(t, pr.addr(), f)
	code, body, err := post(httpClient(t), "http://"+r.Addr()+"/v1/charges", `{}`)
	if err != nil || code != 503 || body != "busy" {
		t.Fatalf("the first request: %d %q %v, want the relay's 503", code, body, err)
	}
	if _, hit, _, _ := f.pick.Hits.Counts(); hit != 1 || len(pr.record()) != 0 {
		t.Errorf("hit %d, upstream served %q", hit, pr.record())
	}
}

// Requests pipelined far beyond the queue behind a delayed answer, and an
// upstream whose answers cannot be read as HTTP (the answers then go on
// raw, and so do the requests): nothing gets stuck, every request is
// answered, and Close ends every connection at once.
func TestHTTPNothingGetsStuck(t *testing.T) {
	pr := newProvider(t, nil)
	r, err := Listen(pr.addr())
	if err != nil {
		t.Fatal(err)
	}
	r.SetFaults([]*Fault{fault(t, 1, &HTTPLatency{HTTPMatch: HTTPMatch{Path: "^/slow"}, Latency: 10_000})})
	conn, err := net.DialTimeout("tcp", r.Addr(), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	reqs := "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n" + strings.Repeat("GET /x HTTP/1.1\r\nHost: x\r\n\r\n", 100)
	go io.WriteString(conn, reqs)
	deadline := time.Now().Add(5 * time.Second)
	for len(pr.record()) == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	closeWithin(t, r, 5*time.Second)

	odd := rawUpstream(t, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nNoColon\r\n\r\nok")
	r2 := startRelay(t, odd, fault(t, 1, &HTTPError{HTTPMatch: HTTPMatch{Path: "^/never"}, Status: 503}))
	c2, err := net.DialTimeout("tcp", r2.Addr(), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	buf := make([]byte, 256)
	for i := range 100 {
		c2.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.WriteString(c2, "GET /x HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		got := ""
		for !strings.HasSuffix(got, "ok") {
			n, err := c2.Read(buf)
			got += string(buf[:n])
			if err != nil {
				t.Fatalf("request %d: %v after %q", i, err, got)
			}
		}
	}
	closeWithin(t, r2, 5*time.Second)
}

// then: hang holds the connection silent though the client stops sending
// (half-closes), until the fault is removed; then it is cut.
func TestHTTPLostResponseHangsUntilTheFaultGoes(t *testing.T) {
	pr := newProvider(t, nil)
	f := fault(t, 1, &HTTPLostResponse{Then: "hang"})
	r := startRelay(t, pr.addr(), f)
	c, err := net.DialTimeout("tcp", r.Addr(), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	conn := c.(*net.TCPConn)
	defer conn.Close()
	io.WriteString(conn, "POST /v1/charges HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
	conn.CloseWrite()
	ended := make(chan error, 1)
	go func() {
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		b, err := io.ReadAll(conn)
		if err == nil && len(b) > 0 {
			err = fmt.Errorf("answered %q", b)
		}
		ended <- err
	}()
	select {
	case err := <-ended:
		t.Fatalf("a hung connection ended while its fault was in place: %v", err)
	case <-time.After(500 * time.Millisecond):
	}
	if rec := pr.record(); len(rec) != 1 {
		t.Fatalf("the upstream served %q, want the charge made", rec)
	}
	r.SetFaults(nil)
	select {
	case err := <-ended:
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Errorf("the held connection was not cut when its fault went: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the held connection was not cut when its fault went")
	}
}

// http_malformed acts only on an answer with a body to spoil: a HEAD, a
// 204 or an empty body goes on as it was, and is not counted as hit.
func TestHTTPMalformedSpoilsOnlyWhatHasABody(t *testing.T) {
	pr := newProvider(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/empty":
			w.WriteHeader(http.StatusNoContent)
		case "/zero":
			w.Header().Set("Content-Length", "0")
		default:
			w.Header().Set("Content-Length", "5")
			io.WriteString(w, "hello")
		}
	})
	f := fault(t, 1, &HTTPMalformed{How: "cut_json"})
	r := startRelay(t, pr.addr(), f)
	c := httpClient(t)
	for _, x := range []struct{ method, path, want string }{{"HEAD", "/x", ""}, {"GET", "/empty", ""}, {"GET", "/zero", ""}, {"GET", "/x", "he"}} {
		req, _ := http.NewRequest(x.method, "http://"+r.Addr()+x.path, nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", x.method, x.path, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || string(b) != x.want {
			t.Errorf("%s %s: %q %v, want %q", x.method, x.path, b, err, x.want)
		}
	}
	if matched, hit, _, _ := f.pick.Hits.Counts(); matched != 4 || hit != 1 {
		t.Errorf("matched %d, hit %d: want only the answer with a body counted", matched, hit)
	}
}

// A head line longer than the reader's buffer is one line: the fields
// after it (its framing) are read, not taken for the head's end.
func TestHTTPLongHeadLine(t *testing.T) {
	for _, n := range []int{32<<10 - 9, 32<<10 - 8, 32<<10 - 7, 32 << 10, 40 << 10} {
		in := "HTTP/1.1 200 OK\r\nX-Big: " + strings.Repeat("a", n) + "\r\nContent-Length: 2\r\n\r\nok"
		raw, err := readHead(bufio.NewReaderSize(strings.NewReader(in), 32<<10))
		if err != nil || len(raw) != len(in)-2 {
			t.Fatalf("a %d-byte field: head of %d bytes, %v; want %d", n, len(raw), err, len(in)-2)
		}
		if h, err := parseHead(raw, false); err != nil || h.length != 2 {
			t.Errorf("a %d-byte field: %+v, %v", n, h, err)
		}
	}
}

// lost_reply judges an HTTP request once it is whole, or when its answer
// begins if that comes first, with what of the request it had: an upstream
// that refuses a 100-continue request before its body (417) is judged on
// the head alone — a match in the body does not see it, while a
// lost_reply that matches every request loses that answer.
func TestLostReplyJudgesAnHTTPRequestWhenItsAnswerBegins(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusExpectationFailed) // the body never read
	}))
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		match   string
		lost    bool
		matched int64
	}{
		{`"sku":"LAST-UNIT"`, false, 0}, // in the body, which never came
		{``, true, 1},                   // every request
	} {
		t.Run(fmt.Sprintf("match %q", tc.match), func(t *testing.T) {
			f := fault(t, 1, &LostReply{Match: tc.match})
			r := startRelay(t, srv.Listener.Addr().String(), f)
			tr := &http.Transport{ExpectContinueTimeout: 10 * time.Second}
			t.Cleanup(tr.CloseIdleConnections)
			req, err := http.NewRequest(http.MethodPost, "http://"+r.Addr()+"/orders", strings.NewReader(`{"sku":"LAST-UNIT"}`))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Expect", "100-continue")
			resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Do(req)
			if err == nil {
				resp.Body.Close()
			}
			if lost := err != nil; lost != tc.lost || (!lost && resp.StatusCode != http.StatusExpectationFailed) {
				t.Errorf("answer %v, %v; want it lost: %v", resp, err, tc.lost)
			}
			if matched, hit, _, _ := f.pick.Hits.Counts(); matched != tc.matched || hit != matched {
				t.Errorf("hits: %d matched, %d hit", matched, hit)
			}
		})
	}
}
