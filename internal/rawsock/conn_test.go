//go:build unix

package rawsock_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/internal/rawsock"
)

// pair returns two ends of a loopback TCP connection, wrapped or, to
// compare, as the *net.TCPConn they are. Each end has a deadline 10 s
// away, so that a test that goes wrong fails rather than hangs; a test
// that needs its own deadlines sets them.
func pair(t *testing.T, wrapped bool) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var l net.Listener = ln
	dial := (&net.Dialer{Timeout: 5 * time.Second}).DialContext
	if wrapped {
		l, dial = rawsock.Listener{Listener: ln}, rawsock.Dialer(&net.Dialer{Timeout: 5 * time.Second})
	}
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			accepted <- nil
			return
		}
		accepted <- c
	}()
	client, err = dial(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server = <-accepted
	if server == nil {
		t.Fatal("accept failed")
	}
	for _, c := range []net.Conn{client, server} {
		if _, ok := c.(*rawsock.Conn); ok != wrapped {
			t.Fatalf("got %T, wrapped %v", c, wrapped)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
	}
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

// both runs f on a *net.TCPConn pair and on a wrapped pair: what the
// wrapped one must do is what the connection it wraps does.
func both(t *testing.T, f func(t *testing.T, wrapped bool)) {
	t.Run("net.TCPConn", func(t *testing.T) { f(t, false) })
	t.Run("rawsock.Conn", func(t *testing.T) { f(t, true) })
}

func tcp(c net.Conn) *net.TCPConn {
	if rc, ok := c.(*rawsock.Conn); ok {
		return rc.TCPConn
	}
	return c.(*net.TCPConn)
}

func TestWrapLeavesWhatIsNotTCPAlone(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if got := rawsock.Wrap(a); got != a {
		t.Fatalf("Wrap(pipe) = %T, want the pipe itself", got)
	}
}

func TestReadsAndWritesBothWays(t *testing.T) {
	both(t, func(t *testing.T, wrapped bool) {
		c, s := pair(t, wrapped)
		if n, err := c.Write([]byte("PING\r\n")); n != 6 || err != nil {
			t.Fatalf("write: %d, %v", n, err)
		}
		buf := make([]byte, 64)
		n, err := io.ReadAtLeast(s, buf, 6)
		if err != nil || string(buf[:n]) != "PING\r\n" {
			t.Fatalf("server read %q, %v", buf[:n], err)
		}
		if n, err := s.Write([]byte("+PONG\r\n")); n != 7 || err != nil {
			t.Fatalf("write: %d, %v", n, err)
		}
		n, err = io.ReadAtLeast(c, buf, 7)
		if err != nil || string(buf[:n]) != "+PONG\r\n" {
			t.Fatalf("client read %q, %v", buf[:n], err)
		}
		if n, err := c.Read(nil); n != 0 || err != nil {
			t.Fatalf("empty read: %d, %v; want 0, nil", n, err)
		}
	})
}

func TestEndOfStreamIsEOF(t *testing.T) {
	both(t, func(t *testing.T, wrapped bool) {
		c, s := pair(t, wrapped)
		if _, err := s.Write([]byte("bye")); err != nil {
			t.Fatal(err)
		}
		tcp(s).CloseWrite()
		got, err := io.ReadAll(c)
		if err != nil || string(got) != "bye" {
			t.Fatalf("ReadAll = %q, %v; want \"bye\", nil (io.EOF at the end)", got, err)
		}
		if n, err := c.Read(make([]byte, 8)); n != 0 || err != io.EOF {
			t.Fatalf("read after the end: %d, %v; want 0, io.EOF", n, err)
		}
	})
}

func TestReadDeadlineIsATimeout(t *testing.T) {
	both(t, func(t *testing.T, wrapped bool) {
		c, s := pair(t, wrapped)
		c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		_, err := c.Read(make([]byte, 8))
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("read past the deadline: %v; want a net.Error that is a timeout (os.ErrDeadlineExceeded)", err)
		}
		var oe *net.OpError
		if !errors.As(err, &oe) || oe.Op != "read" || oe.Net != "tcp" || oe.Err != os.ErrDeadlineExceeded {
			t.Fatalf("read past the deadline: %#v; want a *net.OpError of op \"read\" around os.ErrDeadlineExceeded itself", err)
		}

		// A read already waiting is woken by a deadline set in the past:
		// how net/http's server takes back its background read after
		// each request.
		c.SetReadDeadline(time.Time{})
		done := make(chan error, 1)
		go func() {
			_, err := c.Read(make([]byte, 8))
			done <- err
		}()
		time.Sleep(20 * time.Millisecond) // most likely waiting by now; if not, it fails at once all the same
		c.SetReadDeadline(time.Unix(1, 0))
		select {
		case err := <-done:
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("waiting read, deadline set in the past: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("a waiting read was not woken by a deadline set in the past")
		}

		// With something to read and the deadline passed, the read says
		// the deadline, not the data; once the deadline moves, the data.
		if _, err := s.Write([]byte("late")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
		if n, err := c.Read(make([]byte, 8)); n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("read with data waiting and the deadline passed: %d, %v", n, err)
		}
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 8)
		if n, err := io.ReadAtLeast(c, buf, 4); string(buf[:n]) != "late" || err != nil {
			t.Fatalf("read once the deadline moved: %q, %v", buf[:n], err)
		}
	})
}

func TestClosedIsNetErrClosed(t *testing.T) {
	both(t, func(t *testing.T, wrapped bool) {
		c, _ := pair(t, wrapped)
		c.Close()
		if _, err := c.Read(make([]byte, 8)); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("read of a closed connection: %v; want net.ErrClosed", err)
		}
		if _, err := c.Read(nil); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("empty read of a closed connection: %v; want net.ErrClosed", err)
		}
		if _, err := c.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("write to a closed connection: %v; want net.ErrClosed", err)
		}
	})
}

func TestResetIsTheSystemsError(t *testing.T) {
	both(t, func(t *testing.T, wrapped bool) {
		c, s := pair(t, wrapped)
		tcp(s).SetLinger(0)
		s.Close() // a reset, not a FIN
		_, err := c.Read(make([]byte, 8))
		if !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("read of a reset connection: %v; want ECONNRESET", err)
		}
		var oe *net.OpError
		if !errors.As(err, &oe) || oe.Op != "read" || oe.Addr == nil {
			t.Fatalf("read of a reset connection: %#v; want a *net.OpError naming the peer", err)
		}
	})
}

// A write larger than the socket's buffers goes in parts, waiting through
// the poller for a reader that comes late, and arrives whole and in order;
// to a reader that never comes, it ends at the write deadline.
func TestWriteLargerThanTheSocket(t *testing.T) {
	c, s := pair(t, true)
	// Small buffers, fixed: the kernel would otherwise grow them to take
	// the whole write.
	tcp(c).SetWriteBuffer(64 << 10)
	tcp(s).SetReadBuffer(64 << 10)
	want := bytes.Repeat([]byte("0123456789abcdef"), 1<<20) // 16 MiB
	got := make(chan []byte, 1)
	go func() {
		time.Sleep(50 * time.Millisecond) // late: the writer fills the buffers first
		b, _ := io.ReadAll(io.LimitReader(s, int64(len(want))))
		got <- b
	}()
	if n, err := c.Write(want); n != len(want) || err != nil {
		t.Fatalf("write: %d of %d, %v", n, len(want), err)
	}
	if b := <-got; !bytes.Equal(b, want) {
		t.Fatalf("read %d bytes, not what was written", len(b))
	}

	c.SetWriteDeadline(time.Now().Add(200 * time.Millisecond))
	n, err := c.Write(want) // nobody reads now
	if !errors.Is(err, os.ErrDeadlineExceeded) || n >= len(want) {
		t.Fatalf("write nobody reads: %d of %d, %v; want the deadline before the end", n, len(want), err)
	}
}

// Writes from several goroutines at once, as net.Conn allows, while the
// other end writes back: each Write goes whole (a reader of fixed-size
// records finds each record one writer's), and nothing is lost.
func TestConcurrentReadsAndWrites(t *testing.T) {
	c, s := pair(t, true)
	const writers, each, size = 4, 200, 512
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			msg := bytes.Repeat([]byte{byte('a' + w)}, size)
			for i := 0; i < each; i++ {
				if _, err := c.Write(msg); err != nil {
					t.Error(err)
					return
				}
			}
		}(w)
	}
	// Meanwhile the other way: s writes, c reads.
	back := bytes.Repeat([]byte("z"), 1<<20)
	wg.Add(2)
	go func() {
		defer wg.Done()
		if _, err := s.Write(back); err != nil {
			t.Error(err)
		}
	}()
	go func() {
		defer wg.Done()
		b := make([]byte, len(back))
		if _, err := io.ReadFull(c, b); err != nil || !bytes.Equal(b, back) {
			t.Errorf("the other way: %v", err)
		}
	}()
	counts := make(map[byte]int)
	rec := make([]byte, size)
	for i := 0; i < writers*each; i++ {
		if _, err := io.ReadFull(s, rec); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if !bytes.Equal(rec, bytes.Repeat(rec[:1], size)) {
			t.Fatalf("record %d mixes two writes: %q...", i, rec[:16])
		}
		counts[rec[0]]++
	}
	wg.Wait()
	for w := 0; w < writers; w++ {
		if got := counts[byte('a'+w)]; got != each {
			t.Errorf("writer %c: %d records arrived, want %d", 'a'+w, got, each)
		}
	}
}

// net/http's server and client over wrapped connections, as the checkout
// and its payment client run: keep-alive requests with bodies (the server's
// background read is taken back by a deadline in the past after each), and
// a client that goes away mid-request cancels the handler's context.
func TestHTTPServerAndClient(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	started, gone := make(chan struct{}), make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Write(bytes.ToUpper(b))
	})
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-r.Context().Done() // the client went away: the server's read saw it
		close(gone)
	})
	srv := &http.Server{Handler: mux}
	go srv.Serve(rawsock.Listener{Listener: ln})
	defer srv.Close()

	var dials int
	var dmu sync.Mutex
	dial := rawsock.Dialer(&net.Dialer{})
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		dmu.Lock()
		dials++
		dmu.Unlock()
		return dial(ctx, network, addr)
	}}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	url := "http://" + ln.Addr().String()
	for i := 0; i < 50; i++ {
		resp, err := hc.Post(url+"/echo", "text/plain", strings.NewReader("charge 4500"))
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || string(b) != "CHARGE 4500" {
			t.Fatalf("request %d: %q, %v", i, b, err)
		}
	}
	if dials > 2 {
		t.Errorf("%d connections dialled for 50 requests in turn; want them kept alive", dials)
	}

	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/hang", nil)
	errc := make(chan error, 1)
	go func() {
		resp, err := hc.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("the request never reached its handler")
	}
	cancel()
	<-errc
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		t.Fatal("the handler's context was not cancelled when its client went away")
	}
}
