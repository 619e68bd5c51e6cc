package noredirect_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gameday-dev/gameday/internal/noredirect"
)

// The policy's clients return a redirect as the answer for every 3xx a
// client may follow, and send nothing to where it points; Refuse makes a
// copy and leaves the client it was handed (http.DefaultClient here)
// following redirects as before; Error names the status and the Location
// redacted.
func TestNothingIsFollowed(t *testing.T) {
	var reached atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached.Add(1) }))
	defer other.Close()
	for _, code := range []int{301, 302, 303, 307, 308} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+"/x?api_key=s3cret", code)
		}))
		for name, c := range map[string]*http.Client{
			"Client": noredirect.Client(0),
			"Refuse": noredirect.Refuse(http.DefaultClient),
			"nil":    noredirect.Refuse(nil),
		} {
			resp, err := c.Post(srv.URL, "application/json", strings.NewReader(`{"a":1}`))
			if err != nil {
				t.Fatalf("%d %s: %v", code, name, err)
			}
			resp.Body.Close()
			if resp.StatusCode != code || !noredirect.Is(resp) {
				t.Errorf("%d %s: answered %d", code, name, resp.StatusCode)
			}
			msg := noredirect.Error(resp).Error()
			if !strings.Contains(msg, "answered "+resp.Status) || !strings.Contains(msg, other.URL+"/x") || strings.Contains(msg, "s3cret") {
				t.Errorf("%d %s: %s", code, name, msg)
			}
		}
		srv.Close()
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("the other host was reached %d times", n)
	}
	if http.DefaultClient.CheckRedirect != nil {
		t.Error("Refuse changed http.DefaultClient")
	}
}
