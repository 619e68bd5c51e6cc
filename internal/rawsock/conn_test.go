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

// pair returns two ends of a loopback TCP connection, both wrapped.
func pair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := rawsock.Listener{Listener: ln}.Accept()
		if err != nil {
			accepted <- nil
			return
		}
		accepted <- c
	}()
	client, err = rawsock.Dialer(&net.Dialer{Timeout: 5 * time.Second})(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server = <-accepted
	if server == nil {
		t.Fatal("accept failed")
	}
	for _, c := range []net.Conn{client, server} {
		if _, ok := c.(*rawsock.Conn); !ok {
			t.Fatalf("got %T, want *rawsock.Conn", c)
		}
	}
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
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
	c, s := pair(t)
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
		t.Fatalf("empty read: %d, %v; want 0, nil without waiting", n, err)
	}
}

func TestEndOfStreamIsEOF(t *testing.T) {
	c, s := pair(t)
	if _, err := s.Write([]byte("bye")); err != nil {
		t.Fatal(err)
	}
	s.(*rawsock.Conn).CloseWrite()
	got, err := io.ReadAll(c)
	if err != nil || string(got) != "bye" {
		t.Fatalf("ReadAll = %q, %v; want \"bye\", nil (io.EOF at the end)", got, err)
	}
	if n, err := c.Read(make([]byte, 8)); n != 0 || err != io.EOF {
		t.Fatalf("read after the end: %d, %v; want 0, io.EOF", n, err)
	}
}

func TestReadDeadlineIsATimeout(t *testing.T) {
	c, _ := pair(t)
	c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	_, err := c.Read(make([]byte, 8))
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline: %v; want a net.Error that is a timeout (os.ErrDeadlineExceeded)", err)
	}
	var oe *net.OpError
	if !errors.As(err, &oe) || oe.Op != "read" {
		t.Fatalf("read past the deadline: %#v; want a *net.OpError of op \"read\", as a *net.TCPConn says", err)
	}
	// A deadline in the past fails at once, before any wait: how net/http's
	// server takes back its background read.
	c.SetReadDeadline(time.Unix(1, 0))
	if _, err := c.Read(make([]byte, 8)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read with a deadline passed: %v", err)
	}
	c.SetReadDeadline(time.Time{})
}

func TestClosedIsNetErrClosed(t *testing.T) {
	c, _ := pair(t)
	c.Close()
	if _, err := c.Read(make([]byte, 8)); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("read of a closed connection: %v; want net.ErrClosed", err)
	}
	if _, err := c.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("write to a closed connection: %v; want net.ErrClosed", err)
	}
}

func TestResetIsTheSystemsError(t *testing.T) {
	c, s := pair(t)
	s.(*rawsock.Conn).SetLinger(0)
	s.Close() // a reset, not a FIN
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := c.Read(make([]byte, 8))
	if !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("read of a reset connection: %v; want ECONNRESET", err)
	}
	var oe *net.OpError
	if !errors.As(err, &oe) || oe.Op != "read" || oe.Addr == nil {
		t.Fatalf("read of a reset connection: %#v; want a *net.OpError naming the peer", err)
	}
}

// A write larger than the socket's buffers goes in parts, waiting through
// the poller for a reader that comes late, and arrives whole and in order;
// to a reader that never comes, it ends at the write deadline.
func TestWriteLargerThanTheSocket(t *testing.T) {
	c, s := pair(t)
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

	c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	n, err := c.Write(want) // nobody reads now
	if !errors.Is(err, os.ErrDeadlineExceeded) || n <= 0 || n >= len(want) {
		t.Fatalf("write nobody reads: %d of %d, %v; want part of it and the deadline", n, len(want), err)
	}
}

// Reads and writes from several goroutines at once, as net.Conn allows:
// every message arrives whole (each is written by one Write, read by
// length) and none is lost.
func TestConcurrentReadsAndWrites(t *testing.T) {
	c, s := pair(t)
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
	counts := make(map[byte]int)
	var mu sync.Mutex
	var rg sync.WaitGroup
	total := writers * each * size
	read := 0
	stop := time.Now().Add(10 * time.Second) // bounded, should a write fail
	for r := 0; r < 2; r++ {
		rg.Add(1)
		go func() {
			defer rg.Done()
			buf := make([]byte, 4096)
			for {
				mu.Lock()
				done := read >= total || time.Now().After(stop)
				mu.Unlock()
				if done {
					return
				}
				s.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
				n, err := s.Read(buf)
				mu.Lock()
				for _, b := range buf[:n] {
					counts[b]++
				}
				read += n
				mu.Unlock()
				if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	rg.Wait()
	for w := 0; w < writers; w++ {
		if got := counts[byte('a'+w)]; got != each*size {
			t.Errorf("writer %c: %d bytes arrived, want %d", 'a'+w, got, each*size)
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
	gone := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Write(bytes.ToUpper(b))
	})
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
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
	if dials != 1 {
		t.Errorf("%d connections dialled for 50 requests in turn; want 1 (kept alive)", dials)
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
	time.Sleep(50 * time.Millisecond)
	cancel()
	<-errc
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		t.Fatal("the handler's context was not cancelled when its client went away")
	}
}
