package podmove_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gameday-dev/gameday/gameday/podmove"
	"github.com/gameday-dev/gameday/internal/routetable"
	"github.com/gameday-dev/gameday/internal/testenv"
)

// A move handed a client of its own that follows redirects (net/http's
// default policy, as a library user's client has): the mover still
// follows none. The pods' admin APIs answer 307 to another host, which
// gets no request and no admin token; the move fails at its first step,
// naming the 307 and where it pointed (its token redacted). The move
// followed the client's policy, and completed through the other host.
func TestMoverRefusesRedirectsWithAClientOfItsOwn(t *testing.T) {
	var reached atomic.Int64
	var token atomic.Value
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		token.Store(r.Header.Get("Authorization"))
		w.Write([]byte(`{"version":999,"units":5,"in_flight":0}`))
	}))
	defer other.Close()
	pod := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path+"?sig=s3cret", http.StatusTemporaryRedirect)
	}))
	defer pod.Close()
	rs := testenv.Redis(t)
	store := redis.NewClient(&redis.Options{Addr: rs.Addr()})
	defer store.Close()
	hdr := http.Header{"Authorization": {"Bearer admin-token-for-the-pods"}}
	hc := &http.Client{Timeout: 6 * time.Second}
	m := &podmove.Move{ID: "m1", Shop: "shop-a", SKU: "tee",
		From:   podmove.Pod{Name: "pod-1", URL: pod.URL, Header: hdr},
		To:     podmove.Pod{Name: "pod-2", URL: pod.URL, Header: hdr},
		Router: pod.URL, Store: store, Keys: routetable.Keys{}, HTTP: hc,
		Drain: 300 * time.Millisecond, Switch: 300 * time.Millisecond, Transfer: 300 * time.Millisecond}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := routetable.WriteTable(ctx, store, routetable.Keys{}, map[string]string{"shop-a": "pod-1"}, map[string]string{"pod-1": pod.URL, "pod-2": pod.URL}); err != nil {
		t.Fatal(err)
	}
	r := m.Run(ctx)
	all := r.Err + "\n" + strings.Join(r.Steps, "\n")
	if r.Outcome == podmove.Completed || !strings.Contains(all, "307") || !strings.Contains(all, "does not follow") || !strings.Contains(all, other.URL) {
		t.Errorf("outcome %s, want a move failed on a 307 it did not follow:\n%s", r.Outcome, all)
	}
	if strings.Contains(all, "s3cret") {
		t.Errorf("the Location's secret is shown:\n%s", all)
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("the other host was reached %d times (Authorization %q)", n, token.Load())
	}
	if hc.CheckRedirect != nil {
		t.Error("the move changed the client it was handed")
	}
}
