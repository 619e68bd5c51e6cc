package system_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/gameday-dev/gameday/gameday/load"
	"github.com/gameday-dev/gameday/gameday/system"
	"github.com/gameday-dev/gameday/internal/stats"
	"github.com/gameday-dev/gameday/internal/testenv"
)

// The benchmarks compare gameday's load generator, sending a described
// system's requests (a body rendered from the template below, answers read
// by its rules), with vegeta on the same plain HTTP target at the same
// rates, in one run, and measure the memory a shopper waiting on a
// connection holds. Each sub-benchmark runs its fixed plan once per iteration,
// so -benchtime 1x is the natural setting:
//
//	go test -run '^$' -bench . -benchtime 1x ./gameday/system/
//
// The target is an httptest server on 127.0.0.1 in a child process (this
// test binary, started with benchServerEnv=1), so that getrusage and the
// heap figures count the load generator alone.

const benchServerEnv = "GAMEDAY_LOAD_BENCH_SERVER"

// benchBody is the target's answer: a small JSON confirmed body.
var benchBody = []byte(`{"status":"confirmed","checkout_id":"bench","guest":true}` + "\n")

// serveBench serves the benchmarks' target until its stdin closes (the
// parent went away): POST /checkout answers 200 confirmed at once; POST
// /hold/checkout holds the request until POST /release; GET /held counts
// the requests held.
func serveBench() {
	var (
		mu      sync.Mutex
		release = make(chan struct{})
		held    atomic.Int64
	)
	answer := func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(benchBody)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /checkout", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		answer(w)
	})
	// The reference system's journeys' pages (BenchmarkMixedVsVegeta).
	page := []byte(`{"status":"ok","sku":"sku-1","price_cents":1999,"available":100}` + "\n")
	storefront := func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(page)
	}
	mux.HandleFunc("GET /products/{sku}", storefront)
	mux.HandleFunc("POST /cart", storefront)
	mux.HandleFunc("GET /cart", storefront)
	mux.HandleFunc("POST /hold/checkout", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		ch := release
		mu.Unlock()
		held.Add(1)
		select {
		case <-ch:
		case <-r.Context().Done():
		}
		answer(w)
	})
	mux.HandleFunc("GET /held", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, held.Load())
	})
	mux.HandleFunc("POST /release", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		close(release)
		release = make(chan struct{})
		held.Store(0)
		mu.Unlock()
	})
	_ = testenv.RaiseOpenFiles(openFiles)
	srv := httptest.NewServer(mux)
	// A second address: loopback has some 28,000 ephemeral ports for each
	// address a client connects to, fewer than the shoppers of
	// BenchmarkMemoryPerWaitingShopper.
	srv2 := httptest.NewServer(mux)
	fmt.Println(srv.URL, srv2.URL)
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// openFiles is what the benchmarks' processes need open at most: 30,000
// connections each, and some.
const openFiles = 40_000

// startBenchServer starts the target in a child process and returns its
// URL; the child ends with the benchmark.
func startBenchServer(b *testing.B) string {
	return startBenchServers(b)[0]
}

// startBenchServers starts the target in a child process and returns its
// two URLs (the same server on two ports).
func startBenchServers(b testing.TB) []string {
	b.Helper()
	exe, err := os.Executable()
	if err != nil {
		b.Fatalf("find test binary: %v", err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), benchServerEnv+"=1")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatalf("start bench server: %v", err)
	}
	b.Cleanup(func() {
		_ = stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		b.Fatalf("read bench server's URL: %v", err)
	}
	return strings.Fields(line)
}

// loadFigures are one tool's figures over the iterations of a benchmark.
type loadFigures struct {
	requests, errors, dropped int
	cpu                       time.Duration
	cpuOK                     bool
	late                      []time.Duration
	allocs, allocBytes        uint64
}

// measure runs f and adds the CPU time and allocations it took.
func (f *loadFigures) measure(run func()) {
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	before, ok := testenv.CPUTime()
	run()
	after, _ := testenv.CPUTime()
	runtime.ReadMemStats(&m1)
	f.cpu += after - before
	f.cpuOK = ok
	f.allocs += m1.Mallocs - m0.Mallocs
	f.allocBytes += m1.TotalAlloc - m0.TotalAlloc
}

func (f *loadFigures) report(b *testing.B) {
	slices.Sort(f.late)
	if f.cpuOK && f.requests > 0 {
		b.ReportMetric(float64(f.cpu.Nanoseconds())/float64(f.requests), "cpu-ns/req")
	}
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	b.ReportMetric(ms(stats.Percentile(f.late, 50)), "late-p50-ms")
	b.ReportMetric(ms(stats.Percentile(f.late, 99)), "late-p99-ms")
	if len(f.late) > 0 {
		b.ReportMetric(ms(f.late[len(f.late)-1]), "late-max-ms")
	}
	if f.requests > 0 {
		b.ReportMetric(float64(f.allocBytes)/float64(f.requests), "B/req")
		b.ReportMetric(float64(f.allocs)/float64(f.requests), "allocs/req")
	}
	b.ReportMetric(float64(f.dropped)/float64(b.N), "dropped")
	b.ReportMetric(float64(f.requests)/float64(b.N), "reqs")
	b.ReportMetric(float64(f.errors)/float64(b.N), "errors")
}

const (
	benchFor  = 2 * time.Second
	benchPool = 1000 // shoppers (gameday) and workers (vegeta) at most
)

// BenchmarkVsVegeta drives the same plain target at the same constant rates
// for 2 s with this package and with vegeta's Attacker and ConstantPacer,
// and reports CPU time per request (getrusage, user + system), lateness of
// starts against the plan, and dropped starts.
//
// Vegeta's lateness is its Result.Timestamp (taken when a worker picks up a
// tick) against its ConstantPacer's schedule, hit n due at (n+1)/rate after
// the attack began; the start is read just before Attack, a few
// microseconds before vegeta's own. Vegeta never drops: with every worker
// busy it starts another (up to MaxWorkers, here the same 1,000 as the
// pool), then waits, which shows as lateness, so its dropped is 0 by design.
func BenchmarkVsVegeta(b *testing.B) {
	url := startBenchServer(b)
	for _, rate := range []int{1000, 5000} {
		b.Run(fmt.Sprintf("rate=%d/tool=gameday", rate), func(b *testing.B) {
			var f loadFigures
			for range b.N {
				benchGameday(b, url, rate, nil, &f)
			}
			f.report(b)
		})
		// The generator before it had its own transport: the same flow
		// through net/http's Transport, with NewClient's old settings.
		b.Run(fmt.Sprintf("rate=%d/tool=gameday-net-http", rate), func(b *testing.B) {
			var f loadFigures
			for range b.N {
				benchGameday(b, url, rate, netHTTPClient(), &f)
			}
			f.report(b)
		})
		b.Run(fmt.Sprintf("rate=%d/tool=vegeta", rate), func(b *testing.B) {
			var f loadFigures
			for range b.N {
				benchVegeta(b, url, rate, &f)
			}
			f.report(b)
		})
	}
}

// BenchmarkVsVegetaPaired is BenchmarkVsVegeta with the tools taking turns:
// each iteration drives the target for 2 s with the generator, with
// vegeta and with the generator through net/http's transport, each tool
// first in turn, and the ratios within the iteration are kept. Any error
// or dropped start fails the benchmark. On a shared machine whose
// speed drifts from minute to minute, tools measured minutes apart (as
// -count does with sub-benchmarks) differ by more than the tools do;
// turns a few seconds apart share the machine's state. Reported: the
// median over the iterations of gameday ÷ vegeta and net/http ÷ vegeta,
// and each tool's median CPU per request.
//
//	go test -run '^$' -bench VsVegetaPaired -benchtime 10x ./gameday/system/
func BenchmarkVsVegetaPaired(b *testing.B) {
	url := startBenchServer(b)
	for _, rate := range []int{1000, 5000} {
		b.Run(fmt.Sprintf("rate=%d", rate), func(b *testing.B) {
			var gd, vg, nh, rg, rn []float64
			for i := range b.N {
				var g, v, n loadFigures
				takeTurns(i,
					func() { benchGameday(b, url, rate, nil, &g) },
					func() { benchVegeta(b, url, rate, &v) },
					func() { benchGameday(b, url, rate, netHTTPClient(), &n) },
				)
				clean(b, fmt.Sprintf("at %d/s", rate), map[string]loadFigures{"gameday": g, "vegeta": v, "net/http": n})
				per := func(f loadFigures) float64 { return float64(f.cpu.Nanoseconds()) / float64(f.requests) }
				gd, vg, nh = append(gd, per(g)), append(vg, per(v)), append(nh, per(n))
				rg, rn = append(rg, per(g)/per(v)), append(rn, per(n)/per(v))
			}
			b.ReportMetric(median(rg), "gameday/vegeta")
			b.ReportMetric(median(rn), "net-http/vegeta")
			b.ReportMetric(median(gd), "gameday-cpu-ns/req")
			b.ReportMetric(median(vg), "vegeta-cpu-ns/req")
			b.ReportMetric(median(nh), "net-http-cpu-ns/req")
			b.Logf("rate %d/s, gameday ÷ vegeta run by run: %s", rate, ratios(rg))
		})
	}
}

// takeTurns runs the tools' turns of iteration i, each tool first in
// turn.
func takeTurns(i int, turns ...func()) {
	for k := range turns {
		turns[(i+k)%len(turns)]()
	}
}

// clean skips a benchmark where CPU time cannot be read, and fails it
// where a tool sent nothing, or had an error or a drop: a tool that fails
// fast would look cheap per request.
func clean(b *testing.B, what string, figs map[string]loadFigures) {
	b.Helper()
	for _, tool := range slices.Sorted(maps.Keys(figs)) {
		f := figs[tool]
		if !f.cpuOK {
			b.Skip("no CPU time on this platform")
		}
		if f.requests == 0 || f.errors > 0 || f.dropped > 0 {
			b.Fatalf("%s %s: %d requests, %d errors, %d dropped", tool, what, f.requests, f.errors, f.dropped)
		}
	}
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func ratios(v []float64) string {
	out := make([]string, len(v))
	for i, r := range v {
		out[i] = strconv.FormatFloat(r, 'f', 2, 64)
	}
	return strings.Join(out, " ")
}

func benchGameday(b *testing.B, url string, rate int, hc *http.Client, f *loadFigures) {
	plan := load.Plan{
		// A ramp to the rate over one interval (half an arrival), then the
		// rate for 2 s: the same count and spacing as vegeta's constant
		// pacer, each arrival half an interval after vegeta's.
		Stages:      []load.Stage{{Duration: time.Second / time.Duration(rate), Target: float64(rate)}, {Duration: benchFor, Target: float64(rate)}},
		Patience:    5 * time.Second,
		MaxShoppers: benchPool,
		Seed:        1,
		IDPrefix:    "bench",
	}
	rep := runFlow(b, benchSystem(b, url).Flow(hc, "bench"), plan, f)
	for _, s := range rep.Shoppers {
		if s.Outcome == load.OutcomeDropped {
			continue
		}
		f.requests += len(s.Attempts)
		f.late = append(f.late, s.Late())
		if s.Outcome != load.OutcomeConfirmed {
			f.errors++
		}
	}
}

func benchVegeta(b *testing.B, url string, rate int, f *loadFigures) {
	// The same request the system's template renders for one shopper.
	body := []byte(`{"checkout_id":"bench-1","shopper":"bench-shopper-1","sku":"sku-1","session":"","deadline":"` + time.Now().Add(time.Minute).UTC().Format("2006-01-02T15:04:05.000Z07:00") + `"}`)
	tr := vegeta.NewStaticTargeter(vegeta.Target{
		Method: http.MethodPost, URL: url + "/checkout", Body: body,
		Header: http.Header{"Content-Type": {"application/json"}},
	})
	atk := vegeta.NewAttacker(vegeta.MaxWorkers(benchPool))
	pacer := vegeta.ConstantPacer{Freq: rate, Per: time.Second}
	interval := time.Second / time.Duration(rate)
	f.measure(func() {
		began := time.Now()
		for res := range atk.Attack(tr, pacer, benchFor, "bench") {
			f.requests++
			f.late = append(f.late, res.Timestamp.Sub(began.Add(time.Duration(res.Seq+1)*interval)))
			if res.Code != http.StatusOK || res.Error != "" {
				f.errors++
			}
		}
	})
}

// BenchmarkMixedVsVegeta drives a store's mixed load — 3,000 arrivals a
// second for 2 s, 70 % browsing (two product pages a second apart), 25 %
// filling a cart (the page, an add, a look at the cart, half a second
// apart; a fifth of them then buy) and 5 % buying — through the reference
// system's journeys and purchase, and, in turns, vegeta on the very
// requests the mix sends (vegeta cannot mix journeys: it is given the
// list, one target per request, at the same average rate over the same
// span: the arrivals' and the longest journey's pauses). Any drop or
// error fails it. Reported: the median of gameday ÷ vegeta in CPU per
// request over the iterations, each tool's median CPU per request, and
// the generator's late-start p99 (every arrival's, visits included).
//
//	go test -run '^$' -bench MixedVsVegeta -benchtime 5x ./gameday/system/
func BenchmarkMixedVsVegeta(b *testing.B) {
	url := startBenchServer(b)
	const rate = 3000
	sys := benchSystem(b, url)
	plan := load.Plan{
		// The load's own stages send nobody: the stream is the store.
		Stages:      []load.Stage{{Duration: benchFor, Target: 0, Hold: true}},
		Patience:    5 * time.Second,
		MaxShoppers: 10_000,
		Seed:        1,
		IDPrefix:    "bench",
		Journeys:    sys.LoadJourneys(1),
		Streams: []load.Stream{{
			Name: "store",
			// As BenchmarkVsVegeta: a ramp over one interval, then the rate.
			Stages:   []load.Stage{{Duration: time.Second / rate, Target: rate}, {Duration: benchFor, Target: rate}},
			Mix:      []load.Share{{Journey: "browse", Weight: 70}, {Journey: "cart", Weight: 25}, {Journey: "", Weight: 5}},
			Patience: 5 * time.Second,
		}},
	}
	if err := plan.Validate(); err != nil {
		b.Fatal(err)
	}
	targets := mixTargets(url, plan)
	// The mix's requests span the arrivals and the longest journey's
	// pauses after them: vegeta sends the same list over the same span.
	span := benchFor
	var longest time.Duration
	for _, j := range plan.Journeys {
		longest = max(longest, sys.ThinkTime(j.Name))
	}
	span += longest
	var rg, gd, vg, late []float64
	for i := range b.N {
		var g, v loadFigures
		var lateP99 time.Duration
		takeTurns(i,
			func() { lateP99 = benchMix(b, sys, plan, &g) },
			func() { benchVegetaList(b, targets, span, &v) },
		)
		clean(b, "on the mix", map[string]loadFigures{"gameday": g, "vegeta": v})
		if g.requests != len(targets) {
			b.Fatalf("gameday sent %d requests, the mix's list has %d", g.requests, len(targets))
		}
		per := func(f loadFigures) float64 { return float64(f.cpu.Nanoseconds()) / float64(f.requests) }
		gd, vg, rg = append(gd, per(g)), append(vg, per(v)), append(rg, per(g)/per(v))
		late = append(late, float64(lateP99)/1e6)
	}
	b.ReportMetric(median(rg), "gameday/vegeta")
	b.ReportMetric(median(gd), "gameday-cpu-ns/req")
	b.ReportMetric(median(vg), "vegeta-cpu-ns/req")
	b.ReportMetric(median(late), "late-p99-ms")
	b.ReportMetric(float64(len(targets)), "reqs")
	b.Logf("mixed %d arrivals/s, gameday ÷ vegeta run by run: %s; late p99 ms: %s", rate, ratios(rg), ratios(late))
}

// runFlow runs plan once through flow, measuring it into f (its CPU time,
// allocations and drops), and closes flow's idle connections after.
func runFlow(b *testing.B, flow *system.Flow, plan load.Plan, f *loadFigures) *load.Report {
	defer flow.CloseIdleConnections()
	var rep *load.Report
	var err error
	f.measure(func() { rep, err = load.Run(context.Background(), plan, flow, load.Options{}) })
	if err != nil {
		b.Fatalf("Run: %v", err)
	}
	f.dropped += rep.Dropped
	return rep
}

// benchMix runs the mixed plan once through the system's flow and returns
// its late-start p99.
func benchMix(b *testing.B, sys *system.System, plan load.Plan, f *loadFigures) time.Duration {
	rep := runFlow(b, sys.Flow(nil, "bench"), plan, f)
	if rep.Started+rep.Dropped != rep.Scheduled {
		b.Fatalf("%d of %d arrivals started", rep.Started, rep.Scheduled)
	}
	for _, s := range slices.Concat(rep.Shoppers, rep.Visits) {
		f.requests += len(s.Attempts)
		want := load.OutcomeOK
		if s.Journey == "" {
			want = load.OutcomeConfirmed
		}
		if s.Outcome != want {
			f.errors++
		}
	}
	return rep.LateP99
}

// mixTargets is the list of requests the mixed plan sends, as vegeta
// targets: each arrival's journey's requests (or its purchase), in the
// order of the arrivals, rendered as the reference system renders them.
func mixTargets(url string, plan load.Plan) []vegeta.Target {
	json := http.Header{"Content-Type": {"application/json"}}
	deadline := time.Now().Add(time.Hour).UTC().Format("2006-01-02T15:04:05.000Z07:00")
	product := vegeta.Target{Method: http.MethodGet, URL: url + "/products/sku-1"}
	var out []vegeta.Target
	for i, a := range plan.Arrivals() {
		shopper := "bench-shopper-" + strconv.Itoa(i)
		switch a.Journey {
		case "browse":
			out = append(out, product, product)
		case "cart":
			out = append(out, product,
				vegeta.Target{Method: http.MethodPost, URL: url + "/cart", Header: json, Body: []byte(`{"session":"` + shopper + `","sku":"sku-1","qty":1}`)},
				vegeta.Target{Method: http.MethodGet, URL: url + "/cart", Header: http.Header{"Session": {shopper}}})
		default:
			out = append(out, vegeta.Target{Method: http.MethodPost, URL: url + "/checkout", Header: json,
				Body: []byte(`{"checkout_id":"bench-` + strconv.Itoa(i) + `","shopper":"` + shopper + `","sku":"sku-1","session":"bench-session-` + strconv.Itoa(i) + `","deadline":"` + deadline + `"}`)})
		}
	}
	return out
}

// benchVegetaList sends the targets once each, in order, at the rate that
// sends them all in span.
func benchVegetaList(b *testing.B, targets []vegeta.Target, span time.Duration, f *loadFigures) {
	tr := vegeta.NewStaticTargeter(targets...)
	atk := vegeta.NewAttacker(vegeta.MaxWorkers(10_000))
	freq := int(math.Round(float64(len(targets)) / span.Seconds()))
	pacer := vegeta.ConstantPacer{Freq: freq, Per: time.Second}
	f.measure(func() {
		for res := range atk.Attack(tr, pacer, span, "bench") {
			f.requests++
			if res.Code != http.StatusOK || res.Error != "" {
				f.errors++
			}
		}
	})
}

// BenchmarkMemoryPerWaitingShopper: 30,000 shoppers through a described
// system's Flow to a server (in the child process) that holds every
// request, so each shopper also holds a keep-alive connection with its
// buffers. Half of them go to each of the server's two ports (see
// serveBench). 30,000 connections need the open-file limit of both
// processes raised to 40,000 (root with CAP_SYS_RESOURCE, or a hard limit
// that high); where it cannot be, 15,000 are held in one process (under a
// 20,000 limit), rss-MiB-30k reckons 30,000 from their cost, and
// processes=2 holds all 30,000 at once in two generator processes of
// 15,000 (each against a server of its own), as a run sharded two ways
// would, and reports the two generators' resident memory summed.
// rss-MiB is the generator's resident memory while they all wait.
// Side by side: the generator's own transport and net/http's, then the
// generator at half the count (below). The generator alone, without connections: gameday/load's.
func BenchmarkMemoryPerWaitingShopper(b *testing.B) {
	n := 30_000
	if err := testenv.RaiseOpenFiles(openFiles); err != nil {
		n = 15_000
		b.Logf("%d open files cannot be had (%v): %d shoppers a process", openFiles, err, n)
	}
	urls := startBenchServers(b)
	b.Run(fmt.Sprintf("client=gameday/shoppers=%d", n), func(b *testing.B) { benchWaiting(b, n, urls, load.NewClient) })
	if n < 30_000 {
		b.Run("client=gameday/shoppers=30000/processes=2", func(b *testing.B) { benchWaitingSplit(b, 30_000) })
	}
	b.Run(fmt.Sprintf("client=net-http/shoppers=%d", n), func(b *testing.B) { benchWaiting(b, n, urls, netHTTPClient) })
	// The generator at half the count, last: heap and stack a shopper the
	// same at both counts is a cost that 30,000 can be reckoned from. Its
	// rss figures are not: a process's resident memory does not shrink
	// back after the runs before it, so only the first sub-benchmark's
	// growth is the shoppers' alone.
	b.Run(fmt.Sprintf("client=gameday/shoppers=%d", n/2), func(b *testing.B) { benchWaiting(b, n/2, urls, load.NewClient) })
}

func benchWaiting(b *testing.B, n int, urls []string, client func() *http.Client) {
	for range b.N {
		a := benchSystem(b, urls[0]+"/hold").Flow(client(), "mem")
		c := benchSystem(b, urls[1]+"/hold").Flow(client(), "mem")
		t := halves{a, c}
		testenv.MeasureWaiting(b, n, t, func() {
			if err := awaitHeld(urls[0], n); err != nil {
				b.Fatal(err)
			}
		}, func() {
			if err := releaseHeld(urls[0]); err != nil {
				b.Fatal(err)
			}
		})
		a.CloseIdleConnections()
		c.CloseIdleConnections()
	}
}

// benchWaitingSplit holds n shoppers waiting at once in two generator
// processes of n/2 each (this test binary, started with benchWaitingEnv),
// each against a server process of its own, and reports the two
// generators' resident memory summed while all n wait: where no process
// may hold n connections, n are still held, and the generator's memory
// for them is the sum (each process's own base counted too, so the figure
// is if anything high).
func benchWaitingSplit(b *testing.B, n int) {
	servers := [][]string{startBenchServers(b), startBenchServers(b)}
	for range b.N {
		w, err := holdSplit(servers[0][0], servers[1][0], n)
		if err != nil {
			b.Fatal(err)
		}
		testenv.ReportWaiting(b, w)
		b.ReportMetric(2, "processes")
	}
}

// holdSplit holds n shoppers at once, half from each of two generator
// processes, the first half at url0 and the second at url1, and returns
// the two processes' figures summed while all n waited. Both processes
// have ended when it returns.
func holdSplit(url0, url1 string, n int) (testenv.Waiting, error) {
	exe, err := os.Executable()
	if err != nil {
		return testenv.Waiting{}, err
	}
	gens := make([]*waitingGenerator, 0, 2)
	defer func() {
		for _, g := range gens {
			g.stop()
		}
	}()
	for _, url := range []string{url0, url1} {
		g, err := startWaitingGenerator(exe, url, n/2)
		if err != nil {
			return testenv.Waiting{}, err
		}
		gens = append(gens, g)
	}
	// Every shopper of both waits once both have said so: each holds its
	// own until it is told to let them go.
	sum := testenv.Waiting{}
	for _, g := range gens {
		w, err := g.held()
		if err != nil {
			return sum, err
		}
		sum.Shoppers += w.Shoppers
		sum.Heap += w.Heap
		sum.Stack += w.Stack
	}
	for _, url := range []string{url0, url1} {
		if k, err := heldCount(url); err != nil || k < n/2 {
			return sum, fmt.Errorf("the server at %s holds %d of %d shoppers (%v)", url, k, n/2, err)
		}
	}
	for _, g := range gens {
		sum.RSS += testenv.ResidentBytes(strconv.Itoa(g.cmd.Process.Pid))
	}
	for _, g := range gens {
		if err := g.release(); err != nil {
			return sum, err
		}
	}
	return sum, nil
}

// benchWaitingEnv, set to "URL N", makes the test binary a generator that
// holds N shoppers waiting at URL's /hold (see waitBench).
const benchWaitingEnv = "GAMEDAY_LOAD_BENCH_WAITING"

// waitBench is the generator process of holdSplit: it runs its shoppers
// through the reference system's flow at the server given in
// benchWaitingEnv, and once they all wait prints "held SHOPPERS HEAP
// STACK" and waits for a line on stdin; then it lets them go, checks the
// run and prints "ok" (or "error: …" and exits 1).
func waitBench() int {
	url, count, _ := strings.Cut(os.Getenv(benchWaitingEnv), " ")
	n, err := strconv.Atoi(count)
	if err != nil {
		fmt.Printf("error: %s=%q: want \"URL N\"\n", benchWaitingEnv, os.Getenv(benchWaitingEnv))
		return 1
	}
	s, err := system.Reference(map[string]string{"CHECKOUT_URL": url + "/hold", "TOXIPROXY": "127.0.0.1:1"})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	flow := s.Flow(load.NewClient(), "mem")
	stdin := bufio.NewReader(os.Stdin)
	_, err = testenv.HoldWaiting(n, flow, func() error { return awaitHeld(url, n) }, func(w testenv.Waiting) {
		fmt.Printf("held %d %.0f %.0f\n", w.Shoppers, w.Heap, w.Stack)
		_, _ = stdin.ReadString('\n')
	}, func() error { return releaseHeld(url) })
	flow.CloseIdleConnections()
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println("ok")
	return 0
}

// waitingGenerator is one generator process of holdSplit.
type waitingGenerator struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
	done  chan struct{}
	err   error // cmd.Wait's, once done is closed
}

func startWaitingGenerator(exe, url string, n int) (*waitingGenerator, error) {
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s %d", benchWaitingEnv, url, n))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start a waiting generator: %w", err)
	}
	return &waitingGenerator{cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout), done: make(chan struct{})}, nil
}

// line is the generator's next line of output, or why there is none.
func (g *waitingGenerator) line() (string, error) {
	line, err := g.out.ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("generator %d ended without a word (%v)", g.cmd.Process.Pid, err)
	}
	if rest, ok := strings.CutPrefix(line, "error: "); ok {
		return "", fmt.Errorf("generator %d: %s", g.cmd.Process.Pid, strings.TrimSpace(rest))
	}
	return strings.TrimSpace(line), nil
}

// held waits until the generator's shoppers all wait and returns its
// figures (not its resident memory, which the caller reads).
func (g *waitingGenerator) held() (testenv.Waiting, error) {
	line, err := g.line()
	if err != nil {
		return testenv.Waiting{}, err
	}
	var w testenv.Waiting
	if _, err := fmt.Sscanf(line, "held %d %g %g", &w.Shoppers, &w.Heap, &w.Stack); err != nil {
		return w, fmt.Errorf("generator %d said %q: %v", g.cmd.Process.Pid, line, err)
	}
	return w, nil
}

// release lets the generator's shoppers go and waits for its verdict on
// its run.
func (g *waitingGenerator) release() error {
	if _, err := io.WriteString(g.stdin, "release\n"); err != nil {
		return fmt.Errorf("generator %d: %w", g.cmd.Process.Pid, err)
	}
	line, err := g.line()
	if err != nil {
		return err
	}
	if line != "ok" {
		return fmt.Errorf("generator %d said %q", g.cmd.Process.Pid, line)
	}
	return nil
}

// stop ends the generator: a closed stdin lets its shoppers go if they
// still wait; one that has not ended 10 s later is killed.
func (g *waitingGenerator) stop() {
	_ = g.stdin.Close()
	go func() { g.err = g.cmd.Wait(); close(g.done) }()
	select {
	case <-g.done:
	case <-time.After(10 * time.Second):
		_ = g.cmd.Process.Kill()
		<-g.done
	}
}

// awaitHeld waits (two minutes at most) until the server at url holds n
// requests.
func awaitHeld(url string, n int) error {
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		k, err := heldCount(url)
		if err != nil {
			return err
		}
		if k >= n {
			return nil
		}
	}
	return fmt.Errorf("the server at %s never held %d shoppers", url, n)
}

// heldCount is how many requests the server at url holds.
func heldCount(url string) (int, error) {
	ctl := &http.Client{Timeout: 5 * time.Second}
	resp, err := ctl.Get(url + "/held")
	if err != nil {
		return 0, fmt.Errorf("ask the server: %w", err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, fmt.Errorf("ask the server: %w", err)
	}
	return strconv.Atoi(string(got))
}

// releaseHeld tells the server at url to answer every request it holds.
func releaseHeld(url string) error {
	ctl := &http.Client{Timeout: 5 * time.Second}
	resp, err := ctl.Post(url+"/release", "", nil)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// netHTTPClient is load.NewClient as it was before the generator had a
// transport of its own: net/http's, with the same settings.
func netHTTPClient() *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	return &http.Client{Transport: &http.Transport{
		Proxy: http.ProxyFromEnvironment, DialContext: d.DialContext,
		MaxIdleConnsPerHost: load.PoolLimit, IdleConnTimeout: 5 * time.Second, TLSHandshakeTimeout: 5 * time.Second,
		DisableCompression: true, WriteBufferSize: 1 << 10, ReadBufferSize: 2 << 10,
	}}
}

// halves sends even shoppers to one flow and odd ones to the other.
type halves [2]*system.Flow

func (h halves) Do(ctx context.Context, call *load.Call) (load.Answer, error) {
	return h[call.Number%2].Do(ctx, call)
}

// benchSystem is the system the benchmarks drive: the reference checkout's
// request and answer rules, at url.
func benchSystem(b *testing.B, url string) *system.System {
	b.Helper()
	s, err := system.Reference(map[string]string{"CHECKOUT_URL": url, "TOXIPROXY": "127.0.0.1:1"})
	if err != nil {
		b.Fatal(err)
	}
	return s
}
