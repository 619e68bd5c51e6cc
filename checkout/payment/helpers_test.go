package payment

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// waitLong bounds every wait in these tests. It only fires when something is
// broken, so it is generous.
const waitLong = 10 * time.Second

// startServer serves h on 127.0.0.1 and returns its base URL. The server is
// closed when the test ends.
func startServer(tb testing.TB, h http.Handler) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("listen: %v", err)
	}
	ts := httptest.NewUnstartedServer(h)
	ts.Listener.Close()
	ts.Listener = ln
	ts.Start()
	tb.Cleanup(ts.Close)
	return ts.URL
}

// newTestServer builds a Server from cfg, lets setup adjust it before it
// serves (to set hooks and sleep), serves it and returns it with a client.
func newTestServer(tb testing.TB, cfg Config, setup func(*Server)) (*Server, *Client, string) {
	tb.Helper()
	s, err := NewServer(cfg, nil)
	if err != nil {
		tb.Fatalf("NewServer: %v", err)
	}
	if setup != nil {
		setup(s)
	}
	url := startServer(tb, s)
	return s, NewClient(url, nil), url
}

// fakeClock is a clock that moves step forward every time it is read.
type fakeClock struct {
	mu   sync.Mutex
	t    time.Time
	step time.Duration
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2025, 11, 28, 9, 0, 0, 0, time.UTC), step: time.Second}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(c.step)
	return c.t
}

// gate holds every charge in processing until it is opened, and reports
// which charges started and were recorded.
type gate struct {
	open     chan struct{}
	once     sync.Once
	started  chan string
	waiting  chan string
	left     chan string
	joined   chan string
	recorded chan Charge
}

// newGate returns a gate with room for n events of each kind.
func newGate(n int) *gate {
	return &gate{
		open:     make(chan struct{}),
		started:  make(chan string, n),
		waiting:  make(chan string, n),
		left:     make(chan string, n),
		joined:   make(chan string, n),
		recorded: make(chan Charge, n),
	}
}

// install makes s report to g and wait for g before it processes a charge.
// The charges must have a latency above zero for the wait to happen.
func (g *gate) install(s *Server) {
	s.sleep = func(time.Duration) { <-g.open }
	s.hooks = hooks{
		waiting:   func(key string) { g.waiting <- key },
		started:   func(key string) { g.started <- key },
		abandoned: func(key string) { g.left <- key },
		joined:    func(key string) { g.joined <- key },
		recorded:  func(c Charge) { g.recorded <- c },
	}
}

// release lets every charge through, now and later.
func (g *gate) release() { g.once.Do(func() { close(g.open) }) }

// await receives from ch until it gets want, failing after waitLong.
func await[T comparable](tb testing.TB, ch <-chan T, want T, what string) {
	tb.Helper()
	timeout := time.After(waitLong)
	for {
		select {
		case got := <-ch:
			if got == want {
				return
			}
		case <-timeout:
			tb.Fatalf("timed out waiting for %s %v", what, want)
		}
	}
}

// awaitKey waits until a charge with key is recorded.
func awaitKey(tb testing.TB, ch <-chan Charge, key string) Charge {
	tb.Helper()
	timeout := time.After(waitLong)
	for {
		select {
		case c := <-ch:
			if c.Key == key {
				return c
			}
		case <-timeout:
			tb.Fatalf("timed out waiting for charge %q to be recorded", key)
		}
	}
}

// answer is a raw HTTP answer.
type answer struct {
	code int
	body []byte
}

// field decodes the answer as a JSON object and returns one field as a string.
func (a answer) field(tb testing.TB, name string) string {
	tb.Helper()
	var m map[string]any
	if err := json.Unmarshal(a.body, &m); err != nil {
		tb.Fatalf("answer %d %q is not a JSON object: %v", a.code, a.body, err)
	}
	v, ok := m[name]
	if !ok {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		b, _ := json.Marshal(v)
		return string(b)
	}
	return s
}

// charge decodes the answer as a Charge.
func (a answer) charge(tb testing.TB) Charge {
	tb.Helper()
	var c Charge
	if err := json.Unmarshal(a.body, &c); err != nil {
		tb.Fatalf("answer %d %q is not a charge: %v", a.code, a.body, err)
	}
	return c
}

// send makes one raw request; body may be nil.
func send(tb testing.TB, ctx context.Context, method, url string, body []byte) answer {
	tb.Helper()
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, r)
	if err != nil {
		tb.Fatalf("build request: %v", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatalf("read answer: %v", err)
	}
	return answer{code: resp.StatusCode, body: b}
}

// postJSON posts v as JSON.
func postJSON(tb testing.TB, url string, v any) answer {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatalf("encode: %v", err)
	}
	return send(tb, context.Background(), http.MethodPost, url, b)
}

// req returns a valid charge request for key.
func req(key string) ChargeRequest {
	return ChargeRequest{Key: key, AmountCents: 1299, Shopper: "s-" + key, SKU: "sku-1"}
}
