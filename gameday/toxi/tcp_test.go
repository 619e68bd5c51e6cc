package toxi_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/Shopify/toxiproxy/v2/toxics"

	"github.com/gameday-dev/gameday/gameday/toxi"
	"github.com/gameday-dev/gameday/gameday/toxi/tcp"
	"github.com/gameday-dev/gameday/internal/testenv"

	"github.com/gameday-dev/gameday/internal/loopback"
)

// stockToxics puts Toxiproxy's own toxics back in its registry for the
// rest of the test — a Toxiproxy started meanwhile serves them, as a stock
// one does — and gameday's (package tcp) when it ends. Tests here do not
// run in parallel.
func stockToxics(t *testing.T) {
	t.Helper()
	stock := map[string]toxics.Toxic{
		"bandwidth": new(toxics.BandwidthToxic), "latency": new(toxics.LatencyToxic), "limit_data": new(toxics.LimitDataToxic),
		"noop": new(toxics.NoopToxic), "slicer": new(toxics.SlicerToxic), "slow_close": new(toxics.SlowCloseToxic),
		"timeout": new(toxics.TimeoutToxic),
	}
	ours := map[string]toxics.Toxic{
		"bandwidth": new(tcp.Bandwidth), "latency": new(tcp.Latency), "limit_data": new(tcp.LimitData),
		"noop": new(tcp.Noop), "slicer": new(tcp.Slicer), "slow_close": new(tcp.SlowClose),
		"timeout": new(tcp.Timeout),
	}
	if len(stock) != len(tcp.Types) {
		t.Fatalf("package tcp serves %v: this helper knows %d of them", tcp.Types, len(stock))
	}
	for name, x := range stock {
		toxics.Register(name, x)
	}
	t.Cleanup(func() {
		for name, x := range ours {
			toxics.Register(name, x)
		}
	})
}

// echo is an upstream that sends back what it reads; bye one that sends
// "bye" and closes. Each returns its address.
func echo(t *testing.T) string {
	return serveEach(t, func(c net.Conn) { _, _ = io.Copy(c, c) })
}

func bye(t *testing.T) string {
	return serveEach(t, func(c net.Conn) { _, _ = io.WriteString(c, "bye") })
}

// serveEach serves every connection to a loopback address with serve.
func serveEach(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	return loopback.Serve(t, func(_ int, c net.Conn) { serve(c) })
}

// dialProxy connects to a proxy, with a deadline for the whole exchange.
func dialProxy(t *testing.T, addr string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	return conn
}

// gameday's TCP toxics (package tcp) do what Toxiproxy's own do, with the
// same attributes: each check passes on both. (They differ only in that a
// removal never waits on them for ever: TestRemovingAToxicNobodyReadsDoesNotHang.)
func TestTCPToxicsDoWhatToxiproxysDo(t *testing.T) {
	checks := []struct {
		name   string
		toxics []toxi.Toxic
		check  func(t *testing.T, proxy func(upstream string) string) error
	}{
		{"latency delays each answer", []toxi.Toxic{{Type: "latency", Attributes: map[string]any{"latency": 150}}}, func(t *testing.T, proxy func(upstream string) string) error {
			return roundTripTakes(t, proxy, 150*time.Millisecond, time.Second)
		}},
		{"latency ± jitter", []toxi.Toxic{{Type: "latency", Attributes: map[string]any{"latency": 150, "jitter": 50}}}, func(t *testing.T, proxy func(upstream string) string) error {
			return roundTripTakes(t, proxy, 100*time.Millisecond, time.Second)
		}},
		{"two latencies add up", []toxi.Toxic{{Type: "latency", Attributes: map[string]any{"latency": 100}}, {Type: "latency", Attributes: map[string]any{"latency": 100}}}, func(t *testing.T, proxy func(upstream string) string) error {
			// Well past one latency: Toxiproxy's own times each wait from
			// the chunk's timestamp, read off a clock a VM's timer can
			// round, and one run on a CI machine came in at 196 ms.
			return roundTripTakes(t, proxy, 160*time.Millisecond, time.Second)
		}},
		{"bandwidth limits the rate", []toxi.Toxic{{Type: "bandwidth", Attributes: map[string]any{"rate": 100}}}, func(t *testing.T, proxy func(upstream string) string) error {
			// 50,000 bytes at 100 KB/s: half a second.
			conn := dialProxy(t, proxy(streamer(t)))
			start := time.Now()
			if _, err := io.ReadFull(conn, make([]byte, 50_000)); err != nil {
				return err
			}
			if took := time.Since(start); took < 350*time.Millisecond || took > 3*time.Second {
				return fmt.Errorf("50,000 bytes at 100 KB/s took %s", took)
			}
			return nil
		}},
		{"slicer slices", []toxi.Toxic{{Type: "slicer", Attributes: map[string]any{"average_size": 10, "size_variation": 5, "delay": 2000}}}, func(t *testing.T, proxy func(upstream string) string) error {
			conn := dialProxy(t, proxy(echo(t)))
			sent := bytes.Repeat([]byte("0123456789"), 20)
			if _, err := conn.Write(sent); err != nil {
				return err
			}
			var got []byte
			reads, biggest := 0, 0
			buf := make([]byte, 1024)
			for len(got) < len(sent) {
				n, err := conn.Read(buf)
				if err != nil {
					return err
				}
				got = append(got, buf[:n]...)
				reads, biggest = reads+1, max(biggest, n)
			}
			if !bytes.Equal(got, sent) || reads < 5 {
				return fmt.Errorf("200 bytes came back in %d reads (the biggest %d): %q", reads, biggest, got)
			}
			return nil
		}},
		{"slow_close delays the close", []toxi.Toxic{{Type: "slow_close", Attributes: map[string]any{"delay": 300}}}, func(t *testing.T, proxy func(upstream string) string) error {
			conn := dialProxy(t, proxy(bye(t)))
			start := time.Now()
			got, err := io.ReadAll(conn)
			if took := time.Since(start); err != nil || string(got) != "bye" || took < 300*time.Millisecond || took > 3*time.Second {
				return fmt.Errorf("read %q, %v; the close came after %s", got, err, took)
			}
			return nil
		}},
		{"limit_data closes after its bytes", []toxi.Toxic{{Type: "limit_data", Attributes: map[string]any{"bytes": 1000}}}, func(t *testing.T, proxy func(upstream string) string) error {
			conn := dialProxy(t, proxy(streamer(t)))
			got, err := io.ReadAll(conn)
			if len(got) != 1000 {
				return fmt.Errorf("read %d bytes (%v), want 1000 then the close", len(got), err)
			}
			return nil
		}},
		{"noop changes nothing", []toxi.Toxic{{Type: "noop"}}, func(t *testing.T, proxy func(upstream string) string) error {
			return roundTripTakes(t, proxy, 0, time.Second)
		}},
		{"timeout drops the answer and closes after its timeout", []toxi.Toxic{{Type: "timeout", Attributes: map[string]any{"timeout": 300}}}, func(t *testing.T, proxy func(upstream string) string) error {
			conn := dialProxy(t, proxy(echo(t)))
			start := time.Now()
			if _, err := conn.Write([]byte("x")); err != nil {
				return err
			}
			got, err := io.ReadAll(conn)
			if took := time.Since(start); err != nil || len(got) != 0 || took < 250*time.Millisecond || took > 3*time.Second {
				return fmt.Errorf("read %q, %v; the close came after %s", got, err, took)
			}
			return nil
		}},
	}
	for _, whose := range []string{"gameday's", "Toxiproxy's"} {
		t.Run(whose, func(t *testing.T) {
			if whose == "Toxiproxy's" {
				stockToxics(t)
			}
			c := testenv.Toxiproxy(t)
			for i, ch := range checks {
				t.Run(ch.name, func(t *testing.T) {
					proxy := func(upstream string) string {
						name := fmt.Sprintf("p%d", i)
						listen := testenv.Proxy(t, c, name, upstream)
						for j, x := range ch.toxics {
							x.Name = fmt.Sprintf("%s-%d", x.Type, j)
							testenv.AddToxic(t, c, name, x)
						}
						return listen
					}
					if err := ch.check(t, proxy); err != nil {
						t.Error(err)
					}
				})
			}
		})
	}
}

// roundTripTakes checks that one byte sent through a proxy to an echo
// upstream comes back after at least least, and within most.
func roundTripTakes(t *testing.T, proxy func(upstream string) string, least, most time.Duration) error {
	conn := dialProxy(t, proxy(echo(t)))
	start := time.Now()
	if _, err := conn.Write([]byte("x")); err != nil {
		return err
	}
	if _, err := io.ReadFull(conn, make([]byte, 1)); err != nil {
		return err
	}
	if took := time.Since(start); took < least || took > most {
		return fmt.Errorf("the round trip took %s, want %s to %s", took, least, most)
	}
	return nil
}

// gameday's TCP toxics keep a stream whole, in order, while they are
// interrupted over and over — a toxic added after one and removed, the
// toxic removed and added again — under a stream at full speed: what one
// kept when interrupted goes on first, or on its removal. (Changing a
// toxic interrupts it as adding one after it does; Toxiproxy's own update
// writes the toxicity its running stubs read, a race of its own.)
func TestTCPToxicsKeepTheStreamWhole(t *testing.T) {
	c := testenv.Toxiproxy(t)
	ctx := context.Background()
	for i, tx := range []toxi.Toxic{
		{Type: "latency", Attributes: map[string]any{"latency": 1}},
		{Type: "bandwidth", Attributes: map[string]any{"rate": 1_000_000}},
		{Type: "slicer", Attributes: map[string]any{"average_size": 1024, "size_variation": 512}},
		{Type: "slow_close", Attributes: map[string]any{"delay": 1}},
		{Type: "limit_data", Attributes: map[string]any{"bytes": 1 << 40}},
		{Type: "noop"},
	} {
		t.Run(tx.Type, func(t *testing.T) {
			name := fmt.Sprintf("whole-%d", i)
			conn := dialProxy(t, testenv.Proxy(t, c, name, streamer(t)))
			_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
			tx.Name = "toxic"
			testenv.AddToxic(t, c, name, tx)
			stop := make(chan struct{})
			read := make(chan error, 1)
			var numbers uint64
			go func() {
				n, err := readCounter(conn, stop)
				numbers = n
				read <- err
			}()
			const rounds = 10
			deadline := time.Now().Add(20 * time.Second)
			for round := range rounds {
				if time.Now().After(deadline) {
					t.Fatalf("%d rounds in 20s", round)
				}
				steps := []func() error{
					func() error {
						_, err := c.AddToxic(ctx, name, toxi.Toxic{Name: "behind", Type: "latency", Attributes: map[string]any{"latency": 0}})
						return err
					},
					func() error { return c.RemoveToxic(ctx, name, "behind") },
					func() error { return c.RemoveToxic(ctx, name, "toxic") },
					func() error { _, err := c.AddToxic(ctx, name, tx); return err },
				}
				for _, step := range steps {
					if err := step(); err != nil {
						t.Fatalf("round %d: %v", round, err)
					}
				}
			}
			close(stop)
			if err := <-read; err != nil {
				t.Fatalf("after %d rounds, %d numbers read: %v", rounds, numbers, err)
			}
			if numbers < 1000 {
				t.Fatalf("%d numbers read: too few to show anything", numbers)
			}
		})
	}
}

// readCounter reads a streamer's numbers until stop is closed, and says
// which one was lost or moved, if any.
func readCounter(conn net.Conn, stop <-chan struct{}) (uint64, error) {
	var want uint64
	buf := make([]byte, 8*1024)
	var carry []byte
	for {
		select {
		case <-stop:
			return want, nil
		default:
		}
		n, err := conn.Read(buf)
		if err != nil {
			return want, fmt.Errorf("read after %d numbers: %w", want, err)
		}
		carry = append(carry, buf[:n]...)
		for len(carry) >= 8 {
			if got := binary.BigEndian.Uint64(carry); got != want {
				return want, fmt.Errorf("number %d of the stream is %d: a chunk was lost or moved", want, got)
			}
			want++
			carry = carry[8:]
		}
	}
}

// A latency or bandwidth toxic interrupted by a toxic added after it keeps
// to its delay and rate: what it held goes on when it is due. (Toxiproxy's
// own hand it on at once.)
func TestTCPToxicsKeepTheirPaceWhenInterrupted(t *testing.T) {
	c := testenv.Toxiproxy(t)
	for _, tc := range []struct {
		toxic    toxi.Toxic
		upstream func(*testing.T) string
		read     int
		least    time.Duration
	}{
		// One byte back from an echo, 300 ms late.
		{toxi.Toxic{Type: "latency", Attributes: map[string]any{"latency": 300}}, echo, 1, 280 * time.Millisecond},
		// 3,000 bytes at 10 KB/s: 300 ms.
		{toxi.Toxic{Type: "bandwidth", Attributes: map[string]any{"rate": 10}}, streamer, 3000, 250 * time.Millisecond},
	} {
		t.Run(tc.toxic.Type, func(t *testing.T) {
			name := "pace-" + tc.toxic.Type
			listen := testenv.Proxy(t, c, name, tc.upstream(t))
			tc.toxic.Name = "paced"
			testenv.AddToxic(t, c, name, tc.toxic)
			conn := dialProxy(t, listen)
			start := time.Now()
			if _, err := conn.Write([]byte("x")); err != nil {
				t.Fatal(err)
			}
			time.Sleep(50 * time.Millisecond) // the data is in the toxic
			testenv.AddToxic(t, c, name, toxi.Toxic{Name: "after", Type: "noop"})
			if _, err := io.ReadFull(conn, make([]byte, tc.read)); err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took < tc.least {
				t.Errorf("%d bytes came after %s, want %s at least: the toxic let them go when interrupted", tc.read, took, tc.least)
			}
		})
	}
}

// A timeout toxic removed closes the connections it held, as Toxiproxy's
// does (their data was dropped), and leaves open, whole, those its
// toxicity spared.
func TestTimeoutRemovedClosesOnlyWhatItHeld(t *testing.T) {
	c := testenv.Toxiproxy(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		toxicity float64
	}{
		{"held", 1},
		{"spared", 1e-6}, // all but one in a million
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := "timeout-" + tc.name
			listen := testenv.Proxy(t, c, name, echo(t))
			testenv.AddToxic(t, c, name, toxi.Toxic{Name: "held", Type: "timeout", Toxicity: tc.toxicity, Attributes: map[string]any{"timeout": 0}})
			conn := dialProxy(t, listen)
			if _, err := conn.Write([]byte("x")); err != nil {
				t.Fatal(err)
			}
			if tc.name == "spared" {
				if _, err := io.ReadFull(conn, make([]byte, 1)); err != nil {
					t.Fatalf("a spared connection's answer: %v", err)
				}
			}
			time.Sleep(50 * time.Millisecond) // the held answer is dropped
			if err := c.RemoveToxic(ctx, name, "held"); err != nil {
				t.Fatal(err)
			}
			_, _ = conn.Write([]byte("y"))
			got, err := io.ReadAll(io.LimitReader(conn, 1))
			switch {
			case tc.name == "held" && len(got) != 0:
				t.Errorf("a held connection after the removal: read %q; want it closed", got)
			case tc.name == "spared" && string(got) != "y":
				t.Errorf("a spared connection after the removal: read %q, %v; want it open", got, err)
			}
		})
	}
}
