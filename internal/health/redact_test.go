package health_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/internal/health"
	"github.com/gameday-dev/gameday/internal/testenv"
)

// An http check that gets no answer fails with net/http's error, which
// quotes the URL asked: its password and query values are shown masked.
// One that gets a redirect says where it pointed, masked too.
func TestHTTPCheckErrorsShowNoSecret(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	closed := "http://probe:pw-s3cret@" + testenv.ClosedAddr(t) + "/ready?token=q-s3cret"
	_, err := health.Check(ctx, closed)
	if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "/ready") {
		t.Errorf("a closed port: %v, want an error naming the URL without its secrets", err)
	}
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/login?session=l-s3cret", http.StatusSeeOther)
	}))
	defer srv.Close()
	_, err = health.Check(ctx, srv.URL)
	if err == nil || !strings.Contains(err.Error(), "303") || !strings.Contains(err.Error(), other.URL+"/login") || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("a redirect: %v, want the 303 naming where it pointed, without its secret", err)
	}
}
