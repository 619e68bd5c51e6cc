package gameday_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday"
	"github.com/gameday-dev/gameday/gameday/env"
	"github.com/gameday-dev/gameday/gameday/faults"
	"github.com/gameday-dev/gameday/gameday/judge"
	"github.com/gameday-dev/gameday/gameday/load"
	"github.com/gameday-dev/gameday/gameday/runrecord"
	"github.com/gameday-dev/gameday/internal/testenv"
	"github.com/gameday-dev/gameday/scenarios"
)

// binary is the gameday executable the drills start as the payment
// stand-in and the checkout, built once for the package's tests.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "gameday-bin-")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "gameday")
	if err := testenv.GoBuild(binary, "../cmd/gameday"); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// timeScale is the drills' in this package's tests: their timelines at 0.4
// of the catalogue's.
const timeScale = 0.4

func options(t testing.TB) gameday.Options {
	j := faults.OpenJournal(filepath.Join(t.TempDir(), "journal.json"))
	// A lease renewed after the test would write into its removed
	// directory.
	t.Cleanup(j.StopRenewing)
	return gameday.Options{Binary: binary, RunsDir: t.TempDir(), TimeScale: timeScale, Journal: j}
}

func lookup(t testing.TB, name string) *scenarios.Scenario {
	t.Helper()
	sc, err := scenarios.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func run(t *testing.T, ctx context.Context, sc *scenarios.Scenario, o gameday.Options) *gameday.Record {
	t.Helper()
	rec, dir, err := gameday.Run(ctx, sc, o)
	if err != nil {
		t.Fatalf("run %s: %v", sc.Name, err)
	}
	back, err := gameday.ReadRecord(filepath.Join(dir, "run.json"))
	if err != nil || back.Verdict != rec.Verdict {
		t.Fatalf("run.json: %v, verdict %q vs %q", err, back.Verdict, rec.Verdict)
	}
	// A drill that fails its test keeps its evidence: the run directory
	// in the CI artifacts, and how the machine and the load went here.
	testenv.KeepRun(t, dir)
	sameOnRejudge(t, dir)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%s: %s (%s); load %+v; outcomes %v; host %s; notes %q", sc.Name, rec.Verdict, rec.Reason, rec.Load, rec.Outcomes, hostString(rec.Host), rec.Notes)
		}
	})
	return rec
}

// sameOnRejudge judges the run in dir again from what it observed, with
// its own scenario: the judgement must be the run's, byte for byte. A run
// that ended before its load observed nothing, and judging it again says
// so; so does one whose scenario a test changed in code.
func sameOnRejudge(t *testing.T, dir string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, judge.ObservationsFile)); errors.Is(err, fs.ErrNotExist) {
		if _, err := gameday.Rejudge(dir, ""); err == nil || !strings.Contains(err.Error(), "ended before anything was observed") {
			t.Errorf("judge a run that observed nothing again: %v", err)
		}
		return
	}
	// A scenario a test changed in code (a fault added) has no YAML that
	// says it: the run keeps none, and judging again asks for one.
	if _, err := os.Stat(filepath.Join(dir, gameday.ScenarioFile)); errors.Is(err, fs.ErrNotExist) {
		if _, err := gameday.Rejudge(dir, ""); err == nil || !strings.Contains(err.Error(), "name the scenario to judge it with") {
			t.Errorf("judge a run of a scenario changed in code again: %v", err)
		}
		return
	}
	r, err := gameday.Rejudge(dir, "")
	if err == nil {
		err = r.Unchanged()
	}
	if err != nil {
		t.Errorf("judge the run again: %v", err)
	}
}

func hostString(h *runrecord.Host) string {
	if h == nil {
		return "not measured"
	}
	s := fmt.Sprintf("stalls max %.0fms p99 %.0fms, worst %v, load %.2f", h.StallMaxMS, h.StallP99MS, h.Stalls, h.Load1)
	if h.CPUPressurePct != nil {
		s += fmt.Sprintf(", CPU pressure %.0f%%", *h.CPUPressurePct)
	}
	return s
}

// Catalogue drills end to end against real redis-server processes, the
// checkout and the payment stand-in as child processes and an embedded
// Toxiproxy, time-scaled for CI: the reference checkout keeps its promises.
func TestCatalogueDrillsPass(t *testing.T) {
	for _, name := range []string{"baseline", "payment-latency", "sessions-down", "redis-killed", "payment-lost-response", "payment-429", "inventory-lost-reply"} {
		t.Run(name, func(t *testing.T) {
			rec := run(t, context.Background(), lookup(t, name), options(t))
			if rec.Verdict != gameday.VerdictPass {
				t.Fatalf("verdict %s: %s\nexpectations %+v\ninvariants %+v", rec.Verdict, rec.Reason, rec.Expectations, rec.Invariants)
			}
			// Its books give every fact: no invariant goes unjudged
			// (wrong_amounts among them, the orders' price against what
			// the provider took).
			for _, c := range rec.InvariantChecks {
				if c.NotChecked {
					t.Errorf("%s not checked (needs %s)", c.Invariant, c.Needs)
				}
			}
			if rec.Environment.Redis == "" || !strings.HasPrefix(rec.Environment.Redis, "redis-server") {
				t.Errorf("environment: %+v, want a real redis-server", rec.Environment)
			}
			if rec.Load.Started == 0 || rec.TimeScale != 0.4 {
				t.Errorf("load %+v, time scale %v", rec.Load, rec.TimeScale)
			}
		})
	}
}

// Last year's evening replayed at 150 %: the reference checkout keeps the
// catalogue's promises, and the drill scheduled the recording's arrivals
// times 1.5 (the time scale shortening the replay as it does stages).
func TestReplayLastYearAt150Percent(t *testing.T) {
	sc := lookup(t, "replay-last-year")
	o := options(t)
	o.RateScale = 1.5
	rec := run(t, context.Background(), sc, o)
	if rec.Verdict != gameday.VerdictPass {
		t.Fatalf("verdict %s: %s\nexpectations %+v\ninvariants %+v", rec.Verdict, rec.Reason, rec.Expectations, rec.Invariants)
	}
	var stages []load.Stage
	for _, st := range sc.Scaled(1.5, timeScale).Load.Stages {
		stages = append(stages, load.Stage{Duration: st.Duration.D(), Target: st.Target, Hold: st.Hold})
	}
	if want := len(load.Schedule(stages)); rec.Load.Scheduled != want || want < 500 {
		t.Errorf("scheduled %d arrivals, want %d (the recording's part × 1.5 × %g)", rec.Load.Scheduled, want, timeScale)
	}
	// Sent against recorded, every second: the drill's arrivals and the
	// recording × 1.5 (× the time scale), as the report charts them.
	sr := rec.Series
	if len(sr.Planned) != sr.Seconds || sr.Seconds < 30 {
		t.Errorf("series of %d seconds with %d planned", sr.Seconds, len(sr.Planned))
	}
	for i := range min(len(sr.Planned), len(sr.Arrivals)) {
		if d := math.Abs(float64(sr.Arrivals[i]) - sr.Planned[i]); d > max(0.02*sr.Planned[i], 1) {
			t.Errorf("second %d: %d arrivals, the recording × scale %.2f", i, sr.Arrivals[i], sr.Planned[i])
		}
	}
	if !slices.ContainsFunc(rec.Notes, func(n string) bool { return strings.HasPrefix(n, "the load replays recordings/last-year.csv (csv") }) {
		t.Errorf("notes %q: none says what was replayed", rec.Notes)
	}
}

// A process paused mid-sale (SIGSTOP) and resumed: the breaker opens, the
// shoppers check out as guests, and it recovers once the process runs.
func TestPausedProcessFault(t *testing.T) {
	sc, err := scenarios.LoadFile("testdata/sessions-paused.yaml")
	if err != nil {
		t.Fatal(err)
	}
	o := options(t)
	o.TimeScale = 1
	rec := run(t, context.Background(), sc, o)
	if rec.Verdict != gameday.VerdictPass {
		t.Fatalf("verdict %s: %s", rec.Verdict, rec.Reason)
	}
	if len(rec.Faults) != 1 || rec.Faults[0].Kind != "pause" || rec.Faults[0].Error != "" {
		t.Errorf("faults: %+v", rec.Faults)
	}
}

// The same seed gives the same drill: the same arrivals and, since the
// stand-in draws from the seed and the charge key, the same declines.
func TestSameSeedSameDrill(t *testing.T) {
	o := options(t)
	o.TimeScale = 0.2
	a := run(t, context.Background(), lookup(t, "baseline"), o)
	b := run(t, context.Background(), lookup(t, "baseline"), o)
	if a.Load.Scheduled != b.Load.Scheduled || a.Outcomes["declined"] != b.Outcomes["declined"] || a.Outcomes["declined"] == 0 {
		t.Errorf("two runs with seed %d: %v and %v (scheduled %d and %d)", a.Seed, a.Outcomes, b.Outcomes, a.Load.Scheduled, b.Load.Scheduled)
	}
}

// A fault a killed runner left on a Toxiproxy that no longer answers
// cannot be undone: it is set aside and named in the record, and the drill
// runs. It once stopped every later drill at setup, in every environment.
func TestUndoableLeftoverDoesNotBlockDrills(t *testing.T) {
	o := options(t)
	o.TimeScale = 0.2
	boot, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	stale := fmt.Sprintf(`[{"run_id":"old","pid":1,"started":"12345","boot":%q,"toxiproxy":"127.0.0.1:1","proxy":"inventory","toxic":"gameday-old-slow"}]`, strings.TrimSpace(string(boot)))
	path := filepath.Join(t.TempDir(), "journal.json")
	if err := os.WriteFile(path, []byte(stale), 0o644); err != nil {
		t.Fatal(err)
	}
	o.Journal = faults.OpenJournal(path)
	rec := run(t, context.Background(), lookup(t, "baseline"), o)
	if rec.Verdict == gameday.VerdictError || rec.Load.Started == 0 {
		t.Fatalf("verdict %s (%s), load %+v", rec.Verdict, rec.Reason, rec.Load)
	}
	if !slices.ContainsFunc(rec.Notes, func(n string) bool { return strings.Contains(n, "set aside") && strings.Contains(n, "-drop old") }) {
		t.Errorf("notes %q do not name the set-aside fault", rec.Notes)
	}
	es, err := o.Journal.Entries()
	if err != nil || len(es) != 1 || es[0].SetAside == "" {
		t.Errorf("journal after the drill: %+v, %v; want the entry, set aside", es, err)
	}
}

// The embedded fallback runs a drill and says so in the record.
func TestEmbeddedRedisFallbackIsAnnounced(t *testing.T) {
	o := options(t)
	o.EmbeddedRedis, o.TimeScale = true, 0.2
	rec := run(t, context.Background(), lookup(t, "baseline"), o)
	// The claim is the announcement and that a drill runs on it; how well
	// miniredis does under load is not this project's to promise.
	if rec.Verdict == gameday.VerdictError || rec.Load.Started == 0 || rec.Environment.Redis != "embedded (miniredis)" ||
		len(rec.Environment.Notes) == 0 || !strings.Contains(rec.Environment.Notes[0], "embedded") {
		t.Fatalf("verdict %s (%s), load %+v, environment %+v", rec.Verdict, rec.Reason, rec.Load, rec.Environment)
	}
}

// A drill against a checkout broken on purpose fails, and says why.
func TestBrokenCheckoutFails(t *testing.T) {
	t.Run("naive inventory oversells", func(t *testing.T) {
		sc := lookup(t, "baseline")
		sc.Checkout.Mode = "naive"
		sc.Stock = 20
		sc.Payment.MinLatency, sc.Payment.MaxLatency = scenarios.Duration(100*time.Millisecond), scenarios.Duration(300*time.Millisecond)
		rec := run(t, context.Background(), sc, options(t))
		if rec.Verdict != gameday.VerdictFail || rec.Invariants.Oversold == 0 || !strings.Contains(rec.Reason, "oversold") {
			t.Fatalf("verdict %s (%s), invariants %+v", rec.Verdict, rec.Reason, rec.Invariants)
		}
	})
	t.Run("payment breaker made ineffective", func(t *testing.T) {
		sc := lookup(t, "payment-latency")
		sc.Checkout.Payment.Disabled = true
		rec := run(t, context.Background(), sc, options(t))
		if rec.Verdict != gameday.VerdictFail || !strings.Contains(rec.Reason, "payment breaker opens") {
			t.Fatalf("verdict %s (%s)", rec.Verdict, rec.Reason)
		}
	})
}

// The command exits 1 on a failed promise and says why on stdout.
func TestBrokenCheckoutExitsOne(t *testing.T) {
	cmd := exec.Command(binary, "run", "-quiet", "-runs-dir", t.TempDir(), "-journal", filepath.Join(t.TempDir(), "j.json"), "testdata/naive-oversell.yaml")
	out, err := cmd.Output()
	if code := exitCode(err); code != 1 {
		t.Fatalf("exit code %d, want 1; output:\n%s", code, out)
	}
	if !strings.Contains(string(out), "FAIL") || !strings.Contains(string(out), "oversold is at most 0") {
		t.Errorf("output does not say why:\n%s", out)
	}
}

// startService is "the user's service" for external drills: a local
// environment the test owns, whose Toxiproxy outlives the runner.
func startService(t *testing.T) *env.Local {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Configured as the local environment configures payment-latency's
	// checkout at the drills' time scale, which an external service must
	// do itself: its breakers stay open as long as the scaled drill's
	// would (one open past the drill's time scale, after a stall of the
	// machine, was a failure of the drill that the scenario never made).
	sc := lookup(t, "payment-latency").Scaled(1, timeScale)
	l, err := env.StartLocal(ctx, env.LocalOptions{Binary: binary, Dir: t.TempDir(),
		PaymentArgs: gameday.PaymentArgs(sc, sc.Seed), CheckoutArgs: gameday.CheckoutArgs(sc)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

func external(l *env.Local) env.ExternalOptions {
	return env.ExternalOptions{
		Toxiproxy: l.Toxiproxy().Addr(), CheckoutURL: l.CheckoutURL(), PaymentURL: l.PaymentURL(), AdminToken: l.AdminToken(),
		Proxies: map[string]string{"payment": "payment", "inventory": "inventory", "sessions": "sessions"},
	}
}

// faultsOn lists the toxics and disabled proxies on the service's Toxiproxy.
func faultsOn(t *testing.T, l *env.Local) []string {
	t.Helper()
	ps, err := l.Toxiproxy().Proxies(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for name, p := range ps {
		if !p.Enabled {
			out = append(out, name+" disabled")
		}
		for _, tx := range p.Toxics {
			out = append(out, name+"/"+tx.Name)
		}
	}
	return out
}

// An external service whose breakers are read from its Prometheus gauge:
// the drill sees the payment breaker open and close from the samples.
func TestExternalDrillReadsBreakerMetric(t *testing.T) {
	l := startService(t)
	o := options(t)
	o.Environment = external(l)
	o.BreakerMetric = &scenarios.BreakerMetric{URL: l.CheckoutURL() + "/metrics"}
	rec := run(t, context.Background(), lookup(t, "payment-latency"), o)
	if rec.Verdict != gameday.VerdictPass || rec.Environment.Kind != "external" {
		t.Fatalf("verdict %s (%s), environment %+v", rec.Verdict, rec.Reason, rec.Environment)
	}
	if b := rec.Breakers["payment"]; b.OpenedAfterMS == nil || b.ClosedAfterMS == nil {
		t.Errorf("payment breaker from the metric: %+v", b)
	}
	if got := faultsOn(t, l); len(got) != 0 {
		t.Errorf("faults left on the service: %v", got)
	}
}

// A fault that cannot be injected stops the drill with an error verdict:
// the system was not tested as the scenario says, so it neither passes nor
// fails.
func TestFaultThatCannotBeInjectedIsAnError(t *testing.T) {
	l := startService(t)
	o := options(t)
	ext := external(l)
	ext.Proxies["payment"] = "no-such-proxy" // Toxiproxy refuses the toxic
	o.Environment = ext
	rec := run(t, context.Background(), lookup(t, "payment-latency"), o)
	if rec.Verdict != gameday.VerdictError || !strings.Contains(rec.Reason, "slow-provider") {
		t.Fatalf("verdict %s: %s", rec.Verdict, rec.Reason)
	}
	if len(rec.Faults) != 1 || rec.Faults[0].Error == "" {
		t.Errorf("faults: %+v", rec.Faults)
	}
	if got := faultsOn(t, l); len(got) != 0 {
		t.Errorf("faults left: %v", got)
	}
	// With no proxy named at all, the drill is refused before any load is
	// sent, naming the scenario's line.
	o = options(t)
	ext = external(l)
	delete(ext.Proxies, "payment")
	o.Environment = ext
	rec = run(t, context.Background(), lookup(t, "payment-latency"), o)
	if rec.Verdict != gameday.VerdictError || !strings.Contains(rec.Reason, "faults[0].target: no Toxiproxy proxy is known in front of payment") || rec.Load.Started != 0 {
		t.Fatalf("no proxy: verdict %s: %s (started %d)", rec.Verdict, rec.Reason, rec.Load.Started)
	}
}

// The unproxied local environment, a measurement of what the proxies cost,
// is not a drill: a network fault has nothing to act on and is refused
// before any load, and the record says the run went past Toxiproxy.
func TestUnproxiedRefusesNetworkFaults(t *testing.T) {
	o := options(t)
	o.Environment = env.LocalOptions{Binary: binary, Unproxied: true}
	rec := run(t, context.Background(), lookup(t, "payment-latency"), o)
	if rec.Verdict != gameday.VerdictError || !strings.Contains(rec.Reason, "faults[0].target: no Toxiproxy proxy is known in front of payment") || rec.Load.Started != 0 {
		t.Fatalf("verdict %s: %s (started %d)", rec.Verdict, rec.Reason, rec.Load.Started)
	}
	if !slices.ContainsFunc(rec.Environment.Notes, func(n string) bool { return strings.HasPrefix(n, "unproxied: ") }) {
		t.Errorf("notes %q do not say the run was unproxied", rec.Environment.Notes)
	}
}

// SIGINT in the middle of a fault: exit 3, and the fault is gone from the
// external Toxiproxy.
func TestInterruptMidFaultRemovesIt(t *testing.T) {
	l := startService(t)
	journal := filepath.Join(t.TempDir(), "journal.json")
	cmd, stderr := startRun(t, journal, l, "payment-latency")
	waitFor(t, stderr, "faults=[slow-provider]", 30*time.Second)
	if got := faultsOn(t, l); len(got) != 1 {
		t.Fatalf("mid-fault the proxy has %v, want the one toxic", got)
	}
	_ = cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	if code := exitCode(err); code != 3 {
		t.Errorf("exit code after SIGINT = %d, want 3", code)
	}
	if got := faultsOn(t, l); len(got) != 0 {
		t.Errorf("after SIGINT the proxy still has %v", got)
	}
}

// A panic in the run path with a fault in place on an external Toxiproxy
// (which outlives the runner): the fault comes off as the panic unwinds,
// and the journal forgets it. Nothing removed it before.
func TestPanicMidFaultRemovesIt(t *testing.T) {
	l := startService(t)
	sc := lookup(t, "payment-latency")
	sc.Faults[0].For = 0 // in place until the load ends
	o := options(t)
	o.Environment, o.TimeScale = external(l), 0.3
	defer gameday.SetBeforeRemovingFaults(func() {
		if got := faultsOn(t, l); len(got) != 1 {
			t.Errorf("before the panic the proxies have %v, want the one toxic", got)
		}
		panic("on purpose")
	})()
	func() {
		defer func() {
			if p := recover(); p != "on purpose" {
				t.Errorf("recovered %v, want the panic", p)
			}
		}()
		_, _, err := gameday.Run(context.Background(), sc, o)
		t.Errorf("Run returned (%v); want its panic", err)
	}()
	if got := faultsOn(t, l); len(got) != 0 {
		t.Errorf("after the panic the proxies have %v", got)
	}
	if es, err := o.Journal.Entries(); err != nil || len(es) != 0 {
		t.Errorf("journal after the panic: %+v, %v", es, err)
	}
}

// SIGKILL in the middle of a fault leaves it on the external Toxiproxy; the
// journal lets the next start (here "gameday cleanup") remove it, and
// nothing else.
func TestKilledRunnerLeftoversAreCleanedUp(t *testing.T) {
	l := startService(t)
	journal := filepath.Join(t.TempDir(), "journal.json")
	cmd, stderr := startRun(t, journal, l, "payment-latency")
	waitFor(t, stderr, "faults=[slow-provider]", 30*time.Second)
	// Someone else's toxic, added once the drill is under way (a drill
	// refuses to start on top of one), which cleanup must leave alone.
	if _, err := l.Toxiproxy().AddToxic(context.Background(), "sessions", toxiFor("theirs")); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if got := faultsOn(t, l); len(got) != 2 {
		t.Fatalf("after SIGKILL the proxies have %v, want the runner's toxic and theirs", got)
	}
	out, err := exec.Command(binary, "cleanup", "-journal", journal).CombinedOutput()
	if err != nil {
		t.Fatalf("cleanup: %v\n%s", err, out)
	}
	if got := faultsOn(t, l); len(got) != 1 || got[0] != "sessions/theirs" {
		t.Errorf("after cleanup: %v, want only sessions/theirs", got)
	}
	if !strings.Contains(string(out), "removed toxic gameday-") {
		t.Errorf("cleanup said: %s", out)
	}
}

func startRun(t *testing.T, journal string, l *env.Local, scenario string) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	ext := external(l)
	cmd := exec.Command(binary, "run", "-env", "external", "-journal", journal, "-runs-dir", t.TempDir(), "-time-scale", "0.5",
		"-toxiproxy", ext.Toxiproxy, "-checkout-url", ext.CheckoutURL, "-payment-url", ext.PaymentURL,
		"-proxy", "payment=payment", "-proxy", "inventory=inventory", "-proxy", "sessions=sessions", scenario)
	// As a user gives it: the checkout's admin token in the environment.
	cmd.Env = append(os.Environ(), env.AdminTokenVar+"="+ext.AdminToken)
	return startCmd(t, cmd)
}

// The checkout the local environment starts wants the admin token it made,
// even from loopback: another user of the machine cannot reset its stock
// or read its orders through it; the token, which the runner passes, opens
// it.
func TestLocalCheckoutWantsItsAdminToken(t *testing.T) {
	l := startService(t)
	if l.AdminToken() == "" {
		t.Fatal("the local environment made no admin token")
	}
	testenv.CheckAdminToken(t, l.CheckoutURL()+"/admin/ledger", l.AdminToken())
	// The token is in the checkout's environment, not in any process's
	// arguments, which every user of the machine can read.
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	if len(cmdlines) == 0 {
		t.Fatal("no /proc/*/cmdline to read")
	}
	for _, f := range cmdlines {
		if b, err := os.ReadFile(f); err == nil && strings.Contains(string(b), l.AdminToken()) {
			t.Errorf("%s shows the admin token: %q", f, b)
		}
	}
}

// startCmd starts a runner that dies with the test, and gives its stderr
// to read progress lines from.
func startCmd(t *testing.T, cmd *exec.Cmd) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return cmd, bufio.NewScanner(pipe)
}

func waitFor(t *testing.T, sc *bufio.Scanner, want string, limit time.Duration) {
	t.Helper()
	found := make(chan bool, 1)
	var mu sync.Mutex
	var seen []string
	go func() {
		for sc.Scan() {
			mu.Lock()
			seen = append(seen, sc.Text())
			mu.Unlock()
			if strings.Contains(sc.Text(), want) {
				found <- true
				go func() {
					for sc.Scan() {
					}
				}()
				return
			}
		}
		found <- false
	}()
	select {
	case ok := <-found:
		if !ok {
			mu.Lock()
			defer mu.Unlock()
			t.Fatalf("the run ended without printing %q; it printed:\n%s", want, strings.Join(seen, "\n"))
		}
	case <-time.After(limit):
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("no %q within %s; it printed:\n%s", want, limit, strings.Join(seen, "\n"))
	}
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}

// The store's day: the steady store's browsing, carts and purchases with a
// flash sale's burst on top, against the reference checkout's product
// page, cart and checkout. It passes; every journey's visits reached the
// checkout and are judged, and the funnel's buyers are purchases like any.
// The same day with the product page's stock read slowed by 100 ms during
// the burst fails: the page's blast radius notices.
func TestStoreDay(t *testing.T) {
	sc := lookup(t, "store-day")
	o := options(t)
	rec, dir, err := gameday.Run(context.Background(), sc, o)
	if err != nil {
		t.Fatal(err)
	}
	testenv.KeepRun(t, dir)
	if rec.Verdict != gameday.VerdictPass {
		t.Fatalf("verdict %s: %s\nexpectations %+v\nload %+v", rec.Verdict, rec.Reason, rec.Expectations, rec.Load)
	}
	obs, err := judge.ReadObservations(filepath.Join(dir, judge.ObservationsFile))
	if err != nil {
		t.Fatal(err)
	}
	visits := map[string]int{}
	for _, v := range obs.Visits {
		if v.Outcome != judge.OK {
			t.Errorf("visit %s of %s: %s", v.ID, v.Journey, v.Outcome)
		}
		visits[v.Journey]++
	}
	if visits["browse"] < 5*visits["cart"]/2 || visits["cart"] < 50 || len(obs.Visits)+len(obs.Shoppers) != rec.Load.Scheduled {
		t.Errorf("visits %v and %d purchases of %d arrivals", visits, len(obs.Shoppers), rec.Load.Scheduled)
	}
	// run.json counts them by journey beside the purchases' outcomes.
	if rec.Visits["browse"]["ok"] != visits["browse"] || rec.Visits["cart"]["ok"] != visits["cart"] {
		t.Errorf("run.json's visits %v, observed %v", rec.Visits, visits)
	}
	if rec.Outcomes["confirmed"] == 0 || rec.Outcomes["ok"] != 0 {
		t.Errorf("the purchases' outcomes %v: visits among them, or nobody bought", rec.Outcomes)
	}
	sameOnRejudge(t, dir)

	slowed := sc.Clone()
	slowed.Name = "store-day-slow-page"
	slowed.Faults = []scenarios.Fault{{Name: "slow-stock", Target: "inventory", At: scenarios.Duration(12 * time.Second), For: scenarios.Duration(15 * time.Second),
		Toxic: &scenarios.Toxic{Type: "latency", Attributes: map[string]any{"latency": "100ms"}}}}
	slowed.Expect = slowed.Expect[:1] // the page's blast radius
	if err := slowed.Validate(); err != nil {
		t.Fatal(err)
	}
	bad := run(t, context.Background(), slowed, options(t))
	if bad.Verdict != gameday.VerdictFail || len(bad.Expectations) != 1 || bad.Expectations[0].Held {
		t.Fatalf("the product page slowed in the burst: verdict %s (%s), %+v", bad.Verdict, bad.Reason, bad.Expectations)
	}
}
