package load_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/load"

	"github.com/gameday-dev/gameday/internal/loopback"
)

// countingServer counts the connections its clients opened.
func countingServer(t *testing.T, h http.HandlerFunc, idle ...time.Duration) (*httptest.Server, *atomic.Int64) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(h)
	if len(idle) > 0 {
		srv.Config.IdleTimeout = idle[0]
	}
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &conns
}

func post(t *testing.T, c *http.Client, ctx context.Context, url, body string) (int, string, http.Header, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header, err
}

// TestClientKeepsItsConnection: answers of every framing (a length,
// chunks, nothing) are read whole, the request arrives as sent, and one
// shopper asking again and again uses one connection.
func TestClientKeepsItsConnection(t *testing.T) {
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Seen", r.Method+" "+r.URL.RequestURI()+" "+r.Header.Get("Content-Type")+" "+r.Host)
		switch r.URL.Path {
		case "/chunked":
			w.WriteHeader(http.StatusAccepted)
			for i := range 3 {
				fmt.Fprintf(w, "part%d;", i)
				w.(http.Flusher).Flush()
			}
		case "/empty":
			w.WriteHeader(http.StatusNoContent)
		default:
			w.WriteHeader(http.StatusCreated)
			w.Write(b)
		}
	})
	c := load.NewClient()
	defer c.CloseIdleConnections()
	for i := range 50 {
		code, body, h, err := post(t, c, context.Background(), srv.URL+"/buy?n=1", fmt.Sprintf(`{"i":%d}`, i))
		if err != nil || code != http.StatusCreated || body != fmt.Sprintf(`{"i":%d}`, i) {
			t.Fatalf("request %d: %d %q %v", i, code, body, err)
		}
		if want := "POST /buy?n=1 application/json " + strings.TrimPrefix(srv.URL, "http://"); h.Get("X-Seen") != want {
			t.Fatalf("the server saw %q, want %q", h.Get("X-Seen"), want)
		}
	}
	code, body, _, err := post(t, c, context.Background(), srv.URL+"/chunked", "")
	if err != nil || code != http.StatusAccepted || body != "part0;part1;part2;" {
		t.Fatalf("chunked: %d %q %v", code, body, err)
	}
	code, body, _, err = post(t, c, context.Background(), srv.URL+"/empty", "x")
	if err != nil || code != http.StatusNoContent || body != "" {
		t.Fatalf("empty: %d %q %v", code, body, err)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections for 52 requests one after another, want 1", n)
	}
}

// TestClientDropsAConnectionTheServerClosed: a server that closes idle
// connections (its idle timeout) never makes a shopper's request fail.
func TestClientDropsAConnectionTheServerClosed(t *testing.T) {
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }, 50*time.Millisecond)
	c := load.NewClient()
	defer c.CloseIdleConnections()
	for i := range 5 {
		if _, body, _, err := post(t, c, context.Background(), srv.URL, "x"); err != nil || body != "ok" {
			t.Fatalf("request %d: %q %v", i, body, err)
		}
		time.Sleep(150 * time.Millisecond) // the server closes the idle connection
	}
	if n := conns.Load(); n != 5 {
		t.Errorf("%d connections, want 5 (each closed by the server while idle)", n)
	}
}

// TestClientHonoursTheDeadline: a shopper's deadline ends its request
// whether the server is slow to answer or slow to finish the body, and
// the connection is not reused.
func TestClientHonoursTheDeadline(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/half" {
			w.Header().Set("Content-Length", "10")
			io.WriteString(w, "12345")
			w.(http.Flusher).Flush()
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	c := load.NewClient()
	defer c.CloseIdleConnections()
	for _, path := range []string{"/slow", "/half"} {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		began := time.Now()
		_, _, _, err := post(t, c, ctx, srv.URL+path, "x")
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: %v, want the deadline", path, err)
		}
		if took := time.Since(began); took > 2*time.Second {
			t.Errorf("%s: returned after %s, the deadline was 200ms", path, took)
		}
	}
	// Cancelled (the run aborted), not timed out.
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	if _, _, _, err := post(t, c, ctx, srv.URL+"/slow", "x"); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if n := conns.Load(); n != 3 {
		t.Errorf("%d connections for 3 requests cut short, want 3: none reused", n)
	}
}

// TestClientClosesWhatTheServerCloses: "Connection: close" ends the
// connection; a body left mostly unread ends it too.
func TestClientClosesWhatTheServerCloses(t *testing.T) {
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/close" {
			w.Header().Set("Connection", "close")
		}
		if r.URL.Path == "/big" {
			io.WriteString(w, strings.Repeat("x", 64<<10))
			return
		}
		io.WriteString(w, "ok")
	})
	c := load.NewClient()
	defer c.CloseIdleConnections()
	for _, path := range []string{"/close", "/ok", "/ok"} {
		if _, body, _, err := post(t, c, context.Background(), srv.URL+path, "x"); err != nil || body != "ok" {
			t.Fatalf("%s: %q %v", path, body, err)
		}
	}
	resp, err := c.Post(srv.URL+"/big", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close() // 64 KiB unread
	if _, body, _, err := post(t, c, context.Background(), srv.URL+"/ok", "x"); err != nil || body != "ok" {
		t.Fatalf("after a big body left unread: %q %v", body, err)
	}
	if n := conns.Load(); n != 3 {
		t.Errorf("%d connections, want 3 (one closed by the server, one closed with a body unread, one kept)", n)
	}
}

// TestClientRefusesABrokenHeader: a value that would start a header of its
// own (a system file's template filled with a shopper's data) is refused,
// not sent.
func TestClientRefusesABrokenHeader(t *testing.T) {
	var got atomic.Int64
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) { got.Add(1) })
	req, _ := http.NewRequest(http.MethodPost, srv.URL, nil)
	req.Header["X-Session"] = []string{"abc\r\nX-Admin: yes"}
	if _, err := load.NewClient().Do(req); err == nil || !strings.Contains(err.Error(), "control character") {
		t.Fatalf("%v, want refused", err)
	}
	if got.Load() != 0 {
		t.Error("the server got it")
	}
}

// TestClientSpeaksToARawServer: the request on the wire is plain HTTP/1.1
// with its length, and a 100 Continue before the answer is skipped.
func TestClientSpeaksToARawServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	seen := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		r := bufio.NewReader(c)
		var head strings.Builder
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			head.WriteString(line)
			if line == "\r\n" {
				break
			}
		}
		body := make([]byte, 4)
		io.ReadFull(r, body)
		seen <- head.String() + string(body)
		io.WriteString(c, "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi")
	}()
	// The transport writes the framing itself: a request's own Host and
	// Content-Length (a system file may name any header) are not sent.
	r, _ := http.NewRequest(http.MethodPost, "http://"+ln.Addr().String()+"/p", strings.NewReader("abcd"))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Host", "elsewhere.example")
	r.Header.Set("Content-Length", "99")
	resp, err := load.NewClient().Do(r)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if code, body := resp.StatusCode, string(b); code != 200 || body != "hi" {
		t.Fatalf("%d %q", code, body)
	}
	req := <-seen
	if strings.Count(req, "Host:") != 1 || strings.Count(req, "Content-Length:") != 1 {
		t.Errorf("the request %q: want one Host and one Content-Length", req)
	}
	for _, want := range []string{"POST /p HTTP/1.1\r\n", "Host: " + ln.Addr().String() + "\r\n", "Content-Length: 4\r\n", "Content-Type: application/json\r\n", "\r\n\r\nabcd"} {
		if !strings.Contains(req, want) {
			t.Errorf("the request %q lacks %q", req, want)
		}
	}
}

// TestClientClosingATrickleDoesNotWait: a shopper that stops reading an
// answer whose body is still coming does not wait for the rest.
func TestClientClosingATrickleDoesNotWait(t *testing.T) {
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100000")
		for i := 0; i < 30 && r.Context().Err() == nil; i++ {
			w.Write(make([]byte, 1000))
			w.(http.Flusher).Flush()
			time.Sleep(100 * time.Millisecond)
		}
	})
	resp, err := load.NewClient().Post(srv.URL, "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	resp.Body.Close()
	if took := time.Since(began); took > 500*time.Millisecond {
		t.Errorf("closing took %s", took)
	}
}

// rawServer answers each connection it accepts with script(i, conn), i
// counting connections from 0, after reading the request's head and its
// body of Content-Length bytes.
func rawServer(t *testing.T, script func(i int, c net.Conn)) string {
	t.Helper()
	return "http://" + loopback.Serve(t, func(i int, c net.Conn) {
		r := bufio.NewReader(c)
		for {
			n := 0
			for {
				line, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
					fmt.Sscan(v, &n)
				}
				if line == "\r\n" {
					break
				}
			}
			if _, err := io.CopyN(io.Discard, r, int64(n)); err != nil {
				return
			}
			script(i, c)
		}
	})
}

// TestClientReadsWhatTheAnswerSays: an answer that comes in pieces is read
// whole; a connection closed before any answer is an unexpected end, at
// once; a connection that sent more than its answer is not used again.
func TestClientReadsWhatTheAnswerSays(t *testing.T) {
	c := load.NewClient()
	defer c.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	pieces := rawServer(t, func(_ int, c net.Conn) {
		for _, p := range []string{"HTTP/1.1 200 OK\r\n", "Content-Length: 11\r\n\r\nhello", " world"} {
			io.WriteString(c, p)
			time.Sleep(20 * time.Millisecond)
		}
	})
	for i := range 2 {
		if code, body, _, err := post(t, c, ctx, pieces, "{}"); err != nil || code != 200 || body != "hello world" {
			t.Fatalf("in pieces, request %d: %d %q %v", i, code, body, err)
		}
	}

	closes := rawServer(t, func(_ int, c net.Conn) { c.Close() })
	if _, _, _, err := post(t, c, ctx, closes, "{}"); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("closed before an answer: %v, want an unexpected EOF", err)
	}

	var conns atomic.Int64
	extra := rawServer(t, func(i int, c net.Conn) {
		conns.Store(int64(i + 1))
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokJUNK")
	})
	for i := range 2 {
		if code, body, _, err := post(t, c, ctx, extra, "{}"); err != nil || code != 200 || body != "ok" {
			t.Fatalf("more than the answer, request %d: %d %q %v", i, code, body, err)
		}
	}
	if n := conns.Load(); n != 2 {
		t.Fatalf("%d connections for two requests; the one with bytes left over was used again", n)
	}
}

// TestClientWritesABodyLargerThanTheSocket: a request too large for the
// socket's buffers is written in parts, the client waiting for the server
// to read between them, and arrives whole; one to a server that never
// reads ends at the request's deadline, not later.
func TestClientWritesABodyLargerThanTheSocket(t *testing.T) {
	body := strings.Repeat("0123456789abcdef", 1<<20) // 16 MiB
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		// Late to read: the socket's buffers fill and the client waits.
		time.Sleep(200 * time.Millisecond)
		var n int
		buf := make([]byte, 64<<10)
		for {
			k, err := r.Body.Read(buf)
			if k > 0 && string(buf[:k]) != body[n:n+k] {
				http.Error(w, fmt.Sprintf("byte %d differs", n), http.StatusBadRequest)
				return
			}
			n += k
			if err != nil {
				break
			}
		}
		fmt.Fprint(w, n)
	})
	c := load.NewClient()
	defer c.CloseIdleConnections()
	code, got, _, err := post(t, c, context.Background(), srv.URL+"/", body)
	if err != nil || code != http.StatusOK || got != fmt.Sprint(len(body)) {
		t.Fatalf("got %d %q, %v; want 200 and %d bytes read", code, got, err, len(body))
	}

	// A server that accepts and never reads.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	held := make(chan net.Conn, 1)
	go func() {
		if conn, err := ln.Accept(); err == nil {
			held <- conn
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	began := time.Now()
	_, _, _, err = post(t, c, ctx, "http://"+ln.Addr().String()+"/", body)
	took := time.Since(began)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a write that cannot go on: %v, want the deadline", err)
	}
	if took > 5*time.Second {
		t.Errorf("the write went on %v past a 300 ms deadline", took)
	}
	select {
	case conn := <-held:
		conn.Close()
	case <-time.After(time.Second): // never accepted: nothing to close
	}
}
