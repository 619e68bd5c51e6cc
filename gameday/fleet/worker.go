package fleet

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gameday-dev/gameday/gameday/hostmon"
	"github.com/gameday-dev/gameday/gameday/load"
	"github.com/gameday-dev/gameday/gameday/system"
	"github.com/gameday-dev/gameday/internal/noredirect"
	"github.com/gameday-dev/gameday/internal/redact"
)

// clockReadings is how many times a worker reads the coordinator's clock;
// it keeps the reading of the shortest round trip.
const clockReadings = 8

// WorkerOptions say where a worker calls in and which shard it sends.
type WorkerOptions struct {
	// Coordinator is the coordinator's base URL; Token the run's secret.
	Coordinator, Token string
	// Shard is the worker's shard, or -1: whichever is free.
	Shard int
	// Host names the worker in the run's record; "" means os.Hostname's.
	Host string
	// Log receives a line per step; nil means none.
	Log io.Writer
	// Wait is how long the worker keeps calling while the coordinator
	// cannot be reached (a pod or a task may start before it); 0 means
	// DefaultWorkerWait.
	Wait time.Duration
}

// DefaultWorkerWait bounds how long a worker calls a coordinator it
// cannot reach before it gives up.
const DefaultWorkerWait = 2 * time.Minute

// Work takes part in one sale as a worker: it fetches the job, checks that
// it can reach the system under test, measures its clock against the
// coordinator's, waits for the start, sends its shard's arrivals and
// streams every shopper's record back. It stops sending when the
// coordinator says so, or cannot be reached, or ctx ends. It returns nil
// when its whole part was sent and taken.
func Work(ctx context.Context, o WorkerOptions) error {
	w := &worker{o: o, hc: &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 4}, CheckRedirect: noredirect.Check}}
	base, err := url.Parse(strings.TrimRight(o.Coordinator, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return fmt.Errorf("worker: coordinator %q: want an http URL", o.Coordinator)
	}
	w.base = base.String()
	if w.o.Host == "" {
		w.o.Host, _ = os.Hostname()
	}
	shard := "any"
	if o.Shard >= 0 {
		shard = strconv.Itoa(o.Shard)
	}

	if err := w.hello(ctx); err != nil {
		return fmt.Errorf("worker: coordinator %s: %w", redact.URL(w.base), err)
	}
	var job Job
	if err := w.get(ctx, "/v1/job?shard="+shard, &job, 10*time.Second); err != nil {
		return fmt.Errorf("worker: fetch the job: %w", err)
	}
	w.shard = strconv.Itoa(job.Shard)
	w.logf("shard %d of %d: %d arrivals of %s", job.Shard, job.Of, load.Shard{Index: job.Shard, Of: job.Of}.Count(len(job.Plan.Arrivals())), job.System.File)

	flow, err := w.prepare(ctx, job)
	if err != nil {
		_ = w.post(ctx, "/v1/ready", Ready{Host: w.o.Host, Error: err.Error()}, nil)
		return fmt.Errorf("worker: shard %d: %w", job.Shard, err)
	}
	defer flow.CloseIdleConnections()
	offset, rtt, err := w.clock(ctx)
	if err != nil {
		return fmt.Errorf("worker: read the coordinator's clock: %w", err)
	}
	w.logf("clock: coordinator minus this machine %s (round trip %s)", offset, rtt)
	var st start
	if err := w.post(ctx, "/v1/ready", Ready{Offset: offset, RTT: rtt, Host: w.o.Host}, &st); err != nil {
		return fmt.Errorf("worker: shard %d: %w", job.Shard, err)
	}
	clock := func() time.Time { return time.Now().Add(offset) }
	at := time.Unix(0, st.Start)

	// Told to stop, or the coordinator gone: stop sending.
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	// The stream outlives the run (its last line says how the run
	// ended), but not a coordinator that is gone.
	streamCtx, cancelStream := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelStream()
	var told atomic.Bool
	go func() {
		defer stop()
		for runCtx.Err() == nil {
			var answer struct {
				Stop bool `json:"stop"`
			}
			if err := w.get(runCtx, "/v1/stop?shard="+w.shard, &answer, 2*Heartbeat); err != nil {
				if runCtx.Err() == nil {
					w.logf("the coordinator does not answer (%v): stopping", err)
					cancelStream()
				}
				return
			}
			if answer.Stop {
				told.Store(true)
				return
			}
		}
	}()

	pr, pw := io.Pipe()
	sent := make(chan error, 1)
	go func() { sent <- w.stream(streamCtx, pr) }()
	records := make(chan *load.Shopper, 4096)
	wrote := make(chan error, 1)
	go func() { wrote <- writeLines(pw, records) }()

	var d Done
	if late := clock().Sub(at); late > 0 {
		d.Error = fmt.Sprintf("was told of the start %s after it had passed", late.Round(time.Microsecond))
	} else {
		w.logf("start at %s (coordinator's clock), in %s", at.UTC().Format(time.RFC3339Nano), -late)
		// This machine's stalls are the evidence for the shoppers it
		// times, from the sale's start (on this machine's clock).
		host := hostmon.New(at.Add(-offset))
		hostCtx, stopHost := context.WithCancel(context.Background())
		hostDone := make(chan struct{})
		go func() { defer close(hostDone); host.Run(hostCtx) }()
		rep, err := load.Run(runCtx, job.Plan, flow, load.Options{
			Clock: clock, Start: at, Shard: load.Shard{Index: job.Shard, Of: job.Of},
			OnResult: func(s *load.Shopper) { records <- s },
		})
		if rep != nil {
			d.Scheduled, d.Started, d.Dropped = rep.Scheduled, rep.Started, rep.Dropped
			w.logf("sent: %d of %d started, %d dropped", rep.Started, rep.Scheduled, rep.Dropped)
		}
		switch {
		case err == nil:
		case told.Load(): // the coordinator stopped the sale: its part is sent
		case ctx.Err() != nil:
			d.Error = "the worker was interrupted before its part was sent"
		case runCtx.Err() != nil:
			d.Error = "the worker lost the coordinator before its part was sent"
		default:
			d.Error = err.Error()
		}
		d.Unmatched, d.EmptyKept = flow.Unmatched(), flow.EmptyKept()
		stopHost()
		<-hostDone
		d.Stalls, d.StallsCut = host.Spans()
	}
	close(records)
	err = <-wrote
	if err == nil {
		err = json.NewEncoder(pw).Encode(Line{Done: &d})
	}
	pw.CloseWithError(err)
	var serr error
	select {
	case serr = <-sent:
	case <-time.After(StopWithin):
		cancelStream()
		serr = <-sent
	}
	if serr != nil && err == nil {
		err = serr
	}
	switch {
	case err != nil:
		return fmt.Errorf("worker: shard %d: send the records: %w", job.Shard, err)
	case d.Error != "":
		return fmt.Errorf("worker: shard %d: %s", job.Shard, d.Error)
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return nil
}

type worker struct {
	o       WorkerOptions
	hc      *http.Client
	base    string
	shard   string
	session *session // proven by hello
}

func (w *worker) logf(format string, args ...any) {
	if w.o.Log != nil {
		fmt.Fprintf(w.o.Log, "gameday worker: "+format+"\n", args...)
	}
}

// hello proves to the coordinator that this worker knows the run's token,
// and has it prove the same, without sending it (auth.go), calling again
// every second while the coordinator cannot be reached, within
// WorkerOptions.Wait. A coordinator that answers without the proof is not
// this run's: nothing more is sent to it, and the worker sends nothing to
// anything else either.
func (w *worker) hello(ctx context.Context) error {
	wait := w.o.Wait
	if wait <= 0 {
		wait = DefaultWorkerWait
	}
	deadline := time.Now().Add(wait)
	nw, err := newNonce()
	if err != nil {
		return err
	}
	for n := 0; ; n++ {
		var h hello
		err := w.call(ctx, http.MethodGet, "/v1/hello?nonce="+hex.EncodeToString(nw), nil, &h, 10*time.Second)
		var refused *refusal
		switch {
		case err == nil:
			s, err := verifyHello(w.o.Token, nw, h)
			if err != nil {
				return fmt.Errorf("not this run's coordinator: %v; nothing was sent to it, or to the system under test", err)
			}
			w.session = s
			return nil
		case errors.As(err, &refused) && refused.status == http.StatusNotFound:
			return fmt.Errorf("%v: it does not speak %s (a gameday of another version?): run the same version on both; nothing else was sent to it", err, Protocol)
		case errors.As(err, &refused) || ctx.Err() != nil || time.Now().Add(time.Second).After(deadline):
			return err
		}
		if n == 0 {
			w.logf("the coordinator is not reachable yet (%v); calling again every second for %s", err, wait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// prepare builds the shard's purchase flow from the job, as the
// coordinator built its own, and checks that the system answers on its
// address.
func (w *worker) prepare(ctx context.Context, job Job) (*system.Flow, error) {
	if job.Protocol != Protocol {
		return nil, fmt.Errorf("the coordinator speaks %q, this worker %q: run the same gameday version on both", job.Protocol, Protocol)
	}
	if err := (load.Shard{Index: job.Shard, Of: job.Of}).Validate(); err != nil {
		return nil, err
	}
	// From the job alone: a ${NAME} it does not give is never read from
	// this machine's environment.
	sys, err := system.ParseSource(job.System)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(sys.BaseURL)
	if err != nil {
		return nil, err
	}
	hostport := u.Host
	if u.Port() == "" {
		hostport = net.JoinHostPort(u.Hostname(), map[string]string{"https": "443"}[u.Scheme]+map[string]string{"http": "80"}[u.Scheme])
	}
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(dctx, "tcp", hostport)
	if err != nil {
		return nil, fmt.Errorf("cannot reach the system under test at %s: %v", sys.BaseURL, err)
	}
	conn.Close()
	return sys.Flow(nil, job.Plan.IDPrefix), nil
}

// clock measures the coordinator's clock minus this machine's: of
// clockReadings readings, the one of the shortest round trip, taken to be
// read halfway through it.
func (w *worker) clock(ctx context.Context) (offset, rtt time.Duration, err error) {
	rtt = -1
	for range clockReadings {
		var c struct {
			Now int64 `json:"now"`
		}
		t0 := time.Now()
		if err := w.get(ctx, "/v1/clock", &c, 5*time.Second); err != nil {
			return 0, 0, err
		}
		took := time.Since(t0)
		if rtt < 0 || took < rtt {
			rtt = took
			offset = time.Unix(0, c.Now).Sub(t0.Add(took / 2))
		}
	}
	return offset, rtt, nil
}

// writeLines encodes the records as JSON lines as they come, flushing
// whenever none is waiting.
func writeLines(w io.Writer, records <-chan *load.Shopper) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	var err error
	for s := range records {
		if err == nil {
			err = enc.Encode(Line{Shopper: s})
		}
		if err == nil && len(records) == 0 {
			err = bw.Flush()
		}
		// After an error the records are still taken, so that the
		// shoppers never block on a stream that is gone.
	}
	if err == nil {
		err = bw.Flush()
	}
	return err
}

// stream sends body as the shard's records.
func (w *worker) stream(ctx context.Context, body io.Reader) error {
	return w.call(ctx, http.MethodPost, "/v1/shoppers?shard="+w.shard, body, nil, 0)
}

func (w *worker) get(ctx context.Context, path string, out any, timeout time.Duration) error {
	return w.call(ctx, http.MethodGet, path, nil, out, timeout)
}

// post sends in as JSON; the answer may take as long as the coordinator
// needs (ready waits for every shard).
func (w *worker) post(ctx context.Context, path string, in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return w.call(ctx, http.MethodPost, path+"?shard="+w.shard, bytes.NewReader(b), out, 0)
}

// call sends one request with the worker's proof (none before hello) and
// decodes a 2xx answer into out (unless nil), once its signature is
// checked: an answer the coordinator did not sign is not acted on. Any
// other answer is a refusal. timeout bounds the call when above 0.
func (w *worker) call(ctx context.Context, method, path string, body io.Reader, out any, timeout time.Duration) error {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, method, w.base+path, body)
	if err != nil {
		return err
	}
	if w.session != nil {
		req.Header.Set("Authorization", w.session.header())
	}
	resp, err := w.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if noredirect.Is(resp) {
		// Not a coordinator elsewhere: nothing is sent where it points.
		return &refusal{status: resp.StatusCode, msg: noredirect.Error(resp).Error()}
	}
	if resp.StatusCode/100 != 2 {
		return answerError(resp)
	}
	if out == nil {
		return nil
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return err
	}
	if len(b) > maxAnswer {
		return fmt.Errorf("%s %s: an answer of more than %d bytes", method, path, maxAnswer)
	}
	if w.session != nil {
		got, _ := hex.DecodeString(resp.Header.Get(signatureHeader))
		want, _ := hex.DecodeString(w.session.sign(method, req.URL.RequestURI(), b))
		if !equal(got, want) {
			return fmt.Errorf("%s %s: the answer is not signed by this run's coordinator: not acted on", method, path)
		}
	}
	return json.Unmarshal(b, out)
}

// maxAnswer bounds an answer of the coordinator: the job is the largest,
// a system file (1 MiB at most) and its plan.
const maxAnswer = 64 << 20

// refusal is the coordinator's answer refusing a request.
type refusal struct {
	status int
	msg    string
}

func (r *refusal) Error() string { return r.msg }

func answerError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	return &refusal{status: resp.StatusCode, msg: resp.Status + ": " + strings.TrimSpace(string(b))}
}
