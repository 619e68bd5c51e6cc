package toxi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gameday-dev/gameday/gameday/toxi"
)

// The client never follows a redirect: a 3xx from what answers at the
// Toxiproxy address is an error naming the status, and nothing (a toxic's
// body included) is sent to where it points. The claim is about the
// client's own handling of an answer, so the API is a stand-in on
// loopback.
func TestClientDoesNotFollowRedirects(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"name":"slow","type":"latency","toxicity":1,"attributes":{}}`))
	}))
	defer other.Close()
	ctx := context.Background()
	for _, status := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+r.URL.Path, status)
		}))
		c := toxi.NewClient(api.URL)
		calls := map[string]func() error{
			"AddToxic": func() error {
				_, err := c.AddToxic(ctx, "inventory", toxi.Toxic{Name: "slow", Type: "latency"})
				return err
			},
			"RemoveToxic": func() error { return c.RemoveToxic(ctx, "inventory", "slow") },
			"SetEnabled":  func() error { return c.SetEnabled(ctx, "inventory", true) },
			"Proxies":     func() error { _, err := c.Proxies(ctx); return err },
		}
		for name, call := range calls {
			err := call()
			if err == nil || !strings.Contains(err.Error(), strconv.Itoa(status)) || !strings.Contains(err.Error(), "redirect") {
				t.Errorf("%s answered %d: %v; want an error naming the status as a redirect", name, status, err)
			}
		}
		api.Close()
	}
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("the redirects' target got %d requests; want none", n)
	}
}
