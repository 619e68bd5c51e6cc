package faults

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/env"
	"github.com/gameday-dev/gameday/gameday/system"
	"github.com/gameday-dev/gameday/gameday/toxi"
	"github.com/gameday-dev/gameday/internal/owner"
	"github.com/gameday-dev/gameday/internal/testenv"
)

// The environment variables that make this test binary a runner of its
// own (runAsRunner), for the tests that kill one outright.
const (
	runnerRoleVar    = "GAMEDAY_TEST_RUNNER"
	runnerSystemVar  = "GAMEDAY_TEST_SYSTEM"
	runnerJournalVar = "GAMEDAY_TEST_JOURNAL"
)

// runAsRunner is the child's side: it drills the system file's "cache"
// dependency as gameday's runner does (a described environment, the
// injector, the journal), applies one fault, says "ready" and waits to be
// killed (a minute at most).
func runAsRunner(role string) {
	fail := func(err error) {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	ctx := context.Background()
	sys, err := system.LoadFile(os.Getenv(runnerSystemVar), nil)
	if err != nil {
		fail(err)
	}
	d, err := env.StartDescribed(ctx, sys, nil, nil, nil)
	if err != nil {
		fail(err)
	}
	j := OpenJournal(os.Getenv(runnerJournalVar))
	var f Fault
	var in *Injector
	switch role {
	case "pause":
		// As the runner does for a system whose Toxiproxy dies with it:
		// the injector has no journal, the handles do.
		env.JournalPauses(d, PauseJournal(j, "pausedrun"))
		in = NewInjector(d, nil, "pausedrun")
		f = Fault{Name: "freeze", Target: "cache", Process: "pause"}
	case "toxic":
		renewEvery, leaseFor = 50*time.Millisecond, time.Second
		in = NewInjector(d, j, "podrun")
		f = Fault{Name: "slow", Target: "cache", Toxic: &toxi.Toxic{Type: "latency", Attributes: map[string]any{"latency": 1}}}
	default:
		fail(fmt.Errorf("no role %q", role))
	}
	if err := in.Apply(ctx, f); err != nil {
		fail(err)
	}
	fmt.Println("ready")
	time.Sleep(time.Minute)
	os.Exit(0)
}

// startRunner starts this test binary as a runner (runAsRunner) in the
// test named test, waits until it says ready (10 s at most), and returns
// it; it is killed when the test ends if it still runs.
func startRunner(t *testing.T, test, role, sysFile, journal string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), runnerRoleVar+"="+role, runnerSystemVar+"="+sysFile, runnerJournalVar+"="+journal)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := false
	t.Cleanup(func() {
		if !exited {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	said := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if l := sc.Text(); l == "ready" || strings.HasPrefix(l, "error:") {
				said <- l
				return
			}
		}
		said <- "exited without a word"
	}()
	select {
	case l := <-said:
		if l != "ready" {
			t.Fatalf("runner: %s", l)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("runner not ready within 10s")
	}
	return cmd
}

// killRunner kills the runner outright (SIGKILL, as the OOM killer or a
// pod's eviction does) and reaps it.
func killRunner(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
}

// writeSystem writes a system file whose dependency "cache" sits behind
// proxy "cache" of the Toxiproxy at api, with the given process handle.
func writeSystem(t *testing.T, dir, api, process string) string {
	t.Helper()
	path := filepath.Join(dir, "gameday.yaml")
	src := fmt.Sprintf(`name: shop
base_url: http://127.0.0.1:1
sku: s
purchase: {steps: [{url: /, answers: [{outcome: confirmed}]}]}
toxiproxy: %q
dependencies:
  cache:
    proxy: cache
%s`, api, process)
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// procState is pid's state letter from /proc/PID/stat ("T": stopped).
func procState(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	return strings.Fields(s[strings.LastIndexByte(s, ')')+1:])[0]
}

// waitState waits (5 s at most) until stopped(pid) is want: a signal
// takes effect a moment after kill returns.
func waitState(t *testing.T, pid int, stopped bool) bool {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); (procState(t, pid) == "T") != stopped; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}

// A runner that pauses a process through a system file's pid_file handle
// and is killed outright leaves a journal entry, written before the
// SIGSTOP; while the runner lives cleanup leaves it alone, and once it is
// gone the next cleanup resumes the process (it is still the process that
// was paused) and forgets the entry. The process is a real one, and so
// are the runner, the kill and the journal.
func TestKilledRunnersPauseIsResumed(t *testing.T) {
	if role := os.Getenv(runnerRoleVar); role != "" {
		runAsRunner(role)
		return
	}
	dir := t.TempDir()
	c := testenv.Toxiproxy(t)
	testenv.Proxy(t, c, "cache", testenv.FreeAddr(t))
	target := exec.Command("sleep", "120")
	if err := target.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = target.Process.Kill(); _ = target.Wait() })
	pid := target.Process.Pid
	if err := os.WriteFile(filepath.Join(dir, "cache.pid"), []byte(strconv.Itoa(pid)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sysFile := writeSystem(t, dir, c.Addr(), "    process: {pid_file: cache.pid, start: [sleep, \"120\"]}\n")
	jpath := filepath.Join(dir, "state", "journal.json")

	runner := startRunner(t, "TestKilledRunnersPauseIsResumed", "pause", sysFile, jpath)
	if !waitState(t, pid, true) {
		t.Fatal("the runner paused the process, but it is not stopped")
	}
	j := OpenJournal(jpath)
	ctx := context.Background()
	if removed, aside, err := j.Cleanup(ctx); err != nil || len(removed)+len(aside) != 0 {
		t.Fatalf("cleanup while the runner lives: removed %v, aside %v, %v; want nothing touched", removed, aside, err)
	}
	killRunner(t, runner)
	es, err := j.Entries()
	if err != nil || len(es) != 1 || es[0].Paused == nil || es[0].Dependency != "cache" || es[0].RunID != "pausedrun" {
		t.Fatalf("the killed runner's journal holds %+v, %v; want its pause of cache", es, err)
	}
	if procState(t, pid) != "T" {
		t.Fatal("the process is not stopped after the runner was killed: nothing to clean up, the test proves nothing")
	}
	removed, aside, err := j.Cleanup(ctx)
	if err != nil || len(removed) != 1 || len(aside) != 0 {
		t.Fatalf("cleanup after the runner was killed: removed %v, aside %v, %v; want the pause undone", removed, aside, err)
	}
	if !waitState(t, pid, false) {
		t.Error("cleanup forgot the pause, but the process is still stopped")
	}
	if es, _ := j.Entries(); len(es) != 0 {
		t.Errorf("after cleanup the journal holds %+v", es)
	}
}

// A runner in a pod (another host name, another pid namespace) renews a
// lease on its entries while it lives; killed outright, it renews no
// more, and once the lease and the margin for clock skew have run out a
// cleanup anywhere judges it gone and removes its toxic from the real
// Toxiproxy. Before that the entry is left alone. The child cannot be
// given another host name without privileges, so its entry is rewritten
// with the pod's name, as the pod would have written it.
func TestKilledRunnerElsewhereIsCleanedUpAfterItsLease(t *testing.T) {
	if role := os.Getenv(runnerRoleVar); role != "" {
		runAsRunner(role)
		return
	}
	dir := t.TempDir()
	c := testenv.Toxiproxy(t)
	testenv.Proxy(t, c, "cache", testenv.FreeAddr(t))
	sysFile := writeSystem(t, dir, c.Addr(), "")
	jpath := filepath.Join(dir, "journal.json")
	ctx := context.Background()

	runner := startRunner(t, "TestKilledRunnerElsewhereIsCleanedUpAfterItsLease", "toxic", sysFile, jpath)
	j := OpenJournal(jpath)
	es, err := j.Entries()
	if err != nil || len(es) != 1 || es[0].Toxic != "gameday-podrun-slow" || es[0].Lease == "" {
		t.Fatalf("the runner's journal holds %+v, %v; want its toxic with a lease", es, err)
	}
	first := es[0].Lease
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if es, _ := j.Entries(); len(es) == 1 && es[0].Lease != first {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a live runner did not renew its lease within 3s (it renews every 50ms here)")
		}
	}
	killRunner(t, runner)
	elsewhere := "gameday-coordinator-x7k2q@pid:[4026532501]"
	if err := j.update(false, func(es []Entry) []Entry {
		for i := range es {
			es[i].Where = elsewhere
		}
		return es
	}); err != nil {
		t.Fatal(err)
	}
	es, _ = j.Entries()
	until, err := time.Parse(time.RFC3339Nano, es[0].Lease)
	if err != nil {
		t.Fatal(err)
	}
	if removed, aside, err := j.Cleanup(ctx); err != nil || len(removed)+len(aside) != 0 {
		t.Fatalf("cleanup before the lease ran out: removed %v, aside %v, %v; want the entry left alone", removed, aside, err)
	}
	if ts, _ := c.Toxics(ctx, "cache"); len(ts) != 1 {
		t.Fatalf("toxics %+v: the live-looking runner's toxic was touched", ts)
	}
	// Past the lease and the margin (30 s in gameday; the child's lease
	// ran for 1 s, and this test allows half a second for skew).
	defer func(m time.Duration) { leaseMargin = m }(leaseMargin)
	leaseMargin = 500 * time.Millisecond
	time.Sleep(time.Until(until.Add(leaseMargin)) + 50*time.Millisecond)
	removed, aside, err := j.Cleanup(ctx)
	if err != nil || len(removed) != 1 || len(aside) != 0 {
		t.Fatalf("cleanup after the lease ran out: removed %v, aside %v, %v; want the pod's toxic removed", removed, aside, err)
	}
	if ts, _ := c.Toxics(ctx, "cache"); len(ts) != 0 {
		t.Errorf("toxics after cleanup: %+v", ts)
	}
	if es, _ := j.Entries(); len(es) != 0 {
		t.Errorf("after cleanup the journal holds %+v", es)
	}
}

// A live runner renews its own entries' leases and no one else's, and
// stops renewing once none of its entries is left (or when told to).
func TestLeaseIsRenewedWhileFaultsAreIn(t *testing.T) {
	defer func(d time.Duration) { renewEvery = d }(renewEvery)
	renewEvery = 20 * time.Millisecond
	j := OpenJournal(filepath.Join(t.TempDir(), "journal.json"))
	t.Cleanup(j.StopRenewing)
	other := Entry{RunID: "other", Pid: 1, Started: "12345", Boot: owner.Self().Boot, Where: "elsewhere@pid:[1]", Lease: "2001-01-01T00:00:00Z", Toxiproxy: "127.0.0.1:1", Proxy: "p", Toxic: "t2"}
	if err := j.update(true, func(es []Entry) []Entry { return append(es, other) }); err != nil {
		t.Fatal(err)
	}
	mine := Entry{RunID: "mine", Toxiproxy: "127.0.0.1:1", Proxy: "p", Toxic: "t1"}
	if err := j.Add(mine); err != nil {
		t.Fatal(err)
	}
	lease := func(run string) string {
		es, err := j.Entries()
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			if e.RunID == run {
				return e.Lease
			}
		}
		return ""
	}
	first := lease("mine")
	until, err := time.Parse(time.RFC3339Nano, first)
	if err != nil || until.Sub(time.Now()) < leaseFor-time.Second || until.Sub(time.Now()) > leaseFor {
		t.Fatalf("a new entry's lease %q (%v); want about %s from now", first, err, leaseFor)
	}
	for deadline := time.Now().Add(3 * time.Second); lease("mine") == first; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the lease was not renewed within 3s (every 20ms here)")
		}
	}
	if l := lease("other"); l != other.Lease {
		t.Errorf("another runner's lease was renewed: %q", l)
	}
	if err := j.Remove(mine); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		j.mu.Lock()
		beating := j.beating
		j.mu.Unlock()
		if !beating {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("still renewing 3s after the last entry of this process went")
		}
	}
	if err := j.Add(mine); err != nil {
		t.Fatal(err)
	}
	j.StopRenewing()
	last := lease("mine")
	time.Sleep(100 * time.Millisecond)
	if l := lease("mine"); l != last {
		t.Errorf("renewed after StopRenewing: %q, then %q", last, l)
	}
}

// A journal written before leases and pauses (no lease, no paused, no
// dependency) still loads, and its entries keep their meaning: judged by
// pid on the same host, left alone when written elsewhere.
func TestOldJournalStillLoads(t *testing.T) {
	c := testenv.Toxiproxy(t)
	testenv.Proxy(t, c, "inventory", testenv.FreeAddr(t))
	testenv.AddToxic(t, c, "inventory", toxiFor("gameday-old-slow"))
	testenv.AddToxic(t, c, "inventory", toxiFor("gameday-far-slow"))
	self := owner.Self()
	old := fmt.Sprintf(`[
  {"run_id": "old", "pid": 1, "started": "12345", "boot": %q, "where": %q, "toxiproxy": %q, "proxy": "inventory", "toxic": "gameday-old-slow"},
  {"run_id": "far", "pid": 1, "started": "12345", "boot": %q, "where": "another-host@pid:[4026531836]", "toxiproxy": %q, "proxy": "inventory", "toxic": "gameday-far-slow"},
  {"run_id": "box", "pid": 1, "started": "12345", "boot": %q, "container": "0123456789ab", "action": "kill", "set_aside": "no container engine (since 2026-01-01T00:00:00Z)"}
]
`, self.Boot, self.Where, c.Addr(), self.Boot, c.Addr(), self.Boot)
	path := filepath.Join(t.TempDir(), "journal.json")
	if err := os.WriteFile(path, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	j := OpenJournal(path)
	es, err := j.Entries()
	if err != nil || len(es) != 3 {
		t.Fatalf("an old journal: %+v, %v", es, err)
	}
	removed, aside, err := j.Cleanup(context.Background())
	if err != nil || len(removed) != 1 || removed[0].RunID != "old" || len(aside) != 1 || aside[0].RunID != "box" {
		t.Fatalf("cleanup of an old journal: removed %v, aside %v, %v", removed, aside, err)
	}
	data, _ := os.ReadFile(path)
	var left []map[string]any
	if err := json.Unmarshal(data, &left); err != nil || len(left) != 2 {
		t.Fatalf("journal after cleanup: %s (%v)", data, err)
	}
	for _, e := range left {
		if _, ok := e["lease"]; ok {
			t.Errorf("cleanup gave an old entry a lease: %v", e)
		}
	}
	if ts, _ := c.Toxics(context.Background(), "inventory"); len(ts) != 1 || ts[0].Name != "gameday-far-slow" {
		t.Errorf("toxics %+v, want the other host's alone", ts)
	}
}
