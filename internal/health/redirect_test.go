package health_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gameday-dev/gameday/internal/health"
)

// A readiness URL that answers a redirect is not ready: the redirect is
// not followed (what it points at is not the dependency), and the error
// shows no secret of the URL asked.
func TestRedirectIsNotReady(t *testing.T) {
	var elsewhere atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { elsewhere.Add(1) }))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL, http.StatusFound)
	}))
	defer srv.Close()
	_, err := health.Check(context.Background(), srv.URL+"/ready?token=s3cret")
	if err == nil || !strings.Contains(err.Error(), "302") || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("Check: %v, want a 302 that is not ready", err)
	}
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("the redirect was followed %d times", n)
	}
}
