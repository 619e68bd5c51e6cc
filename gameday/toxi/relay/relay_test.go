package relay

import (
	"bufio"
	"encoding/json"
	"errors"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// lineServer is an upstream that does the work a line asks for (records
// it), then answers "done LINE". Its record is what happened, whatever the
// client was told.
type lineServer struct {
	ln   net.Listener
	mu   sync.Mutex
	done []string
	wg   sync.WaitGroup
}

func newLineServer(t *testing.T) *lineServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &lineServer{ln: ln}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				rd := bufio.NewReader(c)
				for {
					line, err := rd.ReadString('\n')
					if err != nil {
						return
					}
					line = strings.TrimSpace(line)
					s.mu.Lock()
					s.done = append(s.done, line)
					s.mu.Unlock()
					if _, err := c.Write([]byte("done " + line + "\n")); err != nil {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() { ln.Close(); s.wg.Wait() })
	return s
}

func (s *lineServer) record() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.done...)
}

func startRelay(t *testing.T, upstream string, fs ...*Fault) *Relay {
	t.Helper()
	r, err := Listen(upstream)
	if err != nil {
		t.Fatal(err)
	}
	r.SetFaults(fs)
	t.Cleanup(func() { r.Close() })
	return r
}

func fault(t *testing.T, toxicity float32, lr toxic) *Fault {
	t.Helper()
	return namedFault(t, "lost", toxicity, lr)
}

func namedFault(t *testing.T, name string, toxicity float32, lr toxic) *Fault {
	t.Helper()
	f, ok, err := NewFault(name, toxicity, lr)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	return f
}

// client is one connection through the relay that sends a line and reads
// its answer, within a deadline.
type client struct {
	c  net.Conn
	rd *bufio.Reader
}

func dial(t *testing.T, addr string) *client {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &client{c: c, rd: bufio.NewReader(c)}
}

func (c *client) ask(line string, within time.Duration) (string, error) {
	c.c.SetDeadline(time.Now().Add(within))
	if _, err := c.c.Write([]byte(line + "\n")); err != nil {
		return "", err
	}
	ans, err := c.rd.ReadString('\n')
	return strings.TrimSpace(ans), err
}

// The request the fault picks is done by the upstream, and its answer
// never reaches the client: the connection ends instead. Requests it does
// not pick, before and after, are answered.
func TestLostReplyLosesTheAnswerOfWorkDone(t *testing.T) {
	s := newLineServer(t)
	r := startRelay(t, s.ln.Addr().String(), fault(t, 1, &LostReply{Match: "^CHARGE", Pick: Pick{First: 1}}))

	c := dial(t, r.Addr())
	if ans, err := c.ask("PING", 2*time.Second); err != nil || ans != "done PING" {
		t.Fatalf("PING: %q, %v", ans, err)
	}
	ans, err := c.ask("CHARGE order-1", 2*time.Second)
	if err == nil {
		t.Fatalf("CHARGE order-1 answered %q: the answer was not lost", ans)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("CHARGE order-1: %v; want the connection ended, not held", err)
	}
	// A new connection (the client's retry): the fault picked only the first.
	c2 := dial(t, r.Addr())
	if ans, err := c2.ask("CHARGE order-1", 2*time.Second); err != nil || ans != "done CHARGE order-1" {
		t.Fatalf("the retry: %q, %v", ans, err)
	}
	want := []string{"PING", "CHARGE order-1", "CHARGE order-1"}
	if got := s.record(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("the upstream did %q, want %q: the lost answer's work was done, once per ask", got, want)
	}
	hits, err := json.Marshal(&r.current()[0].pick.Hits)
	if want := `{"matched":2,"hit":1,"lost":1,"first":["CHARGE order-1\\x0a"],"kinds":{"CHARGE":1}}`; err != nil || string(hits) != want {
		t.Errorf("hits = %s, %v, want %s", hits, err, want)
	}
}

// then: hold keeps the connection open and silent: the client waits until
// its own deadline, as it would for an answer lost on the network.
func TestLostReplyHoldsUntilTheClientGivesUp(t *testing.T) {
	s := newLineServer(t)
	r := startRelay(t, s.ln.Addr().String(), fault(t, 1, &LostReply{Then: "hold"}))
	c := dial(t, r.Addr())
	_, err := c.ask("CHARGE order-2", 300*time.Millisecond)
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("ask with the answer held: %v, want the client's own deadline", err)
	}
	if got := s.record(); len(got) != 1 || got[0] != "CHARGE order-2" {
		t.Errorf("the upstream did %q, want the charge done", got)
	}
}

// every, first and probability pick among the matching requests; the
// draws follow the seed, so two runs over the same requests pick the same.
func TestLostReplyPicksBySeed(t *testing.T) {
	s := newLineServer(t)
	p := 0.5
	picked := func(lr *LostReply) string {
		r := startRelay(t, s.ln.Addr().String(), fault(t, 1, lr))
		var b strings.Builder
		for i := range 16 {
			c := dial(t, r.Addr())
			if _, err := c.ask("ASK "+string(rune('a'+i)), 2*time.Second); err != nil {
				b.WriteByte('x')
			} else {
				b.WriteByte('.')
			}
		}
		return b.String()
	}
	if got := picked(&LostReply{Pick: Pick{Every: 4}}); got != "...x...x...x...x" {
		t.Errorf("every 4: %s", got)
	}
	if got := picked(&LostReply{Pick: Pick{Every: 2, First: 6}}); got != ".x.x.x.........." {
		t.Errorf("every 2 of the first 6: %s", got)
	}
	a, b := picked(&LostReply{Pick: Pick{Probability: &p, Seed: 7}}), picked(&LostReply{Pick: Pick{Probability: &p, Seed: 7}})
	if a != b {
		t.Errorf("the same seed picked %s, then %s", a, b)
	}
	// The runner names each toxic after its run: two runs with one seed
	// pick alike whatever the names.
	run1 := startRelay(t, s.ln.Addr().String(), namedFault(t, "gameday-run1-lost", 1, &LostReply{Pick: Pick{Probability: &p, Seed: 7}}))
	run2 := startRelay(t, s.ln.Addr().String(), namedFault(t, "gameday-run2-lost", 1, &LostReply{Pick: Pick{Probability: &p, Seed: 7}}))
	var picks [2]strings.Builder
	for i, r := range []*Relay{run1, run2} {
		for range 16 {
			if _, err := dial(t, r.Addr()).ask("ASK", 2*time.Second); err != nil {
				picks[i].WriteByte('x')
			} else {
				picks[i].WriteByte('.')
			}
		}
	}
	if picks[0].String() != picks[1].String() {
		t.Errorf("one seed, two runs' toxic names: picked %s, then %s", picks[0].String(), picks[1].String())
	}
	if n := strings.Count(a, "x"); n == 0 || n == 16 {
		t.Errorf("probability 0.5 picked %s", a)
	}
	zero := 0.0
	if got := picked(&LostReply{Pick: Pick{Probability: &zero}}); got != strings.Repeat(".", 16) {
		t.Errorf("probability 0: %s", got)
	}
}

// Toxicity is the share of connections the toxic acts on; 0 is none.
func TestLostReplyToxicityZeroActsOnNoConnection(t *testing.T) {
	s := newLineServer(t)
	r := startRelay(t, s.ln.Addr().String(), fault(t, 0, &LostReply{}))
	c := dial(t, r.Addr())
	for i := range 3 {
		if _, err := c.ask("ASK", 2*time.Second); err != nil {
			t.Fatalf("ask %d: %v", i, err)
		}
	}
}

// A request is everything the client sent since the upstream last
// answered: lines pipelined in one write are one request, judged on all
// of its bytes.
func TestLostReplyPipelinedRequestsAreOne(t *testing.T) {
	s := newLineServer(t)
	r := startRelay(t, s.ln.Addr().String(), fault(t, 1, &LostReply{Match: "COMMIT"}))
	c := dial(t, r.Addr())
	c.c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.c.Write([]byte("BEGIN\nINSERT order-3\nCOMMIT\n")); err != nil {
		t.Fatal(err)
	}
	if ans, err := c.rd.ReadString('\n'); err == nil {
		t.Fatalf("answered %q: the pipeline's answer was not lost", ans)
	}
	deadline := time.Now().Add(2 * time.Second)
	for len(s.record()) < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := s.record(); len(got) != 3 {
		t.Errorf("the upstream did %q, want all three", got)
	}
}

// With no fault the relay copies both ways, half-closes included, and a
// fault removed stops acting on the next request.
func TestRelayWithoutFaultsOnlyCopies(t *testing.T) {
	s := newLineServer(t)
	f := fault(t, 1, &LostReply{})
	r := startRelay(t, s.ln.Addr().String(), f)
	r.SetFaults(nil)
	c := dial(t, r.Addr())
	for _, line := range []string{"A", "B", strings.Repeat("C", 100<<10)} {
		if ans, err := c.ask(line, 2*time.Second); err != nil || ans != "done "+line {
			t.Fatalf("ask %.10q: %.20q, %v", line, ans, err)
		}
	}
}

// Closing the relay ends every connection, a held one too.
func TestRelayCloseEndsHeldConnections(t *testing.T) {
	s := newLineServer(t)
	r, err := Listen(s.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	r.SetFaults([]*Fault{fault(t, 1, &LostReply{Then: "hold"})})
	c := dial(t, r.Addr())
	go c.ask("HELD", 10*time.Second)
	deadline := time.Now().Add(2 * time.Second)
	for len(s.record()) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	closed := make(chan error, 1)
	go func() { closed <- r.Close() }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close waited on a held connection")
	}
}

// A connection held silent by a fault that is then removed is reset at
// once: the fault is gone and the answer with it, so nothing holds it (the
// client would otherwise wait out its own deadline after the drill lifted
// the fault). A connection held by a fault that stays is not.
func TestRemovingTheFaultEndsItsHeldConnections(t *testing.T) {
	s := newLineServer(t)
	held, kept := fault(t, 1, &LostReply{Then: "hold", Match: "HELD"}), fault(t, 1, &LostReply{Then: "hold", Match: "KEPT"})
	r := startRelay(t, s.ln.Addr().String(), held, kept)
	ask := func(line string) (*client, chan error) {
		c := dial(t, r.Addr())
		done := make(chan error, 1)
		go func() {
			_, err := c.ask(line, 10*time.Second)
			done <- err
		}()
		return c, done
	}
	_, heldDone := ask("HELD 1")
	_, keptDone := ask("KEPT 1")
	lost := func(f *Fault) int64 {
		f.pick.Hits.mu.Lock()
		defer f.pick.Hits.mu.Unlock()
		return f.pick.Hits.Hit
	}
	deadline := time.Now().Add(5 * time.Second)
	for (lost(held) < 1 || lost(kept) < 1) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if lost(held) != 1 || lost(kept) != 1 {
		t.Fatalf("lost %d and %d answers, want one each", lost(held), lost(kept))
	}
	r.SetFaults([]*Fault{kept})
	select {
	case err := <-heldDone:
		if err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("held by a removed fault: %v, want the connection ended", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a connection held by a removed fault was still held")
	}
	select {
	case err := <-keptDone:
		t.Errorf("a connection held by a fault still in place ended: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
}

func TestFirstLine(t *testing.T) {
	for in, want := range map[string]string{
		"POST /v1/charges HTTP/1.1\r\nHost: pay\r\n\r\n{}": "POST /v1/charges HTTP/1.1",
		"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n":                   `*2\x0d\x0a$3\x0d\x0aGET\x0d\x0a$1\x0d\x0ak\x0d\x0a`,
		"Q\x00\x00\x00\x0bcommit\x00":                      `Q\x00\x00\x00\x0bcommit\x00`,
		strings.Repeat("a", 150):                           strings.Repeat("a", 100) + "…",
	} {
		if got := FirstLine([]byte(in)); got != want {
			t.Errorf("FirstLine(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCheckLostReply(t *testing.T) {
	for in, want := range map[string]string{
		`{"match":"COMMIT","first":3}`:   "",
		`{"match":"(unclosed"}`:          "lost_reply: match:",
		`{"every":-1}`:                   "lost_reply: every: -1 is negative",
		`{"probability":1.5}`:            "lost_reply: probability: 1.5 is not between 0 and 1",
		`{"then":"drop"}`:                `lost_reply: then: "drop" is neither reset nor hold`,
		`{"mtach":"COMMIT"}`:             `lost_reply has no attribute "mtach"`,
		`null`:                           "",
		`{"first":"three"}`:              "lost_reply: attributes:",
		`{"hits":{"lost":99},"seed":42}`: "",
	} {
		err := CheckLostReply([]byte(in))
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", in, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: %v, want %q", in, err, want)
		}
	}
}
