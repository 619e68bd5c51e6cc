package relay

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/textproto"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// An HTTP/1.x connection through the relay is read a message at a time:
// each request's head and body, and each answer's, framed as HTTP frames
// them (Content-Length, chunked, to the connection's close; none for HEAD,
// 1xx, 204 and 304). The bytes go on as they came; only an answer a toxic
// acts on is changed. Answers come back in the order of their requests,
// so each request waits its turn in a queue, and an answer the relay
// gives itself (http_error) is sent in its request's turn.

// maxHead bounds a message's head (its start line and header fields).
const maxHead = 64 << 10

// maxSpoiled bounds the body http_malformed reads whole to spoil it; a
// longer one is cut at this length, which spoils it as well.
const maxSpoiled = 16 << 20

// looksHTTP reports whether a connection's first bytes are an HTTP/1.x
// request: a method in capitals, a space, and (once the line is whole)
// " HTTP/1." before its end.
func looksHTTP(b []byte) bool {
	i := 0
	for i < len(b) && i < 20 && b[i] >= 'A' && b[i] <= 'Z' {
		i++
	}
	if i < 3 || i >= len(b) || b[i] != ' ' {
		return false
	}
	line, _, whole := bytes.Cut(b, []byte("\n"))
	if !whole {
		return len(b) < maxHead
	}
	line = bytes.TrimSuffix(line, []byte("\r"))
	return bytes.HasPrefix(line[bytes.LastIndexByte(line, ' ')+1:], []byte("HTTP/1."))
}

// head is an HTTP message's head, as read.
type head struct {
	raw    []byte
	method string // a request's
	target string // a request's
	status int    // an answer's
	proto  string
	header http.Header
	// length is the body's Content-Length, -1 when none was given.
	length  int64
	chunked bool
	// closing: the connection ends after this message.
	closing bool
	upgrade bool
	expect  bool // Expect: 100-continue
}

var errNotHTTP = errors.New("not HTTP/1.x")

// readHead reads a message's head, blank lines before it included.
func readHead(br *bufio.Reader) ([]byte, error) {
	var raw []byte
	started := false
	for {
		line, err := readLine(br)
		raw = append(raw, line...)
		if len(raw) > maxHead {
			return raw, fmt.Errorf("a head longer than %d bytes: %w", maxHead, errNotHTTP)
		}
		if err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) && len(raw) == len(line) && len(line) == 0 {
				err = io.EOF // nothing at all: the client is done
			}
			return raw, err
		}
		blank := len(bytes.TrimRight(line, "\r\n")) == 0
		switch {
		case blank && started:
			return raw, nil
		case !blank:
			started = true
		}
	}
}

// parseHead reads a head's start line and the fields that frame its body.
// request says which it is.
func parseHead(raw []byte, request bool) (*head, error) {
	text := strings.TrimLeft(string(raw), "\r\n")
	start, rest, _ := strings.Cut(text, "\n")
	start = strings.TrimSuffix(start, "\r")
	h := &head{raw: raw, length: -1}
	parts := strings.SplitN(start, " ", 3)
	if request {
		if len(parts) != 3 || !strings.HasPrefix(parts[2], "HTTP/1.") {
			return nil, errNotHTTP
		}
		h.method, h.target, h.proto = parts[0], parts[1], parts[2]
	} else {
		if len(parts) < 2 || !strings.HasPrefix(parts[0], "HTTP/1.") {
			return nil, errNotHTTP
		}
		code, err := strconv.Atoi(parts[1])
		if err != nil || code < 100 || code > 999 {
			return nil, errNotHTTP
		}
		h.proto, h.status = parts[0], code
	}
	tp := textproto.NewReader(bufio.NewReader(strings.NewReader(rest)))
	mh, err := tp.ReadMIMEHeader()
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%v: %w", err, errNotHTTP)
	}
	h.header = http.Header(mh)
	for _, v := range h.header.Values("Transfer-Encoding") {
		h.chunked = h.chunked || strings.Contains(strings.ToLower(v), "chunked")
	}
	if cls := h.header.Values("Content-Length"); len(cls) > 0 && !h.chunked {
		n, err := strconv.ParseInt(strings.TrimSpace(cls[0]), 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("Content-Length %q: %w", cls[0], errNotHTTP)
		}
		for _, v := range cls[1:] {
			if strings.TrimSpace(v) != strings.TrimSpace(cls[0]) {
				return nil, fmt.Errorf("Content-Length given twice, differently: %w", errNotHTTP)
			}
		}
		h.length = n
	}
	conn := strings.ToLower(strings.Join(h.header.Values("Connection"), ","))
	h.closing = strings.Contains(conn, "close") || (h.proto == "HTTP/1.0" && !strings.Contains(conn, "keep-alive"))
	h.upgrade = strings.Contains(conn, "upgrade") || (request && h.method == http.MethodConnect)
	h.expect = strings.EqualFold(strings.TrimSpace(h.header.Get("Expect")), "100-continue")
	return h, nil
}

// body is how a message's body is framed.
type body struct {
	none, chunked, toClose bool
	length                 int64
}

// requestBody frames a request's body: chunked, a length, or none.
func requestBody(h *head) body {
	switch {
	case h.chunked:
		return body{chunked: true}
	case h.length > 0:
		return body{length: h.length}
	}
	return body{none: true}
}

// answerBody frames an answer's body, given its request's method.
func answerBody(h *head, method string) body {
	switch {
	case method == http.MethodHead || h.status/100 == 1 || h.status == http.StatusNoContent || h.status == http.StatusNotModified:
		return body{none: true}
	case h.chunked:
		return body{chunked: true}
	case h.length >= 0:
		return body{length: h.length, none: h.length == 0}
	}
	return body{toClose: true}
}

// copyBody copies a body as framed, its bytes as they came (a chunked
// body's sizes and trailers included). data, when not nil, is given the
// body's data as well (a chunked one's without its framing), each part
// before it goes to w.
func copyBody(w io.Writer, br *bufio.Reader, b body, data io.Writer) error {
	both := w
	if data != nil {
		both = io.MultiWriter(data, w)
	}
	switch {
	case b.none:
		return nil
	case b.toClose:
		_, err := io.Copy(both, br)
		return err
	case !b.chunked:
		_, err := io.CopyN(both, br, b.length)
		return err
	}
	for {
		line, err := readLine(br)
		if err != nil {
			return err
		}
		if _, err := w.Write(line); err != nil {
			return err
		}
		size, err := chunkSize(line)
		if err != nil {
			return err
		}
		if size == 0 {
			// The trailer, to its blank line.
			for {
				line, err := readLine(br)
				if err != nil {
					return err
				}
				if _, err := w.Write(line); err != nil {
					return err
				}
				if len(bytes.TrimRight(line, "\r\n")) == 0 {
					return nil
				}
			}
		}
		if _, err := io.CopyN(both, br, size); err != nil {
			return err
		}
		if _, err := io.CopyN(w, br, 2); err != nil { // the data's CRLF
			return err
		}
	}
}

// chunkSize reads a chunked body's size line (hexadecimal, extensions
// after ';' ignored).
func chunkSize(line []byte) (int64, error) {
	sizeText, _, _ := strings.Cut(strings.TrimSpace(string(line)), ";")
	size, err := strconv.ParseInt(strings.TrimSpace(sizeText), 16, 64)
	if err != nil || size < 0 {
		return 0, fmt.Errorf("chunk size %q: %w", sizeText, errNotHTTP)
	}
	return size, nil
}

// readLine reads one whole line (of a head, or a chunked body's framing),
// at most maxHead bytes: a line longer than the reader's buffer is read in
// parts, and judged whole.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		part, err := br.ReadSlice('\n')
		line = append(line, part...)
		if len(line) > maxHead {
			return line, fmt.Errorf("a line longer than %d bytes: %w", maxHead, errNotHTTP)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return line, err
	}
}

// readBody reads a body whole, decoded (a chunked one's data only), at
// most limit bytes; cut says there was more.
func readBody(br *bufio.Reader, b body, limit int64) (data []byte, cut bool, err error) {
	var buf bytes.Buffer
	w := &capped{w: &buf, left: limit}
	err = copyBody(io.Discard, br, b, w)
	return buf.Bytes(), w.cut, err
}

// capped keeps the first left bytes written to it, and drops the rest.
type capped struct {
	w    io.Writer
	left int64
	cut  bool
}

func (c *capped) Write(p []byte) (int, error) {
	n := len(p)
	if int64(len(p)) > c.left {
		p, c.cut = p[:c.left], true
	}
	c.left -= int64(len(p))
	if _, err := c.w.Write(p); err != nil {
		return 0, err
	}
	return n, nil
}

// withoutFraming is an answer's head without its framing fields
// (Content-Length, Transfer-Encoding) and its blank line, for a head
// that declares its own.
func withoutFraming(raw []byte) []byte {
	var out []byte
	for i, line := range bytes.SplitAfter(raw, []byte("\n")) {
		t := bytes.TrimRight(line, "\r\n")
		if len(t) == 0 && i > 0 {
			continue
		}
		name, _, _ := bytes.Cut(t, []byte(":"))
		switch http.CanonicalHeaderKey(string(bytes.TrimSpace(name))) {
		case "Content-Length", "Transfer-Encoding":
			if i > 0 {
				continue
			}
		}
		out = append(out, line...)
	}
	return out
}

// exchange is one request on an HTTP connection, waiting for its answer.
//
// The HTTP toxics judge a request by its head, when it is read: one that
// answers it itself must do so before any of it is forwarded. lost_reply
// judges it by its bytes, as on any connection, once it is whole: when its
// body has been forwarded, or when its answer begins if that comes first
// (settle). Meanwhile the request's head and body data (a chunked body's
// without its framing) are kept, up to maxRequest, as they are forwarded.
type exchange struct {
	method string
	kind   string // the request's kind (Kind)
	// answer, when the relay answers the request itself, is what it
	// sends in the request's turn; closing ends the connection after.
	answer  []byte
	closing bool
	// raw: from this request on the connection is no longer HTTP (an
	// upgrade, a CONNECT, bytes that are not a request): copy it as it
	// comes.
	raw bool

	mu sync.Mutex
	// req is the request's first bytes, to match and for the hits; it
	// grows until the request is judged (open), and stays as it is after.
	req   []byte
	fault *Fault
	open  bool
}

// Write keeps the body data p, as far as req has room, until the
// request is judged.
func (ex *exchange) Write(p []byte) (int, error) {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if ex.open && len(ex.req) < maxRequest {
		ex.req = append(ex.req, p[:min(len(p), maxRequest-len(ex.req))]...)
	}
	return len(p), nil
}

// settle has lost_reply judge the request, if it is still to, with what of
// it is here; it returns the fault that acts on the request, or nil.
func (ex *exchange) settle(p *pair) *Fault {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if ex.open {
		ex.open = false
		ex.fault = p.decide(ex.req, nil, ex.kind)
	}
	return ex.fault
}

// httpConn is a pair's connection read as HTTP/1.x.
type httpConn struct {
	p       *pair
	client  *bufio.Reader
	up      *bufio.Reader
	pending chan *exchange
	// gone is closed when the answers' side ends; rawAnswers says it
	// went on copying raw (the upstream spoke other than HTTP).
	gone       chan struct{}
	goneOnce   sync.Once
	rawAnswers atomic.Bool
	// poked is closed once the upstream's read deadline was set to hand
	// the answers over (pair.requests).
	poked chan struct{}
}

// stopTaking says the answers' side takes no more exchanges.
func (hc *httpConn) stopTaking() { hc.goneOnce.Do(func() { close(hc.gone) }) }

func newHTTPConn(p *pair, first []byte) *httpConn {
	return &httpConn{
		p:       p,
		client:  bufio.NewReaderSize(io.MultiReader(bytes.NewReader(first), p.down), 32<<10),
		pending: make(chan *exchange, 64),
		gone:    make(chan struct{}),
		poked:   make(chan struct{}),
	}
}

// requests reads the client's requests, decides what each fault does to
// each, queues it for its answer, and forwards those the relay does not
// answer itself.
func (hc *httpConn) requests() {
	p := hc.p
	defer close(hc.pending)
	for {
		raw, err := readHead(hc.client)
		if p.lost.Load() {
			hc.drain()
			return
		}
		if err != nil {
			switch {
			case errors.Is(err, errNotHTTP):
				hc.passRaw(raw)
			case len(bytes.TrimSpace(raw)) == 0 && errors.Is(err, io.EOF):
				p.up.CloseWrite() // the client is done
			default:
				p.abort() // the client went away mid-head
			}
			return
		}
		h, err := parseHead(raw, true)
		if err != nil {
			hc.passRaw(raw)
			return
		}
		b := requestBody(h)
		kind := HTTPKind(h.method, h.target)
		p.r.seen.count(kind, time.Now())
		ex := &exchange{method: h.method, kind: kind, req: raw, fault: p.decide(raw, h, kind)}
		if f := ex.fault; f != nil && f.answer != nil {
			// Answered here: the body is read and dropped, unless the
			// client waits for a 100 Continue before sending it; then the
			// connection ends after the answer.
			ex.closing = h.closing || h.expect
			ex.answer = f.answer.bytes(f.Name, h.method, ex.closing)
			if !h.expect {
				if err := copyBody(io.Discard, hc.client, b, nil); err != nil {
					ex.closing = true
				}
			}
			if !hc.queue(ex) {
				// Its answer cannot come in its turn.
				if p.lost.Load() {
					hc.drain()
				} else {
					p.abort()
				}
				return
			}
			if ex.closing {
				return
			}
			continue
		}
		// Kept whole for lost_reply, when one may judge it.
		var data io.Writer
		if ex.fault == nil && slices.ContainsFunc(p.r.current(), func(f *Fault) bool { return !f.http() }) {
			ex.open, data = true, ex
		}
		if !hc.queue(ex) {
			hc.unqueued(raw, b)
			return
		}
		if _, err := p.up.Write(raw); err != nil {
			hc.failed()
			return
		}
		if err := copyBody(p.up, hc.client, b, data); err != nil {
			hc.failed()
			return
		}
		ex.settle(p)
		if h.upgrade {
			if hc.queue(&exchange{raw: true}) {
				hc.copyRaw()
			} else {
				hc.unqueued(nil, body{none: true})
			}
			return
		}
	}
}

// queue puts ex in line for its answer; false when the answers' side has
// ended (the connection is ending, or its answers went raw).
func (hc *httpConn) queue(ex *exchange) bool {
	select {
	case hc.pending <- ex:
		return true
	case <-hc.gone:
		return false
	}
}

// unqueued deals with a request (its head raw, its body b still to read)
// that found the answers' side gone: where the answers go on raw, so does
// the rest of the connection, this request first; where an answer was lost
// and is held, the client's bytes go nowhere; else the connection ends.
func (hc *httpConn) unqueued(raw []byte, b body) {
	p := hc.p
	switch {
	case p.lost.Load():
		hc.drain()
	case hc.rawAnswers.Load():
		if len(raw) > 0 {
			if _, err := p.up.Write(raw); err != nil {
				p.abort()
				return
			}
			if err := copyBody(p.up, hc.client, b, nil); err != nil {
				p.abort()
				return
			}
		}
		hc.copyRaw()
	default:
		p.abort()
	}
}

// passRaw sends what is not an HTTP request on as it came, and the rest of
// the connection with it.
func (hc *httpConn) passRaw(raw []byte) {
	if !hc.queue(&exchange{raw: true}) {
		hc.unqueued(raw, body{none: true})
		return
	}
	if len(raw) > 0 {
		if _, err := hc.p.up.Write(raw); err != nil {
			hc.p.abort()
			return
		}
	}
	hc.copyRaw()
}

// copyRaw copies the client's bytes to the upstream until either ends.
func (hc *httpConn) copyRaw() {
	if _, err := io.Copy(hc.p.up, hc.client); err != nil {
		hc.p.abort()
		return
	}
	hc.p.up.CloseWrite()
}

// failed ends the connection when a request could not be forwarded: at
// once, unless its answer was lost and it is held.
func (hc *httpConn) failed() {
	if hc.p.lost.Load() {
		hc.drain()
		return
	}
	hc.p.abort()
}

// drain reads what a client sends on a connection whose answer was lost:
// it goes nowhere, and a held connection stays silent after the client
// stops sending, until it is cut.
func (hc *httpConn) drain() {
	_, _ = io.Copy(io.Discard, hc.client)
	hc.p.held()
}

// answers sends each request's answer in its turn: the upstream's, as a
// fault says, or the relay's own. first is what the upstream sent first
// (already read), or firstErr why it sent nothing.
func (hc *httpConn) answers(first []byte, firstErr error) {
	p := hc.p
	defer hc.stopTaking()
	hc.up = bufio.NewReaderSize(io.MultiReader(bytes.NewReader(first), p.up), 32<<10)
	// ready says the upstream has sent bytes (or err, that it ended) not
	// yet read as an answer: while no request waits, the relay watches
	// for it, so that an upstream that closes an idle connection closes
	// the client's too, as it would without the relay.
	ready := make(chan error, 1)
	watching := true
	if len(first) > 0 || firstErr != nil {
		ready <- firstErr
	} else {
		go hc.watch(ready)
	}
	for {
		var ex *exchange
		var ok bool
		select {
		case ex, ok = <-hc.pending:
		case err := <-ready:
			watching = false
			select {
			case ex, ok = <-hc.pending:
				ready <- err // the answer to ex, or its end
				watching = true
			default:
				if err != nil {
					// The upstream closed an idle connection.
					hc.end()
					return
				}
				// The upstream spoke unasked (a 408 before it closes):
				// on as it comes.
				hc.copyAnswersRaw()
				return
			}
		}
		if !ok {
			// The client is done, and every answer it waited for sent:
			// what the upstream still sends goes on as it comes.
			if watching {
				<-ready
			}
			hc.copyAnswersRaw()
			return
		}
		if ex.answer != nil {
			// Counted first: the client may look at the hits the moment
			// it has its answer.
			ex.fault.acted(ex.req, ex.kind)
			if _, err := p.down.Write(ex.answer); err != nil {
				p.abort()
				return
			}
			if ex.closing {
				hc.end()
				return
			}
			continue
		}
		// The upstream's answer: wait for its first bytes.
		if watching {
			if err := <-ready; err != nil && hc.up.Buffered() == 0 {
				p.abort() // the upstream ended without answering
				return
			}
			watching = false
		}
		if ex.raw {
			hc.copyAnswersRaw()
			return
		}
		if !hc.answer(ex) {
			return
		}
		watching = true
		go hc.watch(ready)
	}
}

// end closes the client's side after what was sent, as a server does
// that closes a connection, and gives the client a while to read it and
// close its own; a client that does not is then cut off.
func (hc *httpConn) end() {
	hc.p.down.CloseWrite()
	hc.p.down.SetReadDeadline(time.Now().Add(endGrace))
}

// endGrace is how long a client has to close its side of a connection the
// relay ended.
const endGrace = 5 * time.Second

// watch waits until the upstream sends a byte or ends.
func (hc *httpConn) watch(ready chan<- error) {
	_, err := hc.up.Peek(1)
	ready <- err
}

// copyAnswersRaw copies the upstream's bytes to the client until either
// ends.
func (hc *httpConn) copyAnswersRaw() {
	hc.rawAnswers.Store(true)
	hc.stopTaking()
	if _, err := io.Copy(hc.p.down, hc.up); err != nil {
		hc.p.abort()
		return
	}
	hc.p.down.CloseWrite()
}

// answer reads the upstream's answer to ex and sends it on as ex's fault
// says; it reports whether the connection goes on.
func (hc *httpConn) answer(ex *exchange) bool {
	p := hc.p
	var h *head
	for {
		raw, err := readHead(hc.up)
		if err != nil {
			if len(raw) > 0 && errors.Is(err, errNotHTTP) {
				p.down.Write(raw)
				hc.copyAnswersRaw()
				return false
			}
			p.abort()
			return false
		}
		if h, err = parseHead(raw, false); err != nil {
			p.down.Write(raw)
			hc.copyAnswersRaw()
			return false
		}
		if h.status/100 != 1 || h.status == http.StatusSwitchingProtocols {
			break
		}
		// 100 Continue and the like: on at once, the answer follows.
		if _, err := p.down.Write(raw); err != nil {
			p.abort()
			return false
		}
	}
	f := ex.settle(hc.p)
	b := answerBody(h, ex.method)
	switch {
	case h.status == http.StatusSwitchingProtocols:
		if _, err := p.down.Write(h.raw); err != nil {
			p.abort()
			return false
		}
		hc.copyAnswersRaw()
		return false
	case f != nil && f.lose:
		// The work is done and answered: the answer goes nowhere.
		err := copyBody(io.Discard, hc.up, b, nil)
		if err == nil || b.toClose {
			f.acted(ex.req, ex.kind)
		}
		switch {
		case f.bad && err == nil:
			closing := b.toClose || h.closing
			bad := (&synthetic{status: http.StatusBadGateway, ctype: "text/plain; charset=utf-8", body: []byte("the answer was lost (gameday " + HTTPLostResponseType + ")\n")}).bytes(f.Name, ex.method, closing)
			return hc.sent(bad, !closing)
		default:
			// Reset, or held: the requests' side reads what the client
			// sends meanwhile, and ends with it.
			p.lose(f)
			return false
		}
	case f != nil && f.latency > 0:
		d := f.latency
		if f.jitter > 0 {
			d += time.Duration(rand.Int64N(int64(2*f.jitter+1))) - f.jitter
		}
		// Counted as the hold begins: the answer is delayed from now on,
		// and a fault lifted (its hits read) before the hold ends acted
		// on every answer it was holding.
		f.acted(ex.req, ex.kind)
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-p.ended:
			t.Stop()
			return false
		case <-p.r.ctx.Done():
			t.Stop()
			p.abort()
			return false
		}
	case f != nil && f.malformed != "" && !b.none:
		return hc.spoil(ex, h, b)
	}
	if _, err := p.down.Write(h.raw); err != nil {
		p.abort()
		return false
	}
	if err := copyBody(p.down, hc.up, b, nil); err != nil {
		p.abort()
		return false
	}
	return hc.sent(nil, !b.toClose && !h.closing)
}

// sent sends out (when not empty) to the client, and reports whether the
// connection goes on: not when the write failed (it is cut), nor when
// goesOn says the answer ended it (it is closed after what was sent).
func (hc *httpConn) sent(out []byte, goesOn bool) bool {
	if len(out) > 0 {
		if _, err := hc.p.down.Write(out); err != nil {
			hc.p.abort()
			return false
		}
	}
	if !goesOn {
		hc.end()
	}
	return goesOn
}

// spoil sends the answer h, its body b, as http_malformed says; it reports
// whether the connection goes on.
func (hc *httpConn) spoil(ex *exchange, h *head, b body) bool {
	p := hc.p
	data, cut, err := readBody(hc.up, b, maxSpoiled)
	if err != nil && !cut {
		p.abort()
		return false
	}
	half := data[:len(data)/2]
	start := withoutFraming(h.raw)
	if len(data) == 0 {
		// Nothing to spoil: the answer goes on as it was (framed anew),
		// and the fault did nothing to it.
		return hc.sent(fmt.Appendf(start, "Content-Length: 0\r\n\r\n"), !b.toClose && !h.closing)
	}
	ex.fault.acted(ex.req, ex.kind)
	var out []byte
	goesOn := false
	switch ex.fault.malformed {
	case "wrong_length":
		out = fmt.Appendf(start, "Content-Length: %d\r\n\r\n", len(data)+max(1, len(data)/2))
		out = append(out, data...)
	case "cut_json":
		out = fmt.Appendf(start, "Content-Length: %d\r\n\r\n", len(half))
		out = append(out, half...)
		goesOn = !b.toClose && !h.closing && !cut
	default: // truncate
		out = fmt.Appendf(start, "Content-Length: %d\r\n\r\n", len(data))
		out = append(out, half...)
	}
	return hc.sent(out, goesOn)
}
