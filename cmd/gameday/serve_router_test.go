package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gameday-dev/gameday/checkout"
	"github.com/gameday-dev/gameday/checkout/router"
	"github.com/gameday-dev/gameday/internal/testenv"
)

// gameday serve router, its routing Redis asking for the password given in
// the environment, says where it listens, answers 503 until a table is
// written, then sends a shop's request to its pod, and stops cleanly on
// SIGTERM without ever printing the password.
func TestServeRouter(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	rs := testenv.Redis(t)
	const password = "router-test-password"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin := redis.NewClient(&redis.Options{Addr: rs.Addr()})
	err := admin.ConfigSet(ctx, "requirepass", password).Err()
	admin.Close()
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: rs.Addr(), Password: password})
	t.Cleanup(func() { _ = rdb.Close() })
	pod := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "pod saw "+r.Method+" "+r.URL.Path+" for "+r.Header.Get("X-Shop"))
	}))
	t.Cleanup(pod.Close)

	t.Setenv(checkout.RedisPasswordEnv, password) // the child inherits it
	cmd, addr, log := startServer(t, bin, "serve", "router", "-listen", "127.0.0.1:0", "-routes-redis", rs.Addr(),
		"-refresh", "20ms", "-shop-header", "X-Shop")
	get := func(path, shop string) (int, http.Header, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+path, nil)
		if shop != "" {
			req.Header.Set("X-Shop", shop)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, string(b)
	}
	if code, _, body := get("/healthz", ""); code != http.StatusServiceUnavailable || !strings.Contains(body, "no_routes") {
		t.Errorf("/healthz with no table: %d %s, want 503 no_routes", code, body)
	}

	if _, err := router.WriteTable(ctx, rdb, router.Keys{}, map[string]string{"shop-a": "pod-1"}, map[string]string{"pod-1": pod.URL}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	code, _, body := get("/healthz", "")
	for code != http.StatusOK && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		code, _, body = get("/healthz", "")
	}
	if code != http.StatusOK {
		t.Fatalf("/healthz 5s after the table was written: %d %s, want 200; log:\n%s", code, body, log.String())
	}
	code, hdr, body := get("/orders/co-1", "shop-a")
	if code != http.StatusOK || body != "pod saw GET /orders/co-1 for shop-a" || hdr.Get(router.PodHeader) != "pod-1" {
		t.Errorf("shop-a's GET: %d %q, %s %q; want pod-1's answer", code, body, router.PodHeader, hdr.Get(router.PodHeader))
	}

	stopServer(t, cmd, syscall.SIGTERM)
	if strings.Contains(log.String(), password) {
		t.Errorf("the router's log shows the Redis password:\n%s", log.String())
	}
}

// Bad router flags are bad input: exit 2, naming the flag.
func TestServeRouterBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-refresh", "0s"}, "-refresh 0s"},           // no pause between loads
		{[]string{"-shop-header", ""}, "-shop-header"},        // no header to read
		{[]string{"-listen", "nowhere"}, `-listen "nowhere"`}, // no port
	} {
		var stdout, stderr bytes.Buffer
		code := run(append([]string{"serve", "router"}, c.args...), &stdout, &stderr)
		if code != exitUsage || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("serve router %v: exit %d, stderr %q; want %d naming %s", c.args, code, stderr.String(), exitUsage, c.want)
		}
	}
}
