package gameday_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday"
	"github.com/gameday-dev/gameday/gameday/env"
	"github.com/gameday-dev/gameday/scenarios"
)

// failingToxiproxy stands in front of a real Toxiproxy's API and, while
// armed, answers 500 to every removal of a toxic, as a Toxiproxy under
// heavy traffic has been seen to: everything else goes through. It counts
// the removals it refused.
type failingToxiproxy struct {
	armed   atomic.Bool
	refused atomic.Int64
	addr    string
}

func newFailingToxiproxy(t *testing.T, upstream string) *failingToxiproxy {
	t.Helper()
	if !strings.Contains(upstream, "://") {
		upstream = "http://" + upstream
	}
	u, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	f := &failingToxiproxy{}
	f.armed.Store(true)
	rp := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.armed.Load() && r.Method == http.MethodDelete && strings.Contains(r.URL.Path, "/toxics/") {
			f.refused.Add(1)
			http.Error(w, `{"error":"internal error","status":500}`, http.StatusInternalServerError)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	f.addr = srv.URL
	return f
}

// removeLeftToxics removes what the refused removals left on the real
// Toxiproxy, for the next test.
func removeLeftToxics(t *testing.T, l *env.Local) {
	t.Helper()
	ps, err := l.Toxiproxy().Proxies(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for name, p := range ps {
		for _, tx := range p.Toxics {
			if err := l.Toxiproxy().RemoveToxic(context.Background(), name, tx.Name); err != nil {
				t.Error(err)
			}
		}
	}
}

// startNaiveService is a user's service with a money bug: naive
// inventory (read stock, pay, then decrement) before a provider slow
// enough for a crowd to oversell it.
func startNaiveService(t *testing.T) *env.Local {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	l, err := env.StartLocal(ctx, env.LocalOptions{Binary: binary, Dir: t.TempDir(),
		PaymentArgs:  []string{"-min-latency", "100ms", "-max-latency", "300ms", "-decline-rate", "0"},
		CheckoutArgs: []string{"-mode", "naive"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// A fault that cannot be lifted at its time stops the load at once: the
// run is an error, the fault's record says it stayed in place (its window
// is the rest of the load, not "never started"), the removal is tried
// again when the load ends, and the journal keeps the fault for the next
// run's cleanup while it is still there.
func TestFaultThatCannotBeLiftedStopsTheDrill(t *testing.T) {
	l := startService(t)
	t.Cleanup(func() { removeLeftToxics(t, l) })
	proxy := newFailingToxiproxy(t, l.Toxiproxy().Addr())
	o := options(t)
	ext := external(l)
	ext.Toxiproxy = proxy.addr
	o.Environment = ext
	sc := lookup(t, "payment-latency")
	rec := run(t, context.Background(), sc, o)
	if rec.Verdict != gameday.VerdictError || !strings.Contains(rec.Reason, "slow-provider") || !strings.Contains(rec.Reason, "the drill was stopped") {
		t.Fatalf("verdict %s (%s), want an error naming the fault", rec.Verdict, rec.Reason)
	}
	if len(rec.Faults) != 1 || rec.Faults[0].Error != "" || rec.Faults[0].LiftError == "" || rec.Faults[0].LiftedMS == nil {
		t.Fatalf("faults %+v: want one, in place, that could not be lifted", rec.Faults)
	}
	f := rec.Faults[0]
	if f.EndMS < *f.LiftedMS {
		t.Errorf("fault recorded as ending at %d ms, before it was lifted (%d ms)", f.EndMS, *f.LiftedMS)
	}
	// The load stopped when the fault could not be lifted, not at its end.
	if rec.Load.Started >= rec.Load.Scheduled || rec.Load.DurationMS > f.EndMS+2000 {
		t.Errorf("load %+v: want it stopped near %d ms", rec.Load, f.EndMS)
	}
	for _, e := range rec.Expectations {
		if strings.Contains(e.Observed, "never started") {
			t.Errorf("%s: observed %q: the fault was in place", e.Promise, e.Observed)
		}
	}
	// Once at its time, then three rounds when the load ended and three
	// more on the way out.
	if n := proxy.refused.Load(); n < 4 {
		t.Errorf("%d removals tried, want the one at its time and more when the load ended", n)
	}
	if got := faultsOn(t, l); len(got) != 1 {
		t.Errorf("on the Toxiproxy: %v, want the fault still there", got)
	}
	if es, err := o.Journal.Entries(); err != nil || len(es) != 1 || es[0].Toxic == "" {
		t.Errorf("journal %+v (%v): want the fault kept for cleanup", es, err)
	}
	if !strings.Contains(strings.Join(rec.Notes, "\n"), "still in place") {
		t.Errorf("notes %q do not say the fault is still in place", rec.Notes)
	}
}

// Money and stock proven wrong fail a drill even when its faults could not
// be removed when the load ended: the oversell is real, and the reason
// says what else went wrong. Through the command: exit 1, FAIL.
func TestMoneyBugFailsEvenWhenAFaultCannotBeRemoved(t *testing.T) {
	l := startNaiveService(t)
	t.Cleanup(func() { removeLeftToxics(t, l) })
	proxy := newFailingToxiproxy(t, l.Toxiproxy().Addr())
	sc := lookup(t, "baseline")
	sc.File = filepath.Join(t.TempDir(), "naive-with-fault.yaml")
	sc.Stock = 20
	// A fault in place until the load ends, whose removal then fails.
	sc.Faults = []scenarios.Fault{{Name: "sessions-slow", Target: "sessions", At: 0, Toxic: &scenarios.Toxic{Type: "latency", Attributes: map[string]any{"latency": "1ms"}}}}
	sc.Expect = nil
	o := options(t)
	ext := external(l)
	ext.Toxiproxy = proxy.addr
	o.Environment = ext
	rec := run(t, context.Background(), sc, o)
	if rec.Verdict != gameday.VerdictFail || rec.Invariants.Oversold == 0 {
		t.Fatalf("verdict %s (%s), invariants %+v: want a FAIL on the oversell", rec.Verdict, rec.Reason, rec.Invariants)
	}
	if !strings.Contains(rec.Reason, "oversold") || !strings.Contains(rec.Reason, "could not remove every fault") && !strings.Contains(rec.Reason, "sessions-slow") {
		t.Errorf("reason %q: want the oversell and the fault that stayed", rec.Reason)
	}

	// The same through the command, against the same service.
	removeLeftToxics(t, l)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "run", "-quiet", "-env", "external", "-journal", filepath.Join(t.TempDir(), "j.json"), "-runs-dir", t.TempDir(), "-time-scale", "0.4",
		"-toxiproxy", proxy.addr, "-checkout-url", ext.CheckoutURL, "-payment-url", ext.PaymentURL,
		"-proxy", "payment=payment", "-proxy", "inventory=inventory", "-proxy", "sessions=sessions", "testdata/naive-oversell-stuck-fault.yaml")
	cmd.Env = append(cmd.Environ(), env.AdminTokenVar+"="+ext.AdminToken)
	out, err := cmd.Output()
	if code := exitCode(err); code != 1 || !strings.Contains(string(out), "FAIL") || !strings.Contains(string(out), "oversold") {
		t.Fatalf("exit %d, want 1 with FAIL and the oversell:\n%s", code, out)
	}
}
