package fleet_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/fleet"
	"github.com/gameday-dev/gameday/gameday/load"
	"github.com/gameday-dev/gameday/gameday/system"
	"github.com/gameday-dev/gameday/internal/testenv"
)

// shopYAML is a one-step shop; its address comes in a variable, as an
// environment's addresses do, and must reach the workers with the job.
const shopYAML = `name: tiny-shop
base_url: ${SHOP_URL}
sku: sku-1
purchase:
  steps:
    - url: /buy
      body: '{"id": {{json .CheckoutID}}}'
      answers:
        - {status: 201, outcome: confirmed}
        - {status: 503, outcome: unavailable}
`

// shop is a target that confirms every checkout and counts each id.
type shop struct {
	mu  sync.Mutex
	ids map[string]int
	srv *httptest.Server
}

func newShop(t *testing.T) *shop {
	s := &shop{ids: map[string]int{}}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b struct{ ID string }
		_ = json.NewDecoder(r.Body).Decode(&b)
		s.mu.Lock()
		s.ids[b.ID]++
		s.mu.Unlock()
		w.WriteHeader(http.StatusCreated)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func job(t *testing.T, baseURL string, of int, stages ...load.Stage) fleet.Job {
	t.Helper()
	sys, err := system.Parse("shop.yaml", []byte(shopYAML), map[string]string{"SHOP_URL": baseURL})
	if err != nil {
		t.Fatal(err)
	}
	src, err := sys.FlowSource()
	if err != nil {
		t.Fatal(err)
	}
	return fleet.Job{Of: of, System: src, Plan: load.Plan{
		Stages: stages, Patience: 2 * time.Second, MaxShoppers: 64, Seed: 7, IDPrefix: "fleet",
	}}
}

// sale is a coordinator of job's sale on loopback and a context that
// bounds the test; both end with it.
func sale(t *testing.T, baseURL string, of int, stages ...load.Stage) (*fleet.Coordinator, context.Context) {
	t.Helper()
	c, err := fleet.Listen("127.0.0.1:0", job(t, baseURL, of, stages...), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c, ctx
}

// workers runs one in-process worker per shard (each as "gameday worker"
// would), and returns a function that waits for them and gives their
// errors.
func workers(ctx context.Context, c *fleet.Coordinator, shards ...int) func() []error {
	errs := make([]error, len(shards))
	var wg sync.WaitGroup
	for i, k := range shards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = fleet.Work(ctx, fleet.WorkerOptions{Coordinator: c.URL(), Token: c.Token(), Shard: k})
		}()
	}
	return func() []error { wg.Wait(); return errs }
}

// TestFourWorkersSendTheWholeSale: four workers, one shard each, send the
// sale one process would: every arrival once, with its planned id and
// instant, and the merged counts exact.
func TestFourWorkersSendTheWholeSale(t *testing.T) {
	s := newShop(t)
	j := job(t, s.srv.URL, 4, load.Stage{Duration: time.Second, Target: 200}, load.Stage{Duration: time.Second, Target: 200})
	c, err := fleet.Listen("127.0.0.1:0", j, "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	wait := workers(ctx, c, 0, 1, 2, 3)
	if err := c.Join(ctx, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	var streamed int
	at := time.Now().Add(c.Lead())
	rep, err := c.Send(ctx, at, func(*load.Shopper) { streamed++ })
	if err != nil {
		t.Fatal(err)
	}
	for k, err := range wait() {
		if err != nil {
			t.Errorf("worker %d: %v", k, err)
		}
	}
	choices := load.Shoppers(j.Plan)
	sched := load.Schedule(j.Plan.Stages)
	if rep.Scheduled != len(sched) || rep.Started != len(sched) || rep.Dropped != 0 || streamed != len(sched) {
		t.Fatalf("scheduled %d, started %d, dropped %d, streamed %d: want all %d started and streamed", rep.Scheduled, rep.Started, rep.Dropped, streamed, len(sched))
	}
	if !rep.Start.Equal(at) {
		t.Errorf("report starts at %s, want the fixed start %s", rep.Start, at)
	}
	for i, sh := range rep.Shoppers {
		if sh.Index != i || sh.ID != choices[i].ID || sh.Scheduled != sched[i] || sh.Deadline != sched[i]+j.Plan.Patience || sh.Outcome != load.OutcomeConfirmed {
			t.Fatalf("shopper %d: index %d id %s scheduled %s outcome %q: want %s at %s, confirmed", i, sh.Index, sh.ID, sh.Scheduled, sh.Outcome, choices[i].ID, sched[i])
		}
		if n := s.ids[sh.ID]; n != 1 {
			t.Fatalf("%s reached the shop %d times, want once", sh.ID, n)
		}
	}
	if len(s.ids) != len(sched) {
		t.Errorf("the shop saw %d checkouts, want %d", len(s.ids), len(sched))
	}
	total := 0
	for _, r := range c.Shards() {
		total += r.Shoppers
		if r.Error != "" || r.Scheduled != r.Shoppers || r.ClockRTTMS <= 0 || r.ClockOffsetMS > r.ClockRTTMS || r.ClockOffsetMS < -r.ClockRTTMS {
			t.Errorf("shard record %+v: want its whole part back, and an offset within its round trip (one clock here)", r)
		}
	}
	if total != len(sched) {
		t.Errorf("the shard records hold %d shoppers, want %d", total, len(sched))
	}
}

// TestWorkersClaimAnyShard: workers not told their shard (a Swarm task
// without a slot) are given distinct ones, and a worker too many is
// refused.
func TestWorkersClaimAnyShard(t *testing.T) {
	s := newShop(t)
	c, ctx := sale(t, s.srv.URL, 3, load.Stage{Duration: 500 * time.Millisecond, Target: 60})
	wait := workers(ctx, c, -1, -1, -1)
	if err := c.Join(ctx, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	extra := fleet.Work(ctx, fleet.WorkerOptions{Coordinator: c.URL(), Token: c.Token(), Shard: -1})
	if extra == nil || !strings.Contains(extra.Error(), "every one of the 3 shards is taken") {
		t.Errorf("a fourth worker: %v, want refused", extra)
	}
	rep, err := c.Send(ctx, time.Now().Add(c.Lead()), nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Started != rep.Scheduled {
		t.Errorf("started %d of %d", rep.Started, rep.Scheduled)
	}
	for _, err := range wait() {
		if err != nil {
			t.Error(err)
		}
	}
}

// TestAShardThatDiesFailsTheSale: a worker whose stream ends before its
// last line fails the sale; the others are told to stop at once, and the
// report holds what came back.
func TestAShardThatDiesFailsTheSale(t *testing.T) {
	s := newShop(t)
	c, ctx := sale(t, s.srv.URL, 2, load.Stage{Duration: 20 * time.Second, Target: 50})
	wait := workers(ctx, c, 0)
	// Shard 1 is a worker that sends one record and dies.
	dying := make(chan struct{})
	auth, err := fleet.AuthHeader(c.URL(), c.Token())
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(dying)
		call := func(method, path, body string) (*http.Response, error) {
			req, _ := http.NewRequest(method, c.URL()+path, strings.NewReader(body))
			req.Header.Set("Authorization", auth)
			return http.DefaultClient.Do(req)
		}
		for _, p := range []string{"/v1/job?shard=1", "/v1/ready?shard=1"} {
			method, body := "GET", ""
			if strings.Contains(p, "ready") {
				method, body = "POST", `{"rtt_ns": 1000}`
			}
			resp, err := call(method, p, body)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
		}
		conn, err := net.Dial("tcp", strings.TrimPrefix(c.URL(), "http://"))
		if err != nil {
			t.Error(err)
			return
		}
		line := `{"shopper":{"Index":1,"ID":"fleet-1","Outcome":"confirmed","Started":1000,"Scheduled":1000}}` + "\n"
		fmt.Fprintf(conn, "POST /v1/shoppers?shard=1 HTTP/1.1\r\nHost: x\r\nAuthorization: %s\r\nContent-Length: 100000\r\n\r\n%s", auth, line)
		time.Sleep(time.Second)
		conn.Close() // the process dies
	}()
	if err := c.Join(ctx, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	rep, err := c.Send(ctx, time.Now().Add(c.Lead()), nil)
	<-dying
	if !errors.Is(err, fleet.ErrShard) || !strings.Contains(err.Error(), "shard 1 died") {
		t.Fatalf("Send: %v, want shard 1 died", err)
	}
	if took := time.Since(began); took > 10*time.Second {
		t.Errorf("the sale went on %s after a shard died; want it stopped at once", took)
	}
	errs := wait()
	if errs[0] != nil {
		t.Errorf("the live worker, told to stop: %v, want nil (it sent what it was asked, then stopped)", errs[0])
	}
	if n := len(load.Schedule(c.Job().Plan.Stages)); rep == nil || rep.Scheduled != n || rep.Started >= rep.Scheduled || rep.Shoppers[n-1].Outcome != "" {
		t.Fatalf("report %+v: want the whole plan, most of it never reached", rep)
	}
	recs := c.Shards()
	if recs[1].Error == "" || recs[0].Error != "" {
		t.Errorf("shard records %+v: want shard 1's death on it alone", recs)
	}
}

// TestAShardThatCannotReachTheTargetCallsTheSaleOff: before the start, so
// nothing is sent anywhere.
func TestAShardThatCannotReachTheTargetCallsTheSaleOff(t *testing.T) {
	closed := "http://" + testenv.ClosedAddr(t)
	c, ctx := sale(t, closed, 2, load.Stage{Duration: time.Second, Target: 10})
	wait := workers(ctx, c, 0, 1)
	err := c.Join(ctx, 10*time.Second)
	if !errors.Is(err, fleet.ErrShard) || !strings.Contains(err.Error(), "cannot reach the system under test at "+closed) {
		t.Fatalf("Join: %v, want the unreachable target named", err)
	}
	for _, err := range wait() {
		if err == nil {
			t.Error("a worker of a called-off sale returned nil")
		}
	}
}

// TestAMissingShardCallsTheSaleOff: a shard that never joins is named.
func TestAMissingShardCallsTheSaleOff(t *testing.T) {
	s := newShop(t)
	c, ctx := sale(t, s.srv.URL, 3, load.Stage{Duration: time.Second, Target: 10})
	wait := workers(ctx, c, 0, 2)
	err := c.Join(ctx, 500*time.Millisecond)
	if !errors.Is(err, fleet.ErrShard) || !strings.Contains(err.Error(), "shards 1 of 3 were not ready") {
		t.Fatalf("Join: %v, want shard 1 named", err)
	}
	for _, err := range wait() {
		if err == nil || !strings.Contains(err.Error(), "called off") {
			t.Errorf("a waiting worker: %v, want told the sale is off", err)
		}
	}
}

// TestAShardToldLateFailsTheSale: a start that has passed when a worker
// learns of it would squeeze its first arrivals into a burst; it sends
// nothing and the sale fails.
func TestAShardToldLateFailsTheSale(t *testing.T) {
	s := newShop(t)
	c, ctx := sale(t, s.srv.URL, 2, load.Stage{Duration: time.Second, Target: 50})
	wait := workers(ctx, c, 0, 1)
	if err := c.Join(ctx, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	_, err := c.Send(ctx, time.Now().Add(-50*time.Millisecond), nil)
	if !errors.Is(err, fleet.ErrShard) || !strings.Contains(err.Error(), "after it had passed") {
		t.Fatalf("Send: %v, want a shard told late", err)
	}
	wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.ids) != 0 {
		t.Errorf("the shop saw %d checkouts of a sale no shard started on time", len(s.ids))
	}
}

// TestTheSaleStopsWhenTheCoordinatorSaysSo: an interrupt (or an abort)
// stops every worker within moments.
func TestTheSaleStopsWhenTheCoordinatorSaysSo(t *testing.T) {
	s := newShop(t)
	c, ctx := sale(t, s.srv.URL, 2, load.Stage{Duration: 100 * time.Millisecond, Target: 50}, load.Stage{Duration: time.Minute, Target: 50})
	wait := workers(ctx, c, 0, 1)
	if err := c.Join(ctx, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	sendCtx, stop := context.WithCancel(ctx)
	time.AfterFunc(time.Second, stop)
	began := time.Now()
	rep, err := c.Send(sendCtx, time.Now().Add(c.Lead()), nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Send: %v, want cancelled", err)
	}
	wait()
	if took := time.Since(began); took > 5*time.Second {
		t.Errorf("stopping took %s", took)
	}
	if rep.Started == 0 || rep.Started > 100 || rep.Shoppers[len(rep.Shoppers)-1].Outcome != "" {
		t.Errorf("started %d of %d: want about a second's worth (50) and the rest never reached", rep.Started, rep.Scheduled)
	}
}

// TestTheProtocolWantsTheToken: the job holds the system's variables (an
// admin token among them): nobody without the run's token reads it.
func TestTheProtocolWantsTheToken(t *testing.T) {
	s := newShop(t)
	c, err := fleet.Listen("127.0.0.1:0", job(t, s.srv.URL, 1, load.Stage{Duration: time.Second, Target: 10}), "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := fleet.AuthHeader(c.URL(), "wrong"); err == nil || !strings.Contains(err.Error(), "not this run's coordinator") {
		t.Fatalf("a worker with the wrong token took the coordinator for its own: %v", err)
	}
	// No proof, the token itself as a bearer (it is never sent), a proof
	// made up: none reads the job.
	for _, auth := range []string{"", "Bearer " + c.Token(), "Gameday-Shard worker=00112233445566778899aabbccddeeff, nonce=00112233445566778899aabbccddeeff, proof=00"} {
		req, _ := http.NewRequest("GET", c.URL()+"/v1/job?shard=0", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(bufio.NewReader(resp.Body))
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || strings.Contains(string(b), "SHOP_URL") {
			t.Errorf("authorization %q: %s %s, want 401 and nothing of the job", auth, resp.Status, b)
		}
	}
}

// TestAWorkerWaitsForItsCoordinator: a pod or a task may start before the
// coordinator listens; the worker calls again until it does.
func TestAWorkerWaitsForItsCoordinator(t *testing.T) {
	s := newShop(t)
	addr := testenv.FreeAddr(t) // the coordinator's, once it listens
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const token = "early-worker"
	done := make(chan error, 1)
	go func() {
		done <- fleet.Work(ctx, fleet.WorkerOptions{Coordinator: "http://" + addr, Token: token, Shard: 0, Wait: 20 * time.Second})
	}()
	time.Sleep(1500 * time.Millisecond)
	c, err := fleet.Listen(addr, job(t, s.srv.URL, 1, load.Stage{Duration: 500 * time.Millisecond, Target: 20}), token)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Join(ctx, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Send(ctx, time.Now().Add(c.Lead()), nil); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the early worker: %v", err)
	}
}

// TestAWorkerInterruptedFailsTheSale: a worker stopped by its own signal
// (its pod evicted, its task shut down) has not sent its part: the sale
// cannot be judged whole, though its stream ended cleanly.
func TestAWorkerInterruptedFailsTheSale(t *testing.T) {
	s := newShop(t)
	c, ctx := sale(t, s.srv.URL, 2, load.Stage{Duration: 100 * time.Millisecond, Target: 50}, load.Stage{Duration: 20 * time.Second, Target: 50})
	wait := workers(ctx, c, 0)
	evicted, evict := context.WithCancel(ctx)
	waitEvicted := workers(evicted, c, 1)
	if err := c.Join(ctx, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(time.Second, evict)
	_, err := c.Send(ctx, time.Now().Add(c.Lead()), nil)
	if !errors.Is(err, fleet.ErrShard) || !strings.Contains(err.Error(), "shard 1: the worker was interrupted") {
		t.Fatalf("Send: %v, want shard 1 interrupted", err)
	}
	wait()
	waitEvicted()
}

// TestAWorkerStopsWithoutItsCoordinator: a worker whose coordinator is
// gone stops sending load within moments, and says why.
func TestAWorkerStopsWithoutItsCoordinator(t *testing.T) {
	s := newShop(t)
	c, err := fleet.Listen("127.0.0.1:0", job(t, s.srv.URL, 1, load.Stage{Duration: 100 * time.Millisecond, Target: 50}, load.Stage{Duration: time.Minute, Target: 50}), "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	defer c.Close()
	// The worker reaches the coordinator through a relay that the test
	// cuts: the coordinator's machine gone, with no goodbye.
	relay := newRelay(t, strings.TrimPrefix(c.URL(), "http://"))
	done := make(chan error, 1)
	go func() {
		done <- fleet.Work(ctx, fleet.WorkerOptions{Coordinator: "http://" + relay.addr(), Token: c.Token(), Shard: 0})
	}()
	if err := c.Join(ctx, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	sendCtx, stopSend := context.WithCancel(ctx)
	defer stopSend()
	go func() { _, _ = c.Send(sendCtx, time.Now().Add(c.Lead()), nil) }()
	time.Sleep(time.Second)
	relay.cut()
	select {
	case err := <-done:
		if err == nil {
			t.Error("a worker that lost its coordinator returned nil")
		}
	case <-time.After(4 * fleet.Heartbeat):
		t.Fatal("the worker went on sending without its coordinator")
	}
	s.mu.Lock()
	n := len(s.ids)
	s.mu.Unlock()
	time.Sleep(500 * time.Millisecond)
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.ids) != n {
		t.Errorf("the shop saw %d more checkouts after the worker returned", len(s.ids)-n)
	}
}

// relay passes TCP connections to an address until cut.
type relay struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func newRelay(t *testing.T, to string) *relay {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &relay{ln: ln}
	t.Cleanup(r.cut)
	go func() {
		for {
			a, err := ln.Accept()
			if err != nil {
				return
			}
			b, err := net.Dial("tcp", to)
			if err != nil {
				a.Close()
				continue
			}
			r.mu.Lock()
			r.conns = append(r.conns, a, b)
			r.mu.Unlock()
			go func() { _, _ = io.Copy(a, b); a.Close() }()
			go func() { _, _ = io.Copy(b, a); b.Close() }()
		}
	}()
	return r
}

func (r *relay) addr() string { return r.ln.Addr().String() }

func (r *relay) cut() {
	r.ln.Close()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.conns {
		c.Close()
	}
}

// TestAShardThatEndsEarlyFailsTheSale: a worker that says it is done with
// arrivals of its part never sent back (another version, a bug) fails the
// sale: a sale with fewer shoppers must not pass for the planned one.
func TestAShardThatEndsEarlyFailsTheSale(t *testing.T) {
	s := newShop(t)
	c, ctx := sale(t, s.srv.URL, 1, load.Stage{Duration: time.Second, Target: 20})
	auth, err := fleet.AuthHeader(c.URL(), c.Token())
	if err != nil {
		t.Fatal(err)
	}
	call := func(method, path, body string) {
		req, _ := http.NewRequest(method, c.URL()+path, strings.NewReader(body))
		req.Header.Set("Authorization", auth)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return
		}
		resp.Body.Close()
	}
	go func() {
		call("GET", "/v1/job?shard=0", "")
		call("POST", "/v1/ready?shard=0", `{"rtt_ns": 1000}`)
		call("POST", "/v1/shoppers?shard=0", `{"shopper":{"Index":0,"ID":"fleet-0","Outcome":"confirmed"}}`+"\n"+`{"done":{"scheduled":10,"started":1}}`+"\n")
	}()
	if err := c.Join(ctx, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	_, err = c.Send(ctx, time.Now().Add(c.Lead()), nil)
	if !errors.Is(err, fleet.ErrShard) || !strings.Contains(err.Error(), "ended with 1 of its 10 shoppers") {
		t.Fatalf("Send: %v, want the short shard named", err)
	}
}

// TestShardsCarryEmptyKeptValues: a keep that misses (order_id for the
// shop's orderId) sends every shard's second step an empty order; the
// coordinator adds the shards' counts up into one line, as one process
// would count them.
func TestShardsCarryEmptyKeptValues(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/place" {
			w.WriteHeader(http.StatusAccepted)
			fmt.Fprint(w, `{"orderId": "o-1"}`)
			return
		}
		w.WriteHeader(http.StatusCreated) // the order, whatever its id
	}))
	defer srv.Close()
	sys, err := system.Parse("shop.yaml", []byte(`name: two-steps
base_url: `+srv.URL+`
sku: sku-1
purchase:
  steps:
    - {name: place, url: /place, keep: {order: {json: order_id}}, answers: [{status: 202, outcome: next}]}
    - {name: pay, url: '/pay/{{.Kept.order}}', answers: [{status: 201, outcome: confirmed}]}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := fleet.Listen("127.0.0.1:0", fleet.Job{Of: 2, System: sys.Source(), Plan: load.Plan{
		Stages: []load.Stage{{Duration: time.Second, Target: 40}}, Patience: 2 * time.Second, MaxShoppers: 64, Seed: 7, IDPrefix: "fleet",
	}}, "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	wait := workers(ctx, c, 0, 1)
	if err := c.Join(ctx, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	rep, err := c.Send(ctx, time.Now().Add(c.Lead()), nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, err := range wait() {
		if err != nil {
			t.Errorf("worker %d: %v", k, err)
		}
	}
	got := c.EmptyKept()
	if rep.Started == 0 || len(got) != 1 || got[0].Step != "pay" || got[0].Kept != "order" || got[0].Requests != rep.Started || !strings.Contains(got[0].KeptBy, "order_id") {
		t.Errorf("empty kept %+v, want one line of pay's %d requests", got, rep.Started)
	}
}
