package fleet_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/fleet"
	"github.com/gameday-dev/gameday/gameday/load"
	"github.com/gameday-dev/gameday/gameday/system"
)

// seen records every request a server got, whole.
type seen struct {
	mu   sync.Mutex
	reqs []string
}

func (s *seen) add(r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(b))
	var h strings.Builder
	_ = r.Header.Write(&h)
	s.mu.Lock()
	s.reqs = append(s.reqs, r.Method+" "+r.URL.String()+"\n"+h.String()+"\n"+string(b))
	s.mu.Unlock()
}

func (s *seen) all() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.reqs...)
}

// A coordinator spoofed at the worker's URL — one that does not know the
// run's token, and answers with a job of its own aimed at a victim — gets
// nothing from the worker: not the token (which no request carries), not
// a single request beyond its hello, and the victim gets no purchase.
// Before, the worker sent its token with its first request and obeyed the
// job's base_url and rate.
func TestASpoofedCoordinatorGetsNothing(t *testing.T) {
	const token = "the-runs-real-t0ken"
	var victimHits atomic.Int64
	victim := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { victimHits.Add(1) }))
	defer victim.Close()
	spoofJob := job(t, victim.URL, 1, load.Stage{Duration: time.Second, Target: 20})
	var got seen
	spoof := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.add(r)
		switch r.URL.Path {
		case "/v1/hello":
			fmt.Fprintf(w, `{"nonce": %q, "proof": %q}`, strings.Repeat("ab", 16), strings.Repeat("cd", 32))
		case "/v1/job":
			spoofJob.Protocol = fleet.Protocol
			_ = json.NewEncoder(w).Encode(spoofJob)
		case "/v1/clock":
			fmt.Fprintf(w, `{"now": %d}`, time.Now().UnixNano())
		case "/v1/ready":
			fmt.Fprintf(w, `{"start": %d}`, time.Now().Add(200*time.Millisecond).UnixNano())
		case "/v1/stop":
			time.Sleep(time.Second)
			fmt.Fprint(w, `{"stop": false}`)
		}
	}))
	defer spoof.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := fleet.Work(ctx, fleet.WorkerOptions{Coordinator: spoof.URL, Token: token, Shard: 0, Wait: 5 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "not this run's coordinator") {
		t.Fatalf("Work: %v, want the coordinator refused", err)
	}
	reqs := got.all()
	if len(reqs) != 1 || !strings.HasPrefix(reqs[0], "GET /v1/hello?nonce=") {
		t.Errorf("the spoofed coordinator got %d requests, want the hello alone:\n%s", len(reqs), strings.Join(reqs, "\n---\n"))
	}
	for _, r := range reqs {
		if strings.Contains(r, token) || strings.Contains(r, hex.EncodeToString([]byte(token))) {
			t.Errorf("a request carried the token:\n%s", r)
		}
	}
	if n := victimHits.Load(); n != 0 {
		t.Errorf("the victim got %d requests", n)
	}
}

// A job changed on its way (a relay that rewrites its base_url) is not
// signed by the coordinator: the worker refuses it and sends nothing to
// the address it was given.
func TestATamperedJobIsRefused(t *testing.T) {
	s := newShop(t)
	var victimHits atomic.Int64
	victim := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { victimHits.Add(1) }))
	defer victim.Close()
	c, ctx := sale(t, s.srv.URL, 1, load.Stage{Duration: time.Second, Target: 20})
	u, _ := url.Parse(c.URL())
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ModifyResponse = func(resp *http.Response) error {
		if resp.Request.URL.Path != "/v1/job" {
			return nil
		}
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		b = bytes.ReplaceAll(b, []byte(s.srv.URL), []byte(victim.URL))
		resp.Body = io.NopCloser(bytes.NewReader(b))
		resp.ContentLength = int64(len(b))
		resp.Header.Del("Content-Length")
		return nil
	}
	relay := httptest.NewServer(rp)
	defer relay.Close()
	err := fleet.Work(ctx, fleet.WorkerOptions{Coordinator: relay.URL, Token: c.Token(), Shard: 0})
	if err == nil || !strings.Contains(err.Error(), "not signed by this run's coordinator") {
		t.Fatalf("Work: %v, want the tampered job refused", err)
	}
	if n := victimHits.Load(); n != 0 {
		t.Errorf("the victim got %d requests", n)
	}
}

// A worker reads the job's values and no others: a ${NAME} the job does
// not give is an error, never this machine's environment variable (which
// a spoofed job could otherwise have sent back in its requests).
func TestAWorkerReadsNoVariableOfItsOwn(t *testing.T) {
	s := newShop(t)
	t.Setenv("WORKER_SECRET", "the-workers-own-s3cret")
	src := system.Source{File: "shop.yaml", Data: []byte(strings.Replace(shopYAML, "body: '{\"id\": {{json .CheckoutID}}}'", "body: '{\"id\": {{json .CheckoutID}}, \"x\": \"${WORKER_SECRET}\"}'", 1)), Vars: map[string]string{"SHOP_URL": s.srv.URL}}
	j := fleet.Job{Of: 1, System: src, Plan: load.Plan{Stages: []load.Stage{{Duration: time.Second, Target: 10}}, Patience: time.Second, MaxShoppers: 8, Seed: 7, IDPrefix: "fleet"}}
	c, err := fleet.Listen("127.0.0.1:0", j, "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	werr := make(chan error, 1)
	go func() { werr <- fleet.Work(ctx, fleet.WorkerOptions{Coordinator: c.URL(), Token: c.Token(), Shard: 0}) }()
	if err := c.Join(ctx, 10*time.Second); err == nil || !strings.Contains(err.Error(), "${WORKER_SECRET} is not set") {
		t.Errorf("Join: %v, want the worker to refuse the job", err)
	}
	if err := <-werr; err == nil {
		t.Error("the worker took a job that needs its own variable")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.ids) != 0 {
		t.Errorf("the shop got %d purchases", len(s.ids))
	}
}
