package toxi_test

import (
	"context"
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/toxi"
	"github.com/gameday-dev/gameday/internal/testenv"
)

// streamer is an upstream that, to every connection, writes a counter of
// 8-byte big-endian numbers from 0 as fast as it is read, until the
// connection ends; it returns its address.
func streamer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				buf := make([]byte, 8*512)
				for n := uint64(0); ; {
					for i := 0; i < len(buf); i += 8 {
						binary.BigEndian.PutUint64(buf[i:], n)
						n++
					}
					if _, err := conn.Write(buf); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// within runs fn, failing the test if it takes longer than d.
func within(t *testing.T, d time.Duration, what string, fn func() error) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	case <-time.After(d):
		t.Fatalf("%s: still waiting after %s (the API is stuck)", what, d)
	}
}

// A request-aware toxic followed on its proxy by a reset_peer that is
// holding the connection up (and then closes it) is removed at once, and
// the API goes on answering: the toxic never sits in a send that its
// removal cannot interrupt. Before, the removal waited for ever holding the
// proxy's lock, and every call after it hung.
func TestRemovalBeforeAResetPeerDoesNotHang(t *testing.T) {
	c := testenv.Toxiproxy(t)
	ctx := context.Background()
	listen := relayedProxy(t, c, "stream", streamer(t))
	for _, tx := range []toxi.Toxic{
		{Name: "lost", Type: "lost_reply", Stream: "downstream", Attributes: map[string]any{"match": "^never$"}},
		{Name: "reset", Type: "reset_peer", Stream: "downstream", Attributes: map[string]any{"timeout": 1500}},
	} {
		if _, err := c.AddToxic(ctx, "stream", tx); err != nil {
			t.Fatal(err)
		}
	}
	conn, err := net.Dial("tcp", listen)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// The answers flow into the chain; the reset_peer takes the first
	// chunk and waits its 1.5 s, reading nothing, then closes: the toxic
	// before it is left with a chunk nobody will take.
	time.Sleep(300 * time.Millisecond)
	within(t, 4*time.Second, "remove the lost_reply toxic", func() error {
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		return c.RemoveToxic(rctx, "stream", "lost")
	})
	within(t, 2*time.Second, "list the proxies after it", func() error {
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_, err := c.Proxies(rctx)
		return err
	})
}

// A request-aware toxic interrupted while the toxics after it are added
// and removed, over and over, under a stream at full speed, loses no byte
// and reorders none: what it held when interrupted goes on first.
func TestPassThroughKeepsTheStreamWhole(t *testing.T) {
	c := testenv.Toxiproxy(t)
	ctx := context.Background()
	listen := relayedProxy(t, c, "stream", streamer(t))
	if _, err := c.AddToxic(ctx, "stream", toxi.Toxic{Name: "lost", Type: "lost_reply", Stream: "downstream", Attributes: map[string]any{"match": "^never$"}}); err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", listen)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stop := make(chan struct{})
	churned := make(chan int)
	go func() {
		n := 0
		defer func() { churned <- n }()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := c.AddToxic(ctx, "stream", toxi.Toxic{Name: "slow", Type: "latency", Stream: "downstream", Attributes: map[string]any{"latency": 1}}); err != nil {
				t.Error(err)
				return
			}
			if err := c.RemoveToxic(ctx, "stream", "slow"); err != nil {
				t.Error(err)
				return
			}
			n++
		}
	}()
	// The stream is read until the churn has stopped, not only for the
	// two seconds: a toxic removed while nobody reads its output (the
	// latency toxic hands its chunk on as it is interrupted) would wait
	// for the reader, and that wait is the test's, not the proxy's.
	var want uint64
	buf := make([]byte, 8*1024)
	deadline := time.Now().Add(2 * time.Second)
	_ = conn.SetReadDeadline(deadline.Add(15 * time.Second))
	var carry []byte
	n, stopped := 0, false
	for reading := true; reading; {
		if !stopped && time.Now().After(deadline) {
			close(stop)
			stopped = true
		}
		select {
		case n = <-churned:
			reading = false
		default:
		}
		got, err := conn.Read(buf)
		if err != nil {
			t.Fatalf("read after %d numbers: %v", want, err)
		}
		carry = append(carry, buf[:got]...)
		for len(carry) >= 8 {
			if got := binary.BigEndian.Uint64(carry); got != want {
				t.Fatalf("number %d of the stream is %d: a chunk was lost or moved", want, got)
			}
			want++
			carry = carry[8:]
		}
	}
	if n < 10 || want < 1000 {
		t.Fatalf("%d toxics added and removed behind it, %d numbers read: too few to show anything", n, want)
	}
}
