package payment

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

// A gateway address that answers every call with a redirect to another
// gateway (a real stand-in here): the client follows none, with its own
// client or one handed to it that would. The other gateway records no
// charge and gets no request; each call fails with a *StatusError of the
// 3xx naming where it pointed (its secret redacted), which is not a
// rejection: the charge's outcome is unknown, to be voided by its key.
// net/http re-sent the charge, key and all, with 307 and 308 (and the
// other gateway charged it), and made 301-303 a GET of /charges.
func TestClientFollowsNoRedirect(t *testing.T) {
	var reached atomic.Int64
	other, err := NewServer(Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	otherURL := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		other.ServeHTTP(w, r)
	}))
	for _, code := range []int{301, 302, 303, 307, 308} {
		gw := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, otherURL+r.URL.Path+"?sig=s3cret", code)
		}))
		for name, c := range map[string]*Client{"own": NewClient(gw, nil), "handed": NewClient(gw, &http.Client{})} {
			ctx := context.Background()
			_, charge := c.Charge(ctx, req("k-"+name))
			void := c.Void(ctx, "k-"+name)
			_, list := c.List(ctx)
			for op, err := range map[string]error{"charge": charge, "void": void, "list": list} {
				var se *StatusError
				if !errors.As(err, &se) || se.StatusCode != code || !strings.HasPrefix(se.Location, otherURL) {
					t.Errorf("%d %s %s: %v, want a StatusError of the redirect", code, name, op, err)
					continue
				}
				msg := err.Error()
				if !strings.Contains(msg, "redirect") || !strings.Contains(msg, otherURL) || strings.Contains(msg, "s3cret") {
					t.Errorf("%d %s %s: %q does not name where the redirect pointed, redacted", code, name, op, msg)
				}
				if errors.Is(err, ErrRejected) {
					t.Errorf("%d %s %s: a redirect taken for a rejection (nothing charged)", code, name, op)
				}
			}
		}
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("the other gateway got %d requests", n)
	}
	charges, err := NewClient(otherURL, nil).List(context.Background())
	if err != nil || len(charges) != 0 {
		t.Errorf("the other gateway recorded %d charges (%v), want none", len(charges), err)
	}
}
