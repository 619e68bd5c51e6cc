package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/toxi"
	"github.com/gameday-dev/gameday/internal/testenv"
)

// Bad flags and addresses: a clear error naming the flag, and exit code 2.
func TestBadInputExitsTwo(t *testing.T) {
	cases := []struct {
		args []string
		want string // in the error
	}{
		{nil, "no command"}, // nothing asked
		{[]string{"launch"}, `unknown command "launch"`},                           // a typo
		{[]string{"serve"}, "which service"},                                       // half a command
		{[]string{"serve", "cart"}, `unknown service "cart"`},                      // no such service
		{[]string{"serve", "checkout", "-listen", "nowhere"}, `-listen "nowhere"`}, // no port
		{[]string{"serve", "checkout", "-listen", "127.0.0.1:99999"}, "-listen"},   // port out of range
		{[]string{"serve", "checkout", "-inventory-redis", "redis"}, `inventory redis address "redis"`},
		{[]string{"serve", "checkout", "-payment-url", "ftp://x"}, `payment url "ftp://x"`},
		{[]string{"serve", "checkout", "-mode", "yolo"}, `mode "yolo"`},
		{[]string{"serve", "checkout", "-lease-ttl", "soon"}, "lease-ttl"}, // not a duration
		{[]string{"serve", "checkout", "-stock", "sku-1"}, "SKU=UNITS"},    // no units
		{[]string{"serve", "checkout", "-payment-failures", "-1"}, "payment-failures"},
		{[]string{"serve", "checkout", "-log-level", "loud"}, "-log-level"},
		{[]string{"serve", "checkout", "extra"}, `unexpected argument "extra"`},
		{[]string{"serve", "payment", "-min-latency", "2s", "-max-latency", "1s"}, "MaxLatency"},
		{[]string{"serve", "payment", "-decline-rate", "1.5"}, "DeclineRate"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(c.args, &stdout, &stderr)
			if code != exitUsage {
				t.Errorf("exit %d, want %d; stderr: %s", code, exitUsage, stderr.String())
			}
			if !strings.Contains(stderr.String(), c.want) {
				t.Errorf("stderr %q does not mention %q", stderr.String(), c.want)
			}
		})
	}
}

func TestHelpExitsZero(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"help"}, &stdout, &stderr); code != exitOK || !strings.Contains(stdout.String(), "serve checkout") {
		t.Errorf("help: exit %d, stdout %q", code, stdout.String())
	}
}

// buildBinary builds gameday once per test binary run.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "gameday")
	if err := testenv.GoBuild(bin, "."); err != nil {
		t.Fatal(err)
	}
	return bin
}

var listeningRE = regexp.MustCompile(`msg=listening addr=(\S+)`)

// syncBuffer is a log the reading goroutine writes while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) WriteString(v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.WriteString(v)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startServer starts the binary and waits for its "listening" line.
func startServer(t *testing.T, bin string, args ...string) (*exec.Cmd, string, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	log := &syncBuffer{}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if m := listeningRE.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	select {
	case a := <-addr:
		return cmd, a, log
	case <-time.After(20 * time.Second):
		t.Fatalf("%v never said it was listening", args)
	}
	return nil, "", nil
}

// stopServer sends sig and expects a clean exit 0.
func stopServer(t *testing.T, cmd *exec.Cmd, sig os.Signal) {
	t.Helper()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("after %v: %v", sig, err)
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("did not stop within 15s of %v", sig)
	}
}

// The real servers: the payment stand-in and the checkout start, serve a
// purchase end to end against a real redis-server, and shut down cleanly on
// SIGTERM and SIGINT.
func TestServeCheckoutAndPaymentEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	inv := testenv.Redis(t)
	sess := testenv.Redis(t)

	pay, payAddr, _ := startServer(t, bin, "serve", "payment", "-listen", "127.0.0.1:0", "-min-latency", "1ms", "-max-latency", "5ms", "-decline-rate", "0")
	// Payment goes through Toxiproxy, as in the README's environment.
	tp, tpAddr, _ := startServer(t, bin, "serve", "toxiproxy", "-listen", "127.0.0.1:0")
	proxy, err := toxi.NewClient(tpAddr).CreateProxy(context.Background(), "payment", "127.0.0.1:0", payAddr)
	if err != nil {
		t.Fatal(err)
	}
	co, coAddr, coLog := startServer(t, bin, "serve", "checkout", "-listen", "127.0.0.1:0",
		"-inventory-redis", inv.Addr(), "-session-redis", sess.Addr(), "-payment-url", "http://"+proxy.Listen, "-stock", "sku-1=3")

	body := `{"checkout_id":"co-1","shopper":"s-1","sku":"sku-1","session":"sess-1"}`
	resp, err := http.Post("http://"+coAddr+"/checkout", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(got), `"status":"confirmed"`) {
		t.Fatalf("checkout: %d %s\nlog:\n%s", resp.StatusCode, got, coLog)
	}

	var ledger struct {
		Ledgers []struct {
			Initial, Available, Sold int64
		} `json:"ledgers"`
	}
	getJSON(t, "http://"+coAddr+"/admin/ledger?sku=sku-1", &ledger)
	if len(ledger.Ledgers) != 1 || ledger.Ledgers[0].Sold != 1 || ledger.Ledgers[0].Available != 2 {
		t.Errorf("ledger = %+v", ledger)
	}
	var brk struct {
		Breakers map[string]struct{ State string } `json:"breakers"`
	}
	getJSON(t, "http://"+coAddr+"/admin/breakers", &brk)
	if brk.Breakers["payment"].State != "closed" || len(brk.Breakers) != 3 {
		t.Errorf("breakers = %+v", brk)
	}
	metrics := getText(t, "http://"+coAddr+"/metrics")
	for _, want := range []string{`gameday_breaker_state{dependency="payment"} 0`, `gameday_checkout_requests_total{code="200",outcome="confirmed"} 1`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %q", want)
		}
	}

	stopServer(t, co, syscall.SIGTERM)
	stopServer(t, pay, os.Interrupt)
	stopServer(t, tp, syscall.SIGTERM)
	if !strings.Contains(coLog.String(), "msg=stopped") {
		t.Errorf("checkout log lacks the clean stop:\n%s", coLog)
	}
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(getText(t, url)), v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

func getText(t *testing.T, url string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
