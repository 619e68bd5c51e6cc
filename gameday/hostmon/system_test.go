package hostmon

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/runrecord"
)

// The system's samples become its starved spans by one rule: a sample in
// which one of its threads waited for a CPU half of it or more is starved;
// starved samples in a row are joined, and kept when their waits add up
// to StarvedStall or more, with the time waited.
func TestSystemStarvedSpansRule(t *testing.T) {
	type sample struct{ at, waited time.Duration } // when it was taken, the most one thread waited since the one before
	for _, c := range []struct {
		name    string
		samples []sample
		want    []runrecord.StallSpan
	}{
		// A machine that keeps up: a few ms of waiting a tenth.
		{"no starvation", []sample{{100 * ms, 3 * ms}, {200 * ms, 8 * ms}, {300 * ms, 0}}, nil},
		// Starved, but 60 ms of waiting explains less than a stall.
		{"one short starved sample", []sample{{100 * ms, 60 * ms}, {200 * ms, 0}}, nil},
		// Two in a row: 130 ms of waiting over 200 ms.
		{"two starved samples", []sample{{100 * ms, 60 * ms}, {200 * ms, 70 * ms}, {300 * ms, 10 * ms}},
			[]runrecord.StallSpan{{FromMS: 0, ToMS: 200, WaitedMS: 130}}},
		// Just under half is contention, not starvation: it breaks a run.
		{"a sample under half breaks the run", []sample{{100 * ms, 60 * ms}, {200 * ms, 49 * ms}, {300 * ms, 60 * ms}, {400 * ms, 0}}, nil},
		// A sample the sampler took late (itself starved) is judged on
		// its own length: 600 ms of 1 s.
		{"a long sample", []sample{{100 * ms, 0}, {1100 * ms, 600 * ms}, {1200 * ms, 0}},
			[]runrecord.StallSpan{{FromMS: 100, ToMS: 1100, WaitedMS: 600}}},
		// More waited than the sample lasted (threads read at slightly
		// different instants) counts as the whole sample.
		{"waits beyond the sample", []sample{{100 * ms, 150 * ms}, {200 * ms, 100 * ms}},
			[]runrecord.StallSpan{{FromMS: 0, ToMS: 200, WaitedMS: 200}}},
		// A run still starved when the watch stops is kept.
		{"starved at the end", []sample{{100 * ms, 0}, {200 * ms, 90 * ms}, {300 * ms, 80 * ms}},
			[]runrecord.StallSpan{{FromMS: 100, ToMS: 300, WaitedMS: 170}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t0 := time.Unix(1000, 0)
			w := &systemWatch{start: t0, last: t0}
			for _, s := range c.samples {
				w.sample(t0.Add(s.at), s.waited)
			}
			w.flush()
			got := w.record()
			if !slices.Equal(got.StarvedSpans, c.want) {
				t.Errorf("spans %v, want %v", got.StarvedSpans, c.want)
			}
		})
	}
}

// Past maxSpans, the system's starved spans are counted, not kept.
func TestSystemBoundsItsSpans(t *testing.T) {
	t0 := time.Unix(1000, 0)
	w := &systemWatch{start: t0, last: t0}
	at := time.Duration(0)
	for range maxSpans + 2 {
		at += 200 * ms
		w.sample(t0.Add(at), 200*ms)
		at += 100 * ms
		w.sample(t0.Add(at), 0)
	}
	r := w.record()
	if len(r.StarvedSpans) != maxSpans || r.StarvedSpansCut != 2 {
		t.Errorf("%d kept, %d cut; want %d and 2", len(r.StarvedSpans), r.StarvedSpansCut, maxSpans)
	}
}

// schedstat's second field is the run-queue delay, in nanoseconds.
func TestParseSchedstat(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"3990295 7338885 2\n", 7338885, true},
		{"0 0 0\n", 0, true},
		{"3990295\n", 0, false},
		{"", 0, false},
		{"a b c\n", 0, false},
	} {
		got, ok := parseSchedstat([]byte(c.in))
		if got != c.want || ok != c.ok {
			t.Errorf("parseSchedstat(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// The watch reads the real schedstat of every thread of the system's
// processes and of their descendants, found through the kernel's lists of
// children; a process that is gone is found again through the finder.
func TestSystemWatchReadsRealProcesses(t *testing.T) {
	if _, err := os.Stat("/proc/self/schedstat"); err != nil {
		t.Skip("no /proc/PID/schedstat here")
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d/task/%d/children", os.Getpid(), os.Getpid())); err != nil {
		t.Skip("no /proc/PID/task/TID/children here")
	}
	kill := func(cmd *exec.Cmd) {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // the shell and its child
		_ = cmd.Wait()
	}
	start := func() *exec.Cmd {
		t.Helper()
		// A shell that keeps a child of its own: the child (sleep) is a
		// descendant the watch must find.
		cmd := exec.Command("sh", "-c", "sleep 60 & wait")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { kill(cmd) })
		return cmd
	}
	cmd := start()
	finds := 0
	find := func(context.Context) (map[string]int, error) {
		finds++
		return map[string]int{"checkout": cmd.Process.Pid}, nil
	}
	t0 := time.Now()
	w := &systemWatch{find: find, start: t0, last: t0, now: time.Now}
	ctx := context.Background()
	// The shell's child appears once it has forked it.
	var tids []int
	for deadline := time.Now().Add(10 * time.Second); ; {
		w.scan(ctx, time.Now())
		tids = w.tids()
		if len(tids) >= 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(tids) < 2 {
		t.Fatalf("watching %v: want the shell and its child", tids)
	}
	if !slices.Contains(tids, cmd.Process.Pid) {
		t.Errorf("watching %v: the shell (%d) is not among them", tids, cmd.Process.Pid)
	}
	if waited := w.read(); waited < 0 {
		t.Errorf("read %s of waiting", waited)
	}
	if r := w.record(); !slices.Equal(r.Watched, []string{fmt.Sprintf("checkout (pid %d)", cmd.Process.Pid)}) || r.Unwatched != "" {
		t.Errorf("record %+v", r)
	}

	// Killed and started again, as a process fault does: the old
	// threads are dropped and the new process is found.
	kill(cmd)
	cmd = start()
	w.scan(ctx, time.Now().Add(refindEvery))
	if finds != 2 || !slices.Contains(w.tids(), cmd.Process.Pid) {
		t.Errorf("after a restart: %d finds, watching %v, want the new shell %d", finds, w.tids(), cmd.Process.Pid)
	}
	w.close()
}

// Where the processes cannot be found, or there are none to watch, the
// record says why, and there is no evidence.
func TestSystemUnwatched(t *testing.T) {
	t0 := time.Unix(1000, 0)
	m := New(t0)
	if m.Record().System != nil {
		t.Error("a monitor told nothing of the system records it")
	}
	m.WatchSystem(nil, "the external environment runs the system under test elsewhere")
	if s := m.Record().System; s == nil || s.Unwatched != "the external environment runs the system under test elsewhere" {
		t.Errorf("record %+v", s)
	}
	w := &systemWatch{find: func(context.Context) (map[string]int, error) { return nil, errors.New("no such container") }, start: t0, last: t0, now: time.Now}
	w.scan(context.Background(), t0)
	if r := w.record(); !strings.Contains(r.Unwatched, "no such container") || len(r.Watched) != 0 {
		t.Errorf("record %+v", r)
	}
}

// The evidence in words names the system's waiting beside the runner's.
func TestEvidenceNamesTheSystem(t *testing.T) {
	h := &runrecord.Host{CPUs: 2, StallMaxMS: 17, StallP99MS: 9, System: &runrecord.SystemHost{Watched: []string{"checkout (pid 1)"}, WaitMaxMS: 160}}
	if e := Evidence(h); !strings.Contains(e, "the runner's 10 ms timer stalled up to 17 ms") || !strings.Contains(e, "a thread of the system under test waited up to 160 ms") {
		t.Errorf("evidence %q", e)
	}
	h.System = &runrecord.SystemHost{Unwatched: "elsewhere"}
	if e := Evidence(h); strings.Contains(e, "system under test") {
		t.Errorf("evidence %q names a system it did not watch", e)
	}
}

const ms = time.Millisecond

// tids are the threads watched, in order.
func (w *systemWatch) tids() []int { return slices.Sorted(maps.Keys(w.tasks)) }
