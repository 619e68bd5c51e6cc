package load

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// transport is the load generator's HTTP/1.1 transport for plain http: a
// request is written, and its answer read, on the goroutine of the shopper
// that sends it, over a keep-alive connection from a pool. net/http's
// Transport keeps two goroutines per connection (a reader and a writer)
// and hands every request and answer between them and the caller over
// channels: four goroutine switches a request, and some 13 KB of stacks
// for every shopper waiting on a connection. Here a connection is a
// socket and two small buffers, and a request costs the write and the
// reads. Answers are parsed by net/http's own http.ReadResponse (status
// line, headers, Content-Length, chunked bodies).
//
// Anything else — https, a proxy from the environment — goes to fallback,
// a net/http Transport.
type transport struct {
	fallback *http.Transport
	dial     func(ctx context.Context, network, addr string) (net.Conn, error)
	// idleFor closes a connection idle longer (checked when connections
	// are taken and given back: there is no goroutine to time them).
	idleFor             time.Duration
	readSize, writeSize int
	maxIdle             int // per host

	mu        sync.Mutex
	idle      map[string][]*conn1 // by host:port, the most recent last
	lastSweep time.Time
}

// conn1 is one keep-alive connection of the pool. It holds no buffer
// while it is idle or waits for an answer (a shopper waiting on a slow
// checkout would otherwise hold 3 KiB for nothing): the writer is taken
// from a pool to write the request, the reader when the answer's first
// bytes are in, until its body has been read.
type conn1 struct {
	t     *transport
	key   string
	c     net.Conn
	br    *bufio.Reader // nil but while an answer is read
	s     sock
	first first     // the answer's first bytes, read as they came
	since time.Time // idle since
}

// first is what the read that found the answer took from the socket, as
// the reader's source: those bytes, then the connection. The wait and
// the first read are one system call that finds nothing and one that
// reads; no buffer is held while waiting (a read that finds nothing gives
// its buffer back), and the buffer goes back to the pool once its bytes
// have been read.
type first struct {
	c      net.Conn
	buf    *[]byte // nil while waiting and once read; from firsts
	off, n int
}

func (f *first) Read(p []byte) (int, error) {
	if f.buf != nil {
		k := copy(p, (*f.buf)[f.off:f.n])
		f.off += k
		if f.off == f.n {
			firsts.Put(f.buf)
			f.buf = nil
		}
		return k, nil
	}
	return f.c.Read(p)
}

var (
	readers sync.Pool // *bufio.Reader of transport.readSize
	writers sync.Pool // *bufio.Writer of transport.writeSize
	firsts  sync.Pool // *[]byte of transport.readSize
)

// readWaiting is the first read of an answer where the socket cannot be
// waited on without a buffer: one is taken before the read waits.
func readWaiting(c net.Conn, take func() *[]byte) (*[]byte, int, error) {
	b := take()
	n, err := c.Read(*b)
	if err != nil && n == 0 {
		firsts.Put(b)
		return nil, 0, err
	}
	return b, n, nil
}

func (t *transport) firstBuf() *[]byte {
	if b, ok := firsts.Get().(*[]byte); ok && len(*b) == t.readSize {
		return b
	}
	b := make([]byte, t.readSize)
	return &b
}

func (t *transport) writer(c io.Writer) *bufio.Writer {
	if w, ok := writers.Get().(*bufio.Writer); ok && w.Size() == t.writeSize {
		w.Reset(c)
		return w
	}
	return bufio.NewWriterSize(c, t.writeSize)
}

func (t *transport) reader(c io.Reader) *bufio.Reader {
	if r, ok := readers.Get().(*bufio.Reader); ok && r.Size() == t.readSize {
		r.Reset(c)
		return r
	}
	return bufio.NewReaderSize(c, t.readSize)
}

// drop gives c's reader back; false when it still holds bytes (more than
// the answer: the connection cannot be trusted).
func (c *conn1) drop() bool {
	clean := true
	if c.first.buf != nil {
		clean = c.first.off == c.first.n
		firsts.Put(c.first.buf)
		c.first = first{}
	}
	if c.br != nil {
		clean = clean && c.br.Buffered() == 0
		c.br.Reset(nil)
		readers.Put(c.br)
		c.br = nil
	}
	return clean
}

var longAgo = time.Unix(1, 0)

// RoundTrip sends req and reads the answer's head; the body is read from
// the connection as the caller reads it, and the connection goes back to
// the pool when the body has been read to its end (or closed with little
// left).
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != "http" || req.URL.Host == "" || (req.ProtoMajor != 0 && req.ProtoMajor != 1) {
		return t.fallback.RoundTrip(req)
	}
	if p, err := t.fallback.Proxy(req); err != nil || p != nil {
		return t.fallback.RoundTrip(req)
	}
	if err := checkHeaders(req.Header); err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	body, held, err := requestBody(req)
	if err != nil {
		return nil, err
	}
	ctx := req.Context()
	key := canonicalAddr(req.URL.Host)
	dl, _ := ctx.Deadline() // zero: none
	c, reused := t.get(key, dl)
	if c == nil {
		nc, err := t.dial(ctx, "tcp", key)
		if err != nil {
			putBody(held)
			return nil, ctxErr(ctx, err)
		}
		c = &conn1{t: t, key: key, c: nc}
		c.s.init(nc, t.firstBuf)
		if !dl.IsZero() {
			_ = c.c.SetDeadline(dl)
		}
	}
	stop := context.AfterFunc(ctx, func() { _ = c.c.SetDeadline(longAgo) })
	resp, err := c.exchange(req, body, held)
	if err != nil {
		stop()
		c.drop()
		c.c.Close()
		if e := ctxErr(ctx, err); e == context.Canceled || e == context.DeadlineExceeded {
			return nil, e
		}
		if reused && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)) {
			// Closed by the server while idle, between the check and
			// the write: whether it read the request is unknown, so it
			// is not sent again (a POST may have been taken).
			return nil, fmt.Errorf("the connection was closed by the server: %w", err)
		}
		return nil, err
	}
	reuse := !resp.Close && !req.Close && !closes(req.Header)
	resp.Body = &body1{rc: resp.Body, c: c, stop: stop, reuse: reuse, ctx: ctx}
	return resp, nil
}

// exchange writes the request and reads the answer's head, past any 1xx.
// The body's buffer goes back to the pool once the request is written:
// a shopper waiting for its answer does not hold it.
func (c *conn1) exchange(req *http.Request, body []byte, held *[]byte) (*http.Response, error) {
	w := c.t.writer(&c.s)
	w.WriteString(req.Method)
	w.WriteByte(' ')
	w.WriteString(req.URL.RequestURI())
	w.WriteString(" HTTP/1.1\r\nHost: ")
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	w.WriteString(host)
	w.WriteString("\r\n")
	if _, ok := req.Header["User-Agent"]; !ok {
		w.WriteString("User-Agent: Go-http-client/1.1\r\n")
	}
	for k, vs := range req.Header {
		if framing[http.CanonicalHeaderKey(k)] {
			continue // the transport's own, as net/http ignores them
		}
		for _, v := range vs {
			w.WriteString(k)
			w.WriteString(": ")
			w.WriteString(v)
			w.WriteString("\r\n")
		}
	}
	if body != nil || (req.Method != http.MethodGet && req.Method != http.MethodHead) {
		w.WriteString("Content-Length: ")
		var n [20]byte
		w.Write(strconv.AppendInt(n[:0], int64(len(body)), 10))
		w.WriteString("\r\n")
	}
	if req.Close {
		w.WriteString("Connection: close\r\n")
	}
	w.WriteString("\r\n")
	w.Write(body)
	err := w.Flush()
	w.Reset(nil)
	writers.Put(w)
	putBody(held)
	if err != nil {
		return nil, err
	}
	buf, n, err := c.s.readFirst()
	if err != nil {
		return nil, err
	}
	c.first = first{c: c.c, buf: buf, n: n}
	c.br = c.t.reader(&c.first)
	for {
		resp, err := http.ReadResponse(c.br, req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			return resp, nil
		}
		resp.Body.Close() // 1xx: no body; the answer follows
	}
}

// framing are the headers the transport writes itself: a request's own
// are not sent (as net/http's Transport does not), so that a system file
// cannot make a request with two Host or two lengths.
var framing = map[string]bool{"Host": true, "Content-Length": true, "Transfer-Encoding": true, "Trailer": true}

// closes reports a request that asked for its connection to be closed.
func closes(h http.Header) bool {
	for _, v := range h["Connection"] {
		for _, tok := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(tok), "close") {
				return true
			}
		}
	}
	return false
}

// checkHeaders refuses what would break the request's framing: a name
// that is not a token, a value with a control character (a CR or LF would
// start a header of its own).
func checkHeaders(h http.Header) error {
	for k, vs := range h {
		if k == "" {
			return errors.New("a header without a name")
		}
		for i := 0; i < len(k); i++ {
			if c := k[i]; c <= ' ' || c >= 0x7f || bytes.IndexByte([]byte(`"(),/:;<=>?@[\]{}`), c) >= 0 {
				return fmt.Errorf("header name %q: not a token", k)
			}
		}
		for _, v := range vs {
			for i := 0; i < len(v); i++ {
				if c := v[i]; (c < ' ' && c != '\t') || c == 0x7f {
					return fmt.Errorf("header %s: a control character in its value", k)
				}
			}
		}
	}
	return nil
}

// requestBody reads the request's body (a load generator's bodies are
// small and already in memory) into a buffer from bodies, and closes it,
// as a RoundTripper must; putBody gives the buffer back once the request
// has been written. The bodies net/http's NewRequest makes of a buffer or
// reader say nothing of their bytes, so they are read like any other.
func requestBody(req *http.Request) ([]byte, *[]byte, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil, nil
	}
	defer req.Body.Close()
	held := bodies.Get().(*[]byte)
	b := (*held)[:0]
	if n := req.ContentLength; n > int64(cap(b)) && n < maxPooledBody {
		b = make([]byte, 0, n+1) // +1: the read that finds the end
	}
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := req.Body.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			*held = b
			return b, held, nil
		}
		if err != nil {
			*held = b
			putBody(held)
			return nil, nil, fmt.Errorf("read the request's body: %w", err)
		}
	}
}

// bodies hold requests' bodies while they are written; one that grew past
// maxPooledBody is let go rather than kept.
var bodies = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

const maxPooledBody = 64 << 10

func putBody(b *[]byte) {
	if b == nil || cap(*b) > maxPooledBody {
		return
	}
	*b = (*b)[:0]
	bodies.Put(b)
}

// ctxErr is the context's error when it ended the request (the deadline
// moved to the past when it was cancelled, or reached when it timed out:
// the read may fail a moment before the context says so), else err.
func ctxErr(ctx context.Context, err error) error {
	if e := ctx.Err(); e != nil {
		return e
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
			return context.DeadlineExceeded
		}
	}
	return err
}

// body1 is an answer's body: when it has been read to its end, its
// connection goes back to the pool.
type body1 struct {
	rc    io.ReadCloser
	c     *conn1
	stop  func() bool
	reuse bool
	ctx   context.Context
	done  bool
	err   error // what ended it: io.EOF, or why it broke
}

func (b *body1) Read(p []byte) (int, error) {
	if b.done {
		return 0, b.err
	}
	n, err := b.rc.Read(p)
	if err == io.EOF {
		b.err = io.EOF
		b.finish(true)
	} else if err != nil {
		err = ctxErr(b.ctx, err)
		b.err = err
		b.finish(false)
	}
	return n, err
}

// Close gives the connection back if what is left of the body is read at
// once (a few bytes); otherwise the connection is closed.
func (b *body1) Close() error {
	if b.done {
		return nil
	}
	var buf [512]byte
	n, err := io.ReadFull(b.rc, buf[:])
	b.err = errors.New("read on a closed answer")
	b.finish(n < len(buf) && (err == io.EOF || err == io.ErrUnexpectedEOF))
	return nil
}

func (b *body1) finish(whole bool) {
	b.done = true
	if !whole {
		// net/http's body would read what is left to the end before it
		// closes: the socket goes first, so that nobody waits for it.
		b.c.c.Close()
	}
	b.rc.Close()
	clean := b.c.drop()
	// stop reports false when the context ended meanwhile: the deadline
	// was moved to the past, and the connection cannot be trusted.
	if b.stop() && whole && b.reuse && clean {
		b.c.t.put(b.c)
		return
	}
	b.c.c.Close()
}

// get takes the most recently used idle connection to key that is still
// open, or nil, with its deadline set to dl (zero: none). An idle
// connection keeps the deadline of its last request: setting the next
// one moves the poller's timers, where clearing it when the connection
// went back and setting it again took them out and put them back in. The
// deadline is set before the check that the connection is open, which an
// old deadline would fail.
func (t *transport) get(key string, dl time.Time) (*conn1, bool) {
	now := time.Now()
	for {
		t.mu.Lock()
		l := t.idle[key]
		if len(l) == 0 {
			t.mu.Unlock()
			return nil, false
		}
		c := l[len(l)-1]
		l[len(l)-1] = nil
		t.idle[key] = l[:len(l)-1]
		t.mu.Unlock()
		if now.Sub(c.since) < t.idleFor {
			_ = c.c.SetDeadline(dl)
			if c.s.open() {
				return c, true
			}
		}
		c.c.Close()
	}
}

// put gives c back to the pool, and closes connections idle too long.
func (t *transport) put(c *conn1) {
	now := time.Now()
	c.since = now
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.idle == nil {
		t.idle = map[string][]*conn1{}
	}
	if len(t.idle[c.key]) >= t.maxIdle {
		c.c.Close()
		return
	}
	t.idle[c.key] = append(t.idle[c.key], c)
	if now.Sub(t.lastSweep) < t.idleFor {
		return
	}
	t.lastSweep = now
	for k, l := range t.idle {
		// The oldest are first.
		n := 0
		for n < len(l) && now.Sub(l[n].since) >= t.idleFor {
			l[n].c.Close()
			n++
		}
		if n > 0 {
			t.idle[k] = append(l[:0], l[n:]...)
		}
	}
}

// CloseIdleConnections closes every idle connection (http.Client's
// CloseIdleConnections calls it).
func (t *transport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = nil
	t.mu.Unlock()
	for _, l := range idle {
		for _, c := range l {
			c.c.Close()
		}
	}
	t.fallback.CloseIdleConnections()
}

// canonicalAddr is host:port, port 80 when the URL has none.
func canonicalAddr(host string) string {
	if _, _, err := net.SplitHostPort(host); err == nil {
		return host
	}
	if len(host) > 1 && host[0] == '[' && host[len(host)-1] == ']' {
		host = host[1 : len(host)-1]
	}
	return net.JoinHostPort(host, "80")
}
