package fleet

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gameday-dev/gameday/gameday/load"
	"github.com/gameday-dev/gameday/gameday/runrecord"
	"github.com/gameday-dev/gameday/internal/stats"
)

// How long the coordinator waits, by default.
const (
	// DefaultJoinWithin bounds the wait for every worker to be ready:
	// processes start in well under a second, containers in a few.
	DefaultJoinWithin = 60 * time.Second
	// StreamWithin is how long after the start a shard has to begin its
	// stream before it is taken for dead.
	StreamWithin = 5 * time.Second
	// StopWithin is how long shards have to end their streams once told
	// to stop: a stopped shard cancels its shoppers at once.
	StopWithin = 10 * time.Second
	// Heartbeat is how long the coordinator holds a worker's question
	// whether to stop before it answers "go on": a worker that hears
	// nothing for twice as long takes the coordinator for gone and stops
	// sending.
	Heartbeat = 2 * time.Second
	// maxLine bounds one line of a stream: a shopper of a hundred attempts
	// is some 30 kB.
	maxLine = 4 << 20
	// MaxRTT bounds the round trip a worker may report (it reads the
	// clock with calls of at most 5 s), and with it the start's lead;
	// MaxClockOffset the clock difference it may report.
	MaxRTT         = 5 * time.Second
	MaxClockOffset = 24 * time.Hour
	// MaxLead bounds how long before the start the workers are told it.
	MaxLead = 30 * time.Second
	// streamBase and streamPerShopper bound the bytes of a shard's stream:
	// its records (a shopper of a thousand polls is some 300 kB; a usual
	// one under 1 kB) and its done line.
	streamBase       = 64 << 20
	streamPerShopper = 64 << 10
	// MaxStalls bounds the stalls a worker reports (hostmon keeps 4,096).
	MaxStalls = 4096
)

// streamLimit is the most a shard of n arrivals may send.
func streamLimit(n int) int64 { return streamBase + int64(n)*streamPerShopper }

// Coordinator serves the shard protocol for one sale.
type Coordinator struct {
	job   Job
	token string
	ln    net.Listener
	srv   *http.Server

	events chan event
	closed chan struct{} // Close was called
	sent   chan struct{} // Send returned: nobody reads events any more

	mu                  sync.Mutex
	shards              []*shardState
	ready               int
	joined              chan struct{} // every shard is ready
	begun               chan struct{} // the start is fixed (Send)
	stopped             chan struct{} // the shards must stop sending
	start               time.Time
	got                 []*load.Shopper // every record that came back
	unmatched           [][]runrecord.Unmatched
	emptyKept           [][]runrecord.EmptyKept
	stopOnce, closeOnce sync.Once

	offMu  sync.Mutex
	offErr error // why the sale was called off or stopped

	// secret makes the coordinator's nonces (nonceFor): its own, never
	// sent, so that it knows them again without keeping any.
	secret []byte
	// now is the coordinator's clock, the one every worker measures its
	// own against (time.Now; a test's may differ from its workers').
	now func() time.Time
}

type shardState struct {
	claimed   bool
	ready     *Ready
	streaming bool
	got       int
	done      *Done
	err       error
	// stalls are the worker's own, as its done line gave them.
	stalls    []runrecord.StallSpan
	stallsCut int
}

// event is what a shard's stream or its launcher tells Send.
type event struct {
	shard   int
	shopper *load.Shopper
	done    *Done
	err     error
}

// Listen starts serving the protocol for job (its Shard is set per worker)
// on addr ("127.0.0.1:0" for workers on this machine; an address workers
// elsewhere reach for a Swarm or a Kubernetes Job). token is the secret
// every request must carry; "" makes a random one (Token).
func Listen(addr string, job Job, token string) (*Coordinator, error) {
	return listen(addr, job, token, time.Now)
}

// listen is Listen on the clock now.
func listen(addr string, job Job, token string, now func() time.Time) (*Coordinator, error) {
	if job.Of < 1 {
		return nil, fmt.Errorf("coordinator: %d shards: want at least 1", job.Of)
	}
	if err := job.Plan.Validate(); err != nil {
		return nil, fmt.Errorf("coordinator: %w", err)
	}
	if token == "" {
		b := make([]byte, 16)
		if _, err := rand.Read(b); err != nil {
			return nil, err
		}
		token = hex.EncodeToString(b)
	}
	secret, err := newNonce()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("coordinator: %w", err)
	}
	job.Protocol = Protocol
	c := &Coordinator{
		job: job, token: token, ln: ln,
		events: make(chan event, 1024), closed: make(chan struct{}), sent: make(chan struct{}),
		joined: make(chan struct{}), begun: make(chan struct{}), stopped: make(chan struct{}),
		secret: secret, now: now,
	}
	for range job.Of {
		c.shards = append(c.shards, &shardState{})
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/hello", c.serveHello)
	mux.HandleFunc("GET /v1/job", c.auth(c.serveJob))
	mux.HandleFunc("GET /v1/clock", c.auth(c.serveClock))
	mux.HandleFunc("POST /v1/ready", c.auth(c.serveReady))
	mux.HandleFunc("POST /v1/shoppers", c.auth(c.serveShoppers))
	mux.HandleFunc("GET /v1/stop", c.auth(c.serveStop))
	c.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = c.srv.Serve(ln) }()
	return c, nil
}

// URL is where workers call in.
func (c *Coordinator) URL() string { return "http://" + c.ln.Addr().String() }

// Job is the sale's job (its Shard is each worker's own).
func (c *Coordinator) Job() Job { return c.job }

// Token is the secret workers must carry (TokenEnv).
func (c *Coordinator) Token() string { return c.token }

// Close stops serving; workers still waiting are told the sale is off.
func (c *Coordinator) Close() error {
	c.callOff(errors.New("the coordinator closed"))
	c.closeOnce.Do(func() { close(c.closed) })
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := c.srv.Shutdown(ctx); err != nil {
		return c.srv.Close()
	}
	return nil
}

// serveHello proves the coordinator knows the run's token, over the
// worker's nonce and one of its own (auth.go). It keeps nothing: anyone
// may say hello, as often as they like, and take nothing from the
// workers.
func (c *Coordinator) serveHello(w http.ResponseWriter, r *http.Request) {
	nw, err := readNonce(r.URL.Query().Get("nonce"))
	if err != nil {
		http.Error(w, "hello: nonce: "+err.Error(), http.StatusBadRequest)
		return
	}
	nc := nonceFor(c.secret, nw)
	b, _ := json.Marshal(hello{Nonce: hex.EncodeToString(nc), Proof: hex.EncodeToString(mac([]byte(c.token), labelCoordinator, nw, nc))})
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(append(b, '\n'))
}

// auth lets through a request that proves its worker knows the run's
// token, over its nonce and one this coordinator made for it (auth.go);
// the session of the two nonces signs the answer.
func (c *Coordinator) auth(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		nw, nc, proof, err := parseAuth(r.Header.Get("Authorization"))
		var s *session
		if err == nil && equal(nc, nonceFor(c.secret, nw)) {
			s = newSession(c.token, nw, nc)
		}
		if s == nil || !equal(proof, s.worker) {
			http.Error(w, "this sale's workers are wanted: a worker proves it knows the run's token ("+TokenEnv+"), which it never sends", http.StatusUnauthorized)
			return
		}
		h(w, r.WithContext(context.WithValue(r.Context(), sessionKey{}, s)))
	}
}

// shardParam reads ?shard=K; "any" claims the first free one.
func (c *Coordinator) shardParam(r *http.Request, claim bool) (int, error) {
	v := r.URL.Query().Get("shard")
	c.mu.Lock()
	defer c.mu.Unlock()
	if v == "any" && claim {
		for k, s := range c.shards {
			if !s.claimed {
				s.claimed = true
				return k, nil
			}
		}
		return 0, fmt.Errorf("every one of the %d shards is taken", len(c.shards))
	}
	k, err := strconv.Atoi(v)
	if err != nil || k < 0 || k >= len(c.shards) {
		return 0, fmt.Errorf("shard %q: want 0 to %d", v, len(c.shards)-1)
	}
	if claim {
		if c.shards[k].claimed {
			return 0, fmt.Errorf("shard %d is taken: two workers were given it", k)
		}
		c.shards[k].claimed = true
	} else if !c.shards[k].claimed {
		return 0, fmt.Errorf("shard %d has not asked for its job", k)
	}
	return k, nil
}

func (c *Coordinator) serveJob(w http.ResponseWriter, r *http.Request) {
	k, err := c.shardParam(r, true)
	if err != nil {
		http.Error(w, err.Error(), http.StatusConflict)
		return
	}
	j := c.job
	j.Shard = k
	writeJSON(w, r, j)
}

func (c *Coordinator) serveClock(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, r, map[string]int64{"now": c.now().UnixNano()})
}

func (c *Coordinator) serveReady(w http.ResponseWriter, r *http.Request) {
	k, err := c.shardParam(r, false)
	if err != nil {
		http.Error(w, err.Error(), http.StatusConflict)
		return
	}
	var rd Ready
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&rd); err != nil {
		http.Error(w, "ready: "+err.Error(), http.StatusBadRequest)
		return
	}
	if rd.Error != "" {
		c.callOff(fmt.Errorf("shard %d cannot take part: %s", k, rd.Error))
		http.Error(w, "called off", http.StatusConflict)
		return
	}
	// The round trip sets the start's lead (Lead: four of the slowest);
	// a worker measures it with calls of at most 5 s each.
	if rd.RTT < 0 || rd.RTT > MaxRTT || rd.Offset < -MaxClockOffset || rd.Offset > MaxClockOffset {
		err := fmt.Errorf("shard %d reported a round trip of %s and a clock offset of %s: want a round trip of 0 to %s and an offset within %s", k, rd.RTT, rd.Offset, MaxRTT, MaxClockOffset)
		c.callOff(err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	if c.shards[k].ready == nil {
		c.shards[k].ready = &rd
		c.ready++
		if c.ready == len(c.shards) {
			close(c.joined)
		}
	}
	c.mu.Unlock()
	select {
	case <-c.begun:
		writeJSON(w, r, start{Start: c.start.UnixNano()})
	case <-c.stopped:
		http.Error(w, "the sale was called off: "+c.offReason(), http.StatusConflict)
	case <-r.Context().Done():
	}
}

func (c *Coordinator) offReason() string {
	c.offMu.Lock()
	defer c.offMu.Unlock()
	if c.offErr != nil {
		return c.offErr.Error()
	}
	return "stopped"
}

func (c *Coordinator) serveStop(w http.ResponseWriter, r *http.Request) {
	if _, err := c.shardParam(r, false); err != nil {
		http.Error(w, err.Error(), http.StatusConflict)
		return
	}
	t := time.NewTimer(Heartbeat)
	defer t.Stop()
	select {
	case <-c.stopped:
		writeJSON(w, r, map[string]any{"stop": true, "why": c.offReason()})
	case <-t.C:
		writeJSON(w, r, map[string]any{"stop": false}) // go on, and ask again
	case <-r.Context().Done():
	}
}

func (c *Coordinator) serveShoppers(w http.ResponseWriter, r *http.Request) {
	k, err := c.shardParam(r, false)
	if err != nil {
		http.Error(w, err.Error(), http.StatusConflict)
		return
	}
	select {
	case <-c.begun:
	default:
		http.Error(w, "the sale has not started", http.StatusConflict)
		return
	}
	c.mu.Lock()
	again := c.shards[k].streaming
	c.shards[k].streaming = true
	c.mu.Unlock()
	if again {
		http.Error(w, fmt.Sprintf("shard %d is already sending", k), http.StatusConflict)
		return
	}
	// Bounded in lines and bytes: a shard sends a record per arrival of
	// its own, then its done line, and nothing else.
	arrivals := load.Shard{Index: k, Of: len(c.shards)}.Count(len(c.job.Plan.Arrivals()))
	limit := streamLimit(arrivals)
	body := &countingReader{r: r.Body}
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	lines := 0
	for sc.Scan() {
		lines++
		refuse := func(err error) {
			c.send(event{shard: k, err: err})
			http.Error(w, err.Error(), http.StatusBadRequest)
		}
		if body.n > limit {
			refuse(fmt.Errorf("shard %d sent more than %d bytes of records, the most %d arrivals may take", k, limit, arrivals))
			return
		}
		var l Line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			refuse(fmt.Errorf("shard %d sent a line that is not a record: %v", k, err))
			return
		}
		switch {
		case l.Done != nil:
			if n := len(l.Done.Stalls); n > MaxStalls {
				refuse(fmt.Errorf("shard %d reported %d stalls, more than the %d a worker keeps", k, n, MaxStalls))
				return
			}
			c.send(event{shard: k, done: l.Done})
			w.WriteHeader(http.StatusNoContent)
			return
		case l.Shopper != nil && lines <= arrivals:
			c.send(event{shard: k, shopper: l.Shopper})
		case l.Shopper != nil:
			refuse(fmt.Errorf("shard %d sent more records than its %d arrivals", k, arrivals))
			return
		default:
			refuse(fmt.Errorf("shard %d sent a line that is neither a record nor its end", k))
			return
		}
	}
	err = sc.Err()
	if err == nil {
		err = errors.New("the stream ended before its last line")
	}
	c.send(event{shard: k, err: fmt.Errorf("shard %d died: %v", k, err)})
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// send hands an event to Send, unless Send has returned or the
// coordinator is gone.
func (c *Coordinator) send(e event) {
	select {
	case c.events <- e:
	case <-c.sent:
	case <-c.closed:
	}
}

// Lost tells the coordinator that shard k's worker is gone (its process
// exited): unless the shard had already ended, the run has lost it.
func (c *Coordinator) Lost(k int, err error) {
	err = fmt.Errorf("shard %d died: %v", k, err)
	select {
	case <-c.begun:
		c.send(event{shard: k, err: err})
	default:
		c.callOff(err) // Join is waiting: it ends
	}
}

// callOff ends the sale before or during it: waiting workers are told, and
// streaming ones stop.
func (c *Coordinator) callOff(err error) {
	c.offMu.Lock()
	if c.offErr == nil {
		c.offErr = err
	}
	c.offMu.Unlock()
	c.stopOnce.Do(func() { close(c.stopped) })
}

// Join waits until every shard is ready, at most within. A shard that
// cannot take part, or missing at the end of the wait, calls the sale off:
// the error wraps ErrShard and says which.
func (c *Coordinator) Join(ctx context.Context, within time.Duration) error {
	if within <= 0 {
		within = DefaultJoinWithin
	}
	t := time.NewTimer(within)
	defer t.Stop()
	select {
	case <-c.joined:
		return nil
	case <-c.stopped:
		return fmt.Errorf("%w: %s", ErrShard, c.offReason())
	case <-ctx.Done():
		c.callOff(ctx.Err())
		return ctx.Err()
	case <-t.C:
		var missing []string
		c.mu.Lock()
		for k, s := range c.shards {
			if s.ready == nil {
				missing = append(missing, strconv.Itoa(k))
			}
		}
		c.mu.Unlock()
		err := fmt.Errorf("%w: shards %s of %d were not ready within %s", ErrShard, strings.Join(missing, ", "), len(c.shards), within)
		c.callOff(err)
		return err
	}
}

// Lead is how long before the start instant the workers are told of it:
// enough for the answer to reach the farthest of them.
func (c *Coordinator) Lead() time.Duration {
	var most time.Duration
	c.mu.Lock()
	for _, s := range c.shards {
		if s.ready != nil {
			most = max(most, s.ready.RTT)
		}
	}
	c.mu.Unlock()
	return min(100*time.Millisecond+4*most, MaxLead)
}

// Send fixes the sale's start (after Join), takes every shard's records
// as they come, calling onResult (from one goroutine) for each, and
// returns the whole sale's report when every shard has ended. When ctx
// ends, or a shard fails, every shard is told to stop; the report then
// holds what came back, and the error wraps ErrShard for a failure (naming
// the first) or is ctx's.
func (c *Coordinator) Send(ctx context.Context, at time.Time, onResult func(*load.Shopper)) (*load.Report, error) {
	c.mu.Lock()
	c.start = at
	c.mu.Unlock()
	close(c.begun)
	defer close(c.sent)
	defer c.callOff(errors.New("the sale is over"))

	plan := c.job.Plan
	sched := plan.Offsets()
	var last time.Duration
	if len(sched) > 0 {
		last = sched[len(sched)-1]
	}
	// A shard still sending past its last arrival's deadline and the
	// stop grace is hung.
	overall := time.NewTimer(at.Add(last + plan.Patience + load.AnswerGrace + StopWithin).Sub(c.now()))
	defer overall.Stop()
	streamCheck := time.NewTimer(at.Add(StreamWithin).Sub(c.now()))
	defer streamCheck.Stop()
	var stopTimer <-chan time.Time
	var firstErr error
	ended := 0
	seen := make([]bool, len(sched))
	fail := func(k int, err error) {
		s := c.shards[k]
		if s.done != nil || s.err != nil {
			return
		}
		s.err = err
		ended++
		if firstErr == nil {
			firstErr = err
			c.callOff(err)
		}
	}
	stop := func() {
		if stopTimer == nil {
			c.callOff(context.Cause(ctx))
			stopTimer = time.After(StopWithin)
		}
	}
	ctxDone := ctx.Done()
	for ended < len(c.shards) {
		select {
		case e := <-c.events:
			c.mu.Lock()
			s := c.shards[e.shard]
			switch {
			case e.shopper != nil && s.done == nil && s.err == nil:
				sh := e.shopper
				if sh.Index < 0 || sh.Index >= len(sched) || !(load.Shard{Index: e.shard, Of: len(c.shards)}).Has(sh.Index) || seen[sh.Index] {
					fail(e.shard, fmt.Errorf("shard %d sent arrival %d, which is not its own to send (or not once)", e.shard, sh.Index))
					c.mu.Unlock()
					continue
				}
				seen[sh.Index] = true
				s.got++
				c.got = append(c.got, sh)
				c.mu.Unlock()
				if onResult != nil {
					onResult(sh)
				}
				continue
			case e.done != nil && s.done == nil && s.err == nil:
				if e.done.Error != "" {
					fail(e.shard, fmt.Errorf("shard %d: %s", e.shard, e.done.Error))
				} else {
					s.done = e.done
					ended++
				}
				s.stalls, s.stallsCut = e.done.Stalls, e.done.StallsCut
				c.unmatched = append(c.unmatched, e.done.Unmatched)
				c.emptyKept = append(c.emptyKept, e.done.EmptyKept)
			case e.err != nil:
				fail(e.shard, e.err)
			}
			c.mu.Unlock()
		case <-streamCheck.C:
			if stopTimer != nil {
				continue // stopping: a shard that never began has nothing to end
			}
			c.mu.Lock()
			for k, s := range c.shards {
				if !s.streaming {
					fail(k, fmt.Errorf("shard %d did not begin sending within %s of the start", k, StreamWithin))
				}
			}
			c.mu.Unlock()
		case <-ctxDone:
			ctxDone = nil
			stop()
		case <-stopTimer:
			c.giveUp(fail, fmt.Sprintf("did not end within %s of being told to stop", StopWithin))
		case <-overall.C:
			c.giveUp(fail, "was still sending after its last shopper's deadline")
		}
	}
	// A shard that ended of its own accord must have sent back every one
	// of its arrivals: one that stopped early (another version, a bug)
	// would otherwise pass for a sale that had fewer shoppers.
	if stopTimer == nil && firstErr == nil {
		c.mu.Lock()
		for k, s := range c.shards {
			if want := (load.Shard{Index: k, Of: len(c.shards)}).Count(len(sched)); s.got != want {
				s.err = fmt.Errorf("shard %d ended with %d of its %d shoppers sent back", k, s.got, want)
				if firstErr == nil {
					firstErr = s.err
				}
			}
		}
		c.mu.Unlock()
	}
	c.mu.Lock()
	got := slices.Clone(c.got)
	c.mu.Unlock()
	rep, err := load.Complete(plan, at, got)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrShard, err)
	}
	if firstErr != nil {
		return rep, fmt.Errorf("%w: %v", ErrShard, firstErr)
	}
	return rep, ctx.Err()
}

// giveUp fails every shard still sending.
func (c *Coordinator) giveUp(fail func(int, error), why string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.shards {
		fail(k, fmt.Errorf("shard %d %s", k, why))
	}
}

// Unmatched are the answers no rule understood, of every shard that ended.
func (c *Coordinator) Unmatched() []runrecord.Unmatched {
	c.mu.Lock()
	defer c.mu.Unlock()
	return runrecord.JoinUnmatched(c.unmatched...)
}

// EmptyKept are the kept values sent empty, of every shard that ended.
func (c *Coordinator) EmptyKept() []runrecord.EmptyKept {
	c.mu.Lock()
	defer c.mu.Unlock()
	return runrecord.JoinEmptyKept(c.emptyKept...)
}

// Shards is what each shard did, for the run's record.
func (c *Coordinator) Shards() []runrecord.Shard {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(c.job.Plan.Arrivals())
	mine := make([][]*load.Shopper, len(c.shards))
	for _, sh := range c.got {
		k := sh.Index % len(c.shards)
		mine[k] = append(mine[k], sh)
	}
	out := make([]runrecord.Shard, len(c.shards))
	for k, s := range c.shards {
		r := runrecord.Shard{Index: k, Shoppers: s.got, Scheduled: load.Shard{Index: k, Of: len(c.shards)}.Count(n)}
		if s.ready != nil {
			r.Host = s.ready.Host
			r.ClockOffsetMS = stats.MS(s.ready.Offset)
			r.ClockRTTMS = stats.MS(s.ready.RTT)
		}
		_, p99, _ := load.Lateness(mine[k])
		r.LateP99MS = stats.MS(p99)
		r.StarvedSpans, r.StarvedSpansCut = slices.Clone(s.stalls), s.stallsCut
		if s.err != nil {
			r.Error = s.err.Error()
		}
		out[k] = r
	}
	return out
}

// writeJSON answers r with v, signed under r's session.
func writeJSON(w http.ResponseWriter, r *http.Request, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	b = append(b, '\n')
	if s := sessionOf(r.Context()); s != nil {
		w.Header().Set(signatureHeader, s.sign(r.Method, r.URL.RequestURI(), b))
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}
