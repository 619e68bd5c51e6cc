package toxi_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/toxi"
	"github.com/gameday-dev/gameday/internal/testenv"
)

// orders is an HTTP upstream that records the body of every request it
// served; started is told each time a request's head has reached it, before
// its body is read.
type orders struct {
	srv     *httptest.Server
	started chan struct{}
	mu      sync.Mutex
	bodies  []string
}

func newOrders(t *testing.T) *orders {
	t.Helper()
	o := &orders{started: make(chan struct{}, 16)}
	o.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case o.started <- struct{}{}:
		default:
		}
		body, _ := io.ReadAll(r.Body)
		o.mu.Lock()
		o.bodies = append(o.bodies, string(body))
		o.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"order":"placed"}`)
	}))
	t.Cleanup(o.srv.Close)
	return o
}

func (o *orders) served() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.bodies...)
}

// headIn waits until a request's head has reached the upstream.
func (o *orders) headIn(t *testing.T) {
	t.Helper()
	select {
	case <-o.started:
	case <-time.After(5 * time.Second):
		t.Fatal("the request's head never reached the upstream")
	}
}

// orderBody is a JSON body of exactly size bytes whose last field is sku:
// what a drill aims at sits at its very end.
func orderBody(size int, sku string) string {
	tail := fmt.Sprintf(`","sku":%q}`, sku)
	return `{"note":"` + strings.Repeat("x", size-len(`{"note":"`)-len(tail)) + tail
}

// rawPost sends a POST with a Content-Length over a plain connection, as
// writes says: the head and body in one write, or the body written once the
// head has reached the upstream (as Python's http.client writes a body of
// 2,000 bytes or more: a moment later). It reports whether an answer came.
func rawPost(t *testing.T, o *orders, addr, body string, split bool) bool {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	head := fmt.Sprintf("POST /orders HTTP/1.1\r\nHost: shop\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(body))
	if !split {
		head += body
	}
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	if split {
		o.headIn(t)
		if _, err := io.WriteString(conn, body); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return true
}

// clientPost sends a POST with Go's net/http client: chunked (a body of
// unknown length, its end written once the head has reached the upstream),
// or with Expect: 100-continue (the body sent once the upstream says so).
func clientPost(t *testing.T, o *orders, addr, body string, chunked bool) bool {
	t.Helper()
	tr := &http.Transport{ExpectContinueTimeout: 10 * time.Second}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	var rd io.Reader = strings.NewReader(body)
	if chunked {
		pr, pw := io.Pipe()
		go func() {
			half := len(body) / 2
			io.WriteString(pw, body[:half])
			select {
			case <-o.started:
			case <-time.After(5 * time.Second):
			}
			io.WriteString(pw, body[half:])
			pw.Close()
		}()
		rd = struct{ io.Reader }{pr} // no length: sent chunked
	}
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/orders", rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if !chunked {
		req.Header.Set("Expect", "100-continue")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return true
}

// lost_reply's match, on an HTTP connection, sees the whole request up to
// its first 64 KiB however the client writes it: a Content-Length body in
// the head's write or in a later one, a chunked body, a body sent after
// 100 Continue. The request aimed at reaches the upstream whole and its
// answer is lost; the same request without the field aimed at, or with it
// beyond the first 64 KiB, is answered.
func TestLostReplyMatchesTheWholeHTTPRequest(t *testing.T) {
	c := testenv.Toxiproxy(t)
	for i, tc := range []struct {
		name string
		post func(t *testing.T, o *orders, addr, body string) bool
	}{
		{"content-length in one write", func(t *testing.T, o *orders, addr, body string) bool { return rawPost(t, o, addr, body, false) }},
		{"content-length, head and body in two writes", func(t *testing.T, o *orders, addr, body string) bool { return rawPost(t, o, addr, body, true) }},
		{"chunked", func(t *testing.T, o *orders, addr, body string) bool { return clientPost(t, o, addr, body, true) }},
		{"expect 100-continue", func(t *testing.T, o *orders, addr, body string) bool { return clientPost(t, o, addr, body, false) }},
	} {
		for _, size := range []int{3_000, 60_000} {
			t.Run(fmt.Sprintf("%s, %d bytes", tc.name, size), func(t *testing.T) {
				o := newOrders(t)
				proxy := fmt.Sprintf("orders-%d-%d", i, size)
				addr := relayedProxy(t, c, proxy, o.srv.Listener.Addr().String())
				testenv.AddToxic(t, c, proxy, toxi.Toxic{Name: "lost", Type: "lost_reply", Attributes: map[string]any{"match": `"sku":"LAST-UNIT"\}`}})
				if !tc.post(t, o, addr, orderBody(size, "OTHER")) {
					t.Fatal("a request the toxic does not match was not answered")
				}
				aimed := orderBody(size, "LAST-UNIT")
				if tc.post(t, o, addr, aimed) {
					t.Error("the request aimed at was answered: its answer was not lost")
				}
				if got := o.served(); len(got) != 2 || got[1] != aimed {
					t.Errorf("the upstream served %d requests (the last %d bytes): want both, the aimed one whole", len(got), len(got[len(got)-1]))
				}
				if matched, lost, _ := lostHits(t, c, proxy, "lost"); matched != 1 || lost != 1 {
					t.Errorf("hits: %v matched, %v lost; want 1 and 1", matched, lost)
				}
			})
		}
	}
	t.Run("beyond the first 64 KiB", func(t *testing.T) {
		o := newOrders(t)
		addr := relayedProxy(t, c, "orders-far", o.srv.Listener.Addr().String())
		testenv.AddToxic(t, c, "orders-far", toxi.Toxic{Name: "lost", Type: "lost_reply", Attributes: map[string]any{"match": `"sku":"LAST-UNIT"\}`}})
		if !rawPost(t, o, addr, orderBody(70_000, "LAST-UNIT"), false) {
			t.Error("a request whose matching bytes lie beyond its first 64 KiB lost its answer")
		}
		if matched, lost, _ := lostHits(t, c, "orders-far", "lost"); matched != 0 || lost != 0 {
			t.Errorf("hits: %v matched, %v lost; want none", matched, lost)
		}
	})
}
