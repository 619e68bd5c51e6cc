// Package hostmon watches whether the machine that measures a drill keeps
// up with it: the runner's, and each load worker's; and, where the system
// under test runs on the runner's host, whether its processes get a CPU
// when they are ready (WatchSystem). Its stalls are the evidence on which
// package judge excuses a timing promise that a starved machine, not the
// system under test, broke.
package hostmon

import (
	"bytes"
	"context"
	"fmt"
	"github.com/gameday-dev/gameday/internal/stats"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/gameday-dev/gameday/gameday/runrecord"
)

// Monitor watches whether the machine keeps up with the drill. A
// goroutine sleeps hostTick at a time and records how late it woke: a
// runner that was ready and could not get a CPU. Where Linux reports it, it
// also reads the CPU pressure (/proc/pressure/cpu, "some": time in which a
// runnable task of the machine waited for a CPU) once a hostBucket, with
// one positioned read of a file it keeps open. The stalls of StarvedStall
// or more are kept as spans (the judge asks a promise's window whether the
// machine was starved during it); the pressure is kept for the whole run.
type Monitor struct {
	start time.Time
	now   func() time.Time

	mu     sync.Mutex
	stalls []time.Duration   // lateness of every tick
	worst  []runrecord.Stall // the worst stalls, with when
	// spans are the stalls of StarvedStall or more, in order, from the
	// start; at most maxSpans (spansCut counts those left out).
	spans    []runrecord.StallSpan
	spansCut int
	psi      bool     // /proc/pressure/cpu was readable at start
	psiF     *os.File // it, open while run runs
	psiFD    int      // psiF's descriptor
	psi0     int64    // its "some total" (µs) at start
	psiLast  int64
	psiAt    time.Time
	psiB     int   // the bucket of psiAt
	io       bool  // /proc/pressure/io was readable at start
	io0      int64 // its "some total" (µs) at start
	// sys watches the system under test's own processes (WatchSystem);
	// nil when the monitor was told nothing of them.
	sys *systemWatch
}

const (
	hostTick   = 10 * time.Millisecond
	hostBucket = 100 * time.Millisecond
	// StarvedStall is the stall of the runner's timer at which the machine
	// counts as starved: for a tenth of a second nothing that was ready
	// could run, which is as long as the tighter latency promises (50-300
	// ms) allow for a whole answer, and far beyond what a machine that
	// keeps up shows (well under 10 ms).
	StarvedStall = 100 * time.Millisecond
	// maxSpans bounds the stalls kept as evidence: 4,096 of them are at
	// least 410 s in which the machine could not run the drill.
	maxSpans = 4096
)

// New returns a monitor whose times count from start (the start of the
// load); Run samples.
func New(start time.Time) *Monitor {
	m := &Monitor{start: start, now: time.Now}
	if v, ok := readPressure("/proc/pressure/io"); ok {
		m.io, m.io0 = true, v
	}
	if f, err := os.Open("/proc/pressure/cpu"); err == nil {
		if v, ok := readPressureAt(int(f.Fd())); ok {
			m.psi, m.psiF, m.psiFD, m.psi0, m.psiLast, m.psiAt = true, f, int(f.Fd()), v, v, start
		} else {
			f.Close()
		}
	}
	return m
}

// Run samples until ctx ends.
func (m *Monitor) Run(ctx context.Context) {
	// A ticker, not a timer reset after each tick: a reset from a
	// goroutine wakes the runtime's network poller every time (a system
	// call a tick). A tick carries the instant it was due, so its
	// lateness is measured against the schedule, not the tick before;
	// ticks the runner could not take in time are dropped.
	t := time.NewTicker(hostTick)
	defer t.Stop()
	if m.psiF != nil {
		defer m.psiF.Close()
	}
	if m.sys != nil && m.sys.find != nil {
		// Apart from the timer, so that reading the system's threads
		// does not make the runner's own ticks late.
		var done sync.WaitGroup
		done.Add(1)
		go func() { defer done.Done(); m.sys.runWatch(ctx) }()
		defer done.Wait()
	}
	for {
		var due time.Time
		select {
		case <-ctx.Done():
			return
		case due = <-t.C:
		}
		now := m.now()
		m.tick(now, now.Sub(due))
	}
}

func (m *Monitor) tick(now time.Time, late time.Duration) {
	late = max(late, 0)
	var psi int64
	var psiOK bool
	cur := int(now.Sub(m.start) / hostBucket)
	if m.psiF != nil && cur != m.psiB {
		psi, psiOK = readPressureAt(m.psiFD)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if i := now.Sub(m.start) / hostBucket; i < 0 || i > 1<<20 { // before the start, or a run of more than a day
		return
	}
	m.stalls = append(m.stalls, late)
	if late >= StarvedStall {
		m.addSpan(now.Add(-late), now)
	}
	if late >= 5*time.Millisecond {
		m.worst = append(m.worst, runrecord.Stall{AtMS: now.Sub(m.start).Milliseconds(), MS: stats.MS(late)})
		if len(m.worst) > 64 { // keep the worst few, bounded
			m.trimWorst(10)
		}
	}
	if psiOK {
		m.psiLast, m.psiAt, m.psiB = psi, now, cur
	}
}

// addSpan keeps the stall [from, to), joined to the last one where they
// meet (a tick is late again before the runner caught up).
func (m *Monitor) addSpan(from, to time.Time) {
	sp := runrecord.StallSpan{FromMS: from.Sub(m.start).Milliseconds(), ToMS: to.Sub(m.start).Milliseconds()}
	if n := len(m.spans); n > 0 && sp.FromMS <= m.spans[n-1].ToMS {
		m.spans[n-1].ToMS = max(m.spans[n-1].ToMS, sp.ToMS)
		return
	}
	if len(m.spans) >= maxSpans {
		m.spansCut++
		return
	}
	m.spans = append(m.spans, sp)
}

// Spans are the stalls of StarvedStall or more so far, from the start, in
// order, and how many more there were than were kept: evidence left out
// excuses nothing.
func (m *Monitor) Spans() ([]runrecord.StallSpan, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.spans), m.spansCut
}

func (m *Monitor) trimWorst(n int) {
	slices.SortFunc(m.worst, func(a, b runrecord.Stall) int {
		if a.MS != b.MS {
			return int(math.Copysign(1, b.MS-a.MS))
		}
		return int(a.AtMS - b.AtMS)
	})
	m.worst = m.worst[:min(n, len(m.worst))]
}

// Record summarises the run for run.json.
func (m *Monitor) Record() *runrecord.Host {
	m.mu.Lock()
	h := &runrecord.Host{CPUs: runtime.NumCPU(), Load1: load1()}
	s := slices.Clone(m.stalls)
	m.trimWorst(10)
	h.Stalls = slices.Clone(m.worst)
	h.StarvedSpans, h.StarvedSpansCut = slices.Clone(m.spans), m.spansCut
	psi, stallUS, at := m.psi, m.psiLast-m.psi0, m.psiAt
	io, io0 := m.io, m.io0
	m.mu.Unlock()
	if io1, ok := readPressure("/proc/pressure/io"); ok && io {
		if wall := m.now().Sub(m.start); wall > 0 {
			pct := math.Round(float64(io1-io0)/float64(wall/time.Microsecond)*1000) / 10
			h.IOPressurePct = &pct
		}
	}
	slices.Sort(s)
	if len(s) > 0 {
		h.StallP99MS = stats.MS(stats.Percentile(s, 99))
		h.StallMaxMS = stats.MS(s[len(s)-1])
	}
	if psi && at.After(m.start) {
		pct := math.Round(float64(stallUS)/float64(at.Sub(m.start)/time.Microsecond)*1000) / 10
		h.CPUPressurePct = &pct
	}
	if m.sys != nil {
		h.System = m.sys.record()
	}
	return h
}

// readPressure reads the "some total" of a pressure file (µs).
func readPressure(file string) (int64, bool) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, false
	}
	return parsePressure(b)
}

// readPressureAt reads the "some total" of an open pressure file (µs)
// afresh, with one system call: the kernel writes the text anew for a
// read from its start (os.File.ReadAt would read again to find the end).
func readPressureAt(fd int) (int64, bool) {
	var buf [256]byte
	n, err := syscall.Pread(fd, buf[:], 0)
	if n <= 0 || err != nil {
		return 0, false
	}
	return parsePressure(buf[:n])
}

// parsePressure is the "some total" (µs) of a pressure file's text: the
// microseconds in which at least one task waited (for a CPU, for I/O).
func parsePressure(b []byte) (int64, bool) {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	if !bytes.HasPrefix(line, []byte("some ")) {
		return 0, false
	}
	_, total, ok := bytes.Cut(line, []byte("total="))
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseInt(string(bytes.TrimSpace(total)), 10, 64)
	return v, err == nil
}

// load1 is the one-minute load average; 0 where it is not reported.
func load1() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := bytes.Fields(b)
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(string(f[0]), 64)
	return v
}

// Evidence says how the machine kept up, in one line.
func Evidence(h *runrecord.Host) string {
	s := fmt.Sprintf("the runner's 10 ms timer stalled up to %.0f ms, p99 %.0f ms", h.StallMaxMS, h.StallP99MS)
	if h.CPUPressurePct != nil {
		s += fmt.Sprintf("; CPU pressure %.0f%% of the run", *h.CPUPressurePct)
	}
	if h.IOPressurePct != nil {
		s += fmt.Sprintf(", I/O pressure %.0f%%", *h.IOPressurePct)
	}
	s += fmt.Sprintf("; load average %.2f on %d CPUs", h.Load1, h.CPUs)
	if sys := h.System; sys != nil && len(sys.Watched) > 0 {
		s += fmt.Sprintf("; a thread of the system under test waited up to %.0f ms for a CPU in one sample", sys.WaitMaxMS)
	}
	return s
}
