package fleet_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/fleet"
	"github.com/gameday-dev/gameday/gameday/load"
)

// Hello is open to anyone who reaches the coordinator, and the coordinator
// keeps nothing for it: a thousand hellos of a stranger take no room from
// the workers, who then join and send the whole sale. Before, the
// coordinator kept a session per hello, at most 68 for one shard, and
// answered the real worker 503.
func TestAStrangersHellosKeepNoWorkerOut(t *testing.T) {
	s := newShop(t)
	c, ctx := sale(t, s.srv.URL, 1, load.Stage{Duration: 300 * time.Millisecond, Target: 20})
	for i := range 1000 {
		nonce := make([]byte, 16)
		_, _ = rand.Read(nonce)
		resp, err := http.Get(c.URL() + "/v1/hello?nonce=" + hex.EncodeToString(nonce))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("hello %d: %s", i, resp.Status)
		}
	}
	wait := workers(ctx, c, 0)
	if err := c.Join(ctx, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Send(ctx, time.Now().Add(c.Lead()), nil); err != nil {
		t.Fatal(err)
	}
	if err := wait()[0]; err != nil {
		t.Fatalf("the worker: %v", err)
	}
}

// A worker's proof is for the coordinator that answered its hello: the
// same header shown to another coordinator of the same token (a later
// drill's, the Swarm secret kept between drills) is refused, so that a
// header once seen on the network reads no other sale's job.
func TestAProofForAnotherCoordinatorIsRefused(t *testing.T) {
	s := newShop(t)
	const token = "kept-between-drills"
	j := job(t, s.srv.URL, 1, load.Stage{Duration: time.Second, Target: 10})
	first, err := fleet.Listen("127.0.0.1:0", j, token)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	second, err := fleet.Listen("127.0.0.1:0", j, token)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	auth, err := fleet.AuthHeader(first.URL(), token)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		co   *fleet.Coordinator
		want int
	}{
		{first, http.StatusOK},            // its own: the clock
		{second, http.StatusUnauthorized}, // another's: nothing
	} {
		req, _ := http.NewRequest("GET", c.co.URL()+"/v1/clock", nil)
		req.Header.Set("Authorization", auth)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s: %s, want %d", c.co.URL(), resp.Status, c.want)
		}
	}
}

// A coordinator URL that answers with a redirect is not followed: the
// worker stops with an error naming where it pointed, and the address it
// pointed at gets nothing (not the hello, not a request of the job).
// Before, the worker followed a 307 and took whatever answered there for
// its coordinator.
func TestACoordinatorThatRedirectsIsNotFollowed(t *testing.T) {
	var elsewhere seen
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.add(r)
		http.Error(w, "nothing here", http.StatusNotFound)
	}))
	defer target.Close()
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	}))
	defer redirector.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := fleet.Work(ctx, fleet.WorkerOptions{Coordinator: redirector.URL, Token: "t", Shard: 0, Wait: 3 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "a redirect (to "+target.URL+"/v1/hello?nonce=") {
		t.Fatalf("Work: %v, want the redirect named", err)
	}
	if got := elsewhere.all(); len(got) != 0 {
		t.Errorf("the address redirected to got %d requests:\n%s", len(got), strings.Join(got, "\n---\n"))
	}
}

// A coordinator that does not know hello (a gameday of the protocol
// before it) is named for what it is, and sent nothing more.
func TestACoordinatorOfAnotherVersionIsNamed(t *testing.T) {
	var others atomic.Int64
	old := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/hello" {
			others.Add(1)
		}
		http.NotFound(w, r)
	}))
	defer old.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := fleet.Work(ctx, fleet.WorkerOptions{Coordinator: old.URL, Token: "t", Shard: 0, Wait: 3 * time.Second})
	want := fmt.Sprintf("it does not speak %s", fleet.Protocol)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Work: %v, want %q", err, want)
	}
	if n := others.Load(); n != 0 {
		t.Errorf("%d requests beyond the hello", n)
	}
}
