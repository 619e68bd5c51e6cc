package routetable_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/internal/routetable"
)

// A router whose routes answer a redirect to another host, asked with
// http.DefaultClient (which follows redirects): WaitServed follows none, so
// the other host, which shows the wanted table, gets nothing and the wait
// fails naming the redirect, where it pointed redacted. net/http followed
// it and took the other host's table as the router's.
func TestWaitServedFollowsNoRedirect(t *testing.T) {
	var reached atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		w.Write([]byte(`{"version":7,"routes":{"shop-a":"pod-2"}}`))
	}))
	defer other.Close()
	router := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path+"?token=s3cret", http.StatusTemporaryRedirect)
	}))
	defer router.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err := routetable.WaitServed(ctx, http.DefaultClient, router.URL, func(t *routetable.Table) bool { return t.Version >= 7 })
	if err == nil || !strings.Contains(err.Error(), "307") || !strings.Contains(err.Error(), "does not follow") || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("WaitServed: %v, want the 307 named, its token redacted", err)
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("the other host was asked %d times", n)
	}
	if http.DefaultClient.CheckRedirect != nil {
		t.Error("WaitServed changed http.DefaultClient")
	}
}

// The wait's deadline falls while an ask is in flight (a router that
// answered a redirect, then stopped answering): the error names the
// redirect the router gave, not the deadline that cut the last ask short.
func TestWaitServedNamesTheLastAnswerNotItsOwnDeadline(t *testing.T) {
	var asked atomic.Int64
	router := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if asked.Add(1) == 1 {
			http.Redirect(w, r, "http://127.0.0.1:1/router/routes", http.StatusTemporaryRedirect)
			return
		}
		<-r.Context().Done()
	}))
	defer router.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err := routetable.WaitServed(ctx, http.DefaultClient, router.URL, func(t *routetable.Table) bool { return true })
	if err == nil || !strings.Contains(err.Error(), "307") {
		t.Errorf("WaitServed: %v, want the 307 named", err)
	}
	if n := asked.Load(); n < 2 {
		t.Fatalf("the router was asked %d times; the test needs an ask cut short by the deadline", n)
	}
}
