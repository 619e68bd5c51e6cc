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

// A router and pods whose admin APIs answer with a redirect to another
// host: the mover follows none, so the other host gets no request (no
// stock step, no admin token), and the move does not complete; its steps
// say the redirect was not followed.
func TestMoverFollowsNoRedirect(t *testing.T) {
	var reached atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		w.WriteHeader(200)
		w.Write([]byte(`{"version":999,"units":5,"in_flight":0}`))
	}))
	defer other.Close()
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer redirect.Close()
	rs := testenv.Redis(t)
	store := redis.NewClient(&redis.Options{Addr: rs.Addr()})
	defer store.Close()
	token := http.Header{"Authorization": {"Bearer admin-token-for-the-pods"}}
	m := &podmove.Move{ID: "m1", Shop: "shop-a", SKU: "tee",
		From:   podmove.Pod{Name: "pod-1", URL: redirect.URL, Header: token},
		To:     podmove.Pod{Name: "pod-2", URL: redirect.URL, Header: token},
		Router: redirect.URL, Store: store, Keys: routetable.Keys{},
		Drain: 300 * time.Millisecond, Switch: 300 * time.Millisecond, Transfer: 300 * time.Millisecond}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The shop routes to pod-1, as a drill sets it up.
	if _, err := routetable.WriteTable(ctx, store, routetable.Keys{}, map[string]string{"shop-a": "pod-1"}, map[string]string{"pod-1": redirect.URL, "pod-2": redirect.URL}); err != nil {
		t.Fatal(err)
	}
	r := m.Run(ctx)
	if r.Outcome == podmove.Completed {
		t.Errorf("the move completed through redirects: %+v", r)
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("the other host was reached %d times", n)
	}
	if !strings.Contains(r.Err+strings.Join(r.Steps, "\n"), "does not follow") {
		t.Errorf("the move does not say a redirect was not followed: %s\n%s", r.Err, strings.Join(r.Steps, "\n"))
	}
}
