// Package relay is the request-aware half of gameday's Toxiproxy.
//
// Toxiproxy's toxics each see one direction of a connection: a toxic on the
// upstream stream sees what the client sends, one on the downstream stream
// what the server answers, and neither knows which connection the other
// is on. A fault such as "let this request through, then lose its answer"
// needs both. gameday's Toxiproxy therefore points each proxy at a relay,
// one per proxy, on loopback, which forwards every connection to the real
// upstream and sees both of its directions: the client's bytes since the
// upstream last answered are one request, and the upstream's bytes after
// them its answer. That works for Postgres, MySQL, Redis (RESP) and
// HTTP/1.1 without parsing any of them; a client that pipelines sends its
// pipeline as one request.
//
// The request-aware toxics (lost_reply) are registered with Toxiproxy's
// toxic registry, so its API takes, lists, updates and removes them like
// its own; in Toxiproxy's chain they pass data through untouched, and the
// relay does what they say. With none of them on a proxy the relay only
// copies bytes.
package relay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gameday-dev/gameday/internal/wait"
)

// maxRequest bounds how much of a request is kept to match against: the
// first 64 KiB, which hold every protocol's command or request line.
const maxRequest = 64 << 10

// Relay forwards the connections of one Toxiproxy proxy to its upstream.
type Relay struct {
	ln       net.Listener
	upstream string
	faults   atomic.Pointer[[]*Fault]
	// seen counts the requests by kind (kinds.go).
	seen kindCounts
	ctx  context.Context // ends when the relay closes: dials stop
	stop context.CancelFunc

	mu     sync.Mutex
	conns  map[*pair]struct{}
	closed bool
	wg     sync.WaitGroup
}

// Listen starts a relay to upstream on a free loopback port.
func Listen(upstream string) (*Relay, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("relay to %s: %w", upstream, err)
	}
	ctx, stop := context.WithCancel(context.Background())
	r := &Relay{ln: ln, upstream: upstream, ctx: ctx, stop: stop, conns: map[*pair]struct{}{}}
	r.wg.Add(1)
	go r.accept()
	return r, nil
}

// Addr is where the relay listens: the upstream Toxiproxy's proxy dials.
func (r *Relay) Addr() string { return r.ln.Addr().String() }

// Upstream is where the relay forwards to.
func (r *Relay) Upstream() string { return r.upstream }

// Kinds are the kinds of the requests the relay saw from the second since
// (Unix time) on, each by the second it began in (Kind).
func (r *Relay) Kinds(since int64) []KindCount { return r.seen.since(since) }

// SetFaults replaces the request-aware faults the relay applies; a
// connection already open applies the new ones from its next request. A
// connection held silent by a fault that is gone is reset: its answer was
// lost, and nothing is left to hold it (as Toxiproxy's timeout toxic lets
// a connection go when it is removed, but with no answer left to send).
func (r *Relay) SetFaults(fs []*Fault) {
	if len(fs) == 0 {
		r.faults.Store(nil)
	} else {
		r.faults.Store(&fs)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for p := range r.conns {
		held := p.heldBy.Load()
		if held != nil && !slices.ContainsFunc(fs, func(f *Fault) bool { return f.pick == held }) {
			p.abort()
		}
	}
}

func (r *Relay) current() []*Fault {
	if p := r.faults.Load(); p != nil {
		return *p
	}
	return nil
}

// Close stops accepting, ends every connection (a held one too) and waits
// for them.
func (r *Relay) Close() error {
	r.stop()
	r.mu.Lock()
	r.closed = true
	for p := range r.conns {
		p.abort()
	}
	r.mu.Unlock()
	err := r.ln.Close()
	r.wg.Wait()
	return err
}

// dialTimeout bounds the dial of the upstream, as the client's own connect
// timeout would: a black-holed upstream must not hold the relay.
const dialTimeout = 10 * time.Second

func (r *Relay) accept() {
	defer r.wg.Done()
	for {
		c, err := r.ln.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			// Out of file descriptors, or a connection reset before it
			// was accepted: the next may work, as for any server.
			if !wait.For(r.ctx, 50*time.Millisecond) {
				return
			}
			continue
		}
		r.wg.Add(1)
		go r.serve(c.(*net.TCPConn))
	}
}

func (r *Relay) serve(down *net.TCPConn) {
	defer r.wg.Done()
	d := net.Dialer{Timeout: dialTimeout}
	u, err := d.DialContext(r.ctx, "tcp", r.upstream)
	if err != nil {
		// As Toxiproxy does when its upstream refuses: the client's
		// connection closes.
		down.Close()
		return
	}
	p := &pair{r: r, down: down, up: u.(*net.TCPConn), answered: true, ended: make(chan struct{})}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		p.abort()
		return
	}
	r.conns[p] = struct{}{}
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.conns, p)
		r.mu.Unlock()
	}()
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.requests()
	}()
	p.answers()
	<-done
	if p.lost.Load() {
		// Held silent though the client stopped sending: until cut.
		p.held()
	}
	p.down.Close()
	p.up.Close()
}

// pair is one connection through the relay: down is Toxiproxy's side (the
// client's, as far as the relay can tell), up the upstream's.
type pair struct {
	r        *Relay
	down, up *net.TCPConn

	mu sync.Mutex
	// req holds the first maxRequest bytes of the request: the client's
	// bytes since the upstream last answered. reqLen counts all of them;
	// whole says req began with the request's first byte (a fault added
	// in the middle of a request does not judge it).
	req      []byte
	reqLen   int64
	whole    bool
	answered bool
	// kind is the request's kind (Kind), read from its first bytes;
	// stmts the kinds of the statements the connection prepared.
	kind  string
	stmts statements
	// applies holds, per fault, whether it acts on this connection (its
	// toxicity, drawn once per connection, as Toxiproxy draws its own).
	applies map[*Pick]bool
	// lost: a fault lost the answer; the connection is reset or held
	// silent until the client gives up, or the fault that holds it
	// (heldBy) is removed.
	lost   atomic.Bool
	heldBy atomic.Pointer[Pick]
	// http: the connection speaks HTTP/1.x, and is read as it (http.go)
	// from its first request on.
	http atomic.Pointer[httpConn]
	// ended is closed when the connection is cut (abort): a held one
	// waits for it.
	ended   chan struct{}
	endOnce sync.Once
}

// requests copies the client's bytes to the upstream, noting where each
// request begins. A connection whose first bytes are an HTTP/1.x request
// is read as HTTP from there on (http.go).
func (p *pair) requests() {
	buf := make([]byte, 32<<10)
	for first := true; ; first = false {
		n, err := p.down.Read(buf)
		if first && n > 0 && looksHTTP(buf[:n]) {
			hc := newHTTPConn(p, append([]byte(nil), buf[:n]...))
			p.http.Store(hc)
			// answers() is waiting for the upstream's first bytes, which
			// an HTTP server sends only once asked (and never, for a
			// request the relay answers itself): cut that wait short so
			// that it reads the answers as HTTP from now.
			p.up.SetReadDeadline(time.Now())
			close(hc.poked)
			hc.requests()
			return
		}
		if n > 0 {
			if p.lost.Load() {
				// Held: the client's further bytes go nowhere, as they
				// would on a connection whose peer went silent.
				continue
			}
			p.note(buf[:n])
			if _, werr := p.up.Write(buf[:n]); werr != nil {
				if p.lost.Load() {
					// The answer was lost while this was on its way,
					// and the upstream closed: held stays held.
					continue
				}
				p.abort()
				return
			}
		}
		if err != nil {
			switch {
			case p.lost.Load():
				p.held()
			case errors.Is(err, io.EOF):
				p.up.CloseWrite()
			default:
				p.abort()
			}
			return
		}
	}
}

// note records bytes the client sent: the start of a new request when the
// upstream answered the last one.
func (p *pair) note(b []byte) {
	faulty := len(p.r.current()) > 0
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.answered {
		p.answered = false
		p.req = p.req[:0]
		p.reqLen = 0
		p.whole = faulty
		p.kind = p.stmts.kind(b)
		p.r.seen.count(p.kind, time.Now())
	}
	p.reqLen += int64(len(b))
	if p.whole && len(p.req) < maxRequest {
		p.req = append(p.req, b[:min(len(b), maxRequest-len(p.req))]...)
	}
}

// answers copies the upstream's bytes to the client; the first of them
// after a request is where a fault may lose the answer.
func (p *pair) answers() {
	buf := make([]byte, 32<<10)
	for {
		n, err := p.up.Read(buf)
		if hc := p.http.Load(); hc != nil {
			// An HTTP connection, whose first request is on its way:
			// the answers are read as HTTP from here. requests() cut
			// this read short to say so (a read the upstream's bytes
			// woke first still saw the deadline set): once it has, the
			// deadline goes, for every read after.
			<-hc.poked
			p.up.SetReadDeadline(time.Time{})
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				err = nil
			}
			hc.answers(buf[:n], err)
			return
		}
		if n > 0 {
			if f := p.judge(); f != nil {
				p.lose(f)
				return
			}
			if _, werr := p.down.Write(buf[:n]); werr != nil {
				p.abort()
				return
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				p.down.CloseWrite()
				return
			}
			p.abort()
			return
		}
	}
}

// judge is called when the upstream sends bytes: if they begin the answer
// to a request a fault acts on, it returns that fault.
func (p *pair) judge() *Fault {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.answered || p.reqLen == 0 {
		return nil // more of an answer, or the server spoke first
	}
	p.answered = true
	if !p.whole {
		return nil
	}
	for _, f := range p.r.current() {
		if f.http() {
			// Not an HTTP connection: an HTTP toxic lets it through.
			f.pick.Hits.notHTTP()
			continue
		}
		if p.acts(f) && f.takes(p.req, nil, p.kind) {
			f.acted(p.req, p.kind) // the answer is lost next
			return f
		}
	}
	return nil
}

// decide is judge for a request of an HTTP connection (http.go), of kind
// kind: by the HTTP toxics when its head h has been read (req is the
// head), by lost_reply when it is whole (h is nil; req is its head and
// body data, up to maxRequest). It returns the fault that acts on it, or
// nil.
func (p *pair) decide(req []byte, h *head, kind string) *Fault {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, f := range p.r.current() {
		if f.http() == (h != nil) && p.acts(f) && f.takes(req, h, kind) {
			return f
		}
	}
	return nil
}

// acts draws, once per connection, whether f acts on it.
func (p *pair) acts(f *Fault) bool {
	if p.applies == nil {
		p.applies = map[*Pick]bool{}
	}
	on, ok := p.applies[f.pick]
	if !ok {
		on = f.pick.draw(f.toxicity)
		p.applies[f.pick] = on
	}
	return on
}

// lose discards the answer and ends the connection as the fault says: a
// reset at once, or held silent until the client closes it (or the relay
// does). The upstream did the work and answered; it is closed either way.
func (p *pair) lose(f *Fault) {
	if f.hold {
		p.heldBy.Store(f.pick)
	}
	p.lost.Store(true)
	p.up.SetLinger(0)
	p.up.Close()
	if f.hold {
		// requests() reads the client's bytes until it closes, or
		// SetFaults resets it when f is removed.
		if !slices.ContainsFunc(p.r.current(), func(g *Fault) bool { return g.pick == f.pick }) {
			p.abort() // removed while this answer was being lost
		}
		return
	}
	p.down.SetLinger(0)
	p.down.Close()
}

// abort ends both sides at once.
func (p *pair) abort() {
	p.down.SetLinger(0)
	p.up.SetLinger(0)
	p.down.Close()
	p.up.Close()
	p.endOnce.Do(func() { close(p.ended) })
}

// held waits, for a connection whose answer a fault lost and holds, until
// it is cut (the fault removed, the relay closed): a client that has
// stopped sending still hears nothing.
func (p *pair) held() {
	if p.heldBy.Load() != nil {
		<-p.ended
	}
	p.abort()
}
