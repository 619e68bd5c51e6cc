package hostmon

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/gameday-dev/gameday/gameday/runrecord"
)

// Finder lists the system under test's processes on this host, afresh:
// each one's name and pid. Their descendants are watched with them.
type Finder func(ctx context.Context) (map[string]int, error)

const (
	// systemTick is how often the system's threads are read.
	systemTick = 100 * time.Millisecond
	// refindEvery is how often the threads are listed again (threads and
	// children come and go), and the processes found again when one is
	// gone (a process fault restarted it).
	refindEvery = time.Second
	// findWithin bounds one call of the Finder (an engine's API).
	findWithin = 2 * time.Second
	// maxTasks bounds the threads watched.
	maxTasks = 4096
)

// systemWatch measures how long the system under test's threads, ready to
// run, waited for a CPU: the run-queue delay the kernel keeps for each
// thread (the second field of /proc/PID/task/TID/schedstat, in
// nanoseconds), read every systemTick from files kept open. Of each
// sample it keeps the most any one thread waited: a thread that waited
// half the sample or more could run at most half the time it wanted, more
// than the few per cent of a machine that keeps up. Such samples in a
// row are a starved run, kept as a span when their waits add up to
// StarvedStall or more: the system's starvation, judged as the runner's
// own stalls are.
type systemWatch struct {
	find  Finder
	none  string // why there is nothing to watch (find nil)
	start time.Time
	now   func() time.Time

	// The sampler's own, one goroutine's.
	roots   map[string]int
	tasks   map[int]*task // by thread id
	scanned time.Time
	last    time.Time  // the sample before
	run     starvedRun // the starved samples in a row so far

	mu       sync.Mutex
	spans    []runrecord.StallSpan
	spansCut int
	waitMax  time.Duration
	watched  []string
	findErr  string // the Finder's last error
}

// task is one watched thread: its schedstat, open, and its run-queue
// delay at the last reading (ns).
type task struct {
	f     *os.File
	delay int64
}

type starvedRun struct {
	from, to time.Time
	waited   time.Duration
}

// runWatch samples until ctx ends.
func (w *systemWatch) runWatch(ctx context.Context) {
	defer w.close()
	w.last = w.now()
	w.scan(ctx, w.last)
	t := time.NewTicker(systemTick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			w.flush()
			return
		case <-t.C:
		}
		now := w.now()
		w.sample(now, w.read())
		if now.Sub(w.scanned) >= refindEvery {
			w.scan(ctx, now)
		}
	}
}

// sample takes in the sample that ends at now: the most one thread waited
// since the one before.
func (w *systemWatch) sample(now time.Time, waited time.Duration) {
	from, length := w.last, now.Sub(w.last)
	w.last = now
	if length <= 0 {
		return
	}
	waited = min(max(waited, 0), length)
	w.mu.Lock()
	w.waitMax = max(w.waitMax, waited)
	w.mu.Unlock()
	if waited > 0 && 2*waited >= length {
		if w.run.waited == 0 {
			w.run.from = from
		}
		w.run.to, w.run.waited = now, w.run.waited+waited
		return
	}
	w.flush()
}

// flush ends the starved run so far, keeping it when it waited
// StarvedStall or more.
func (w *systemWatch) flush() {
	r := w.run
	w.run = starvedRun{}
	if r.waited < StarvedStall {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.spans) >= maxSpans {
		w.spansCut++
		return
	}
	w.spans = append(w.spans, runrecord.StallSpan{FromMS: r.from.Sub(w.start).Milliseconds(), ToMS: r.to.Sub(w.start).Milliseconds(), WaitedMS: r.waited.Milliseconds()})
}

// read reads every watched thread's run-queue delay and returns the most
// one waited since its last reading; a thread that is gone is dropped.
func (w *systemWatch) read() time.Duration {
	var worst int64
	for tid, t := range w.tasks {
		v, ok := readSchedstat(t.f)
		if !ok {
			t.f.Close()
			delete(w.tasks, tid)
			continue
		}
		worst = max(worst, v-t.delay)
		t.delay = v
	}
	return time.Duration(worst)
}

// scan finds the processes again when one is gone (or none was found
// yet), and lists the threads of each and of its descendants: new ones
// are opened, read once to start from, and those gone closed.
func (w *systemWatch) scan(ctx context.Context, now time.Time) {
	w.scanned = now
	if w.find == nil {
		return
	}
	if len(w.roots) == 0 || slices.ContainsFunc(slices.Collect(maps.Values(w.roots)), gone) {
		fctx, cancel := context.WithTimeout(ctx, findWithin)
		roots, err := w.find(fctx)
		cancel()
		w.mu.Lock()
		if err != nil {
			w.findErr = err.Error()
		} else {
			w.roots, w.findErr = roots, ""
		}
		// None found (all stopped by a fault, say) keeps the names of
		// those watched before.
		if err == nil && len(roots) > 0 {
			w.watched = w.watched[:0]
			for _, name := range slices.Sorted(maps.Keys(roots)) {
				w.watched = append(w.watched, fmt.Sprintf("%s (pid %d)", name, roots[name]))
			}
		}
		w.mu.Unlock()
	}
	if w.tasks == nil {
		w.tasks = map[int]*task{}
	}
	seen := map[int]bool{}
	visited := map[int]bool{}
	var walk func(pid int)
	walk = func(pid int) {
		if visited[pid] || len(seen) >= maxTasks {
			return
		}
		visited[pid] = true
		dir := "/proc/" + strconv.Itoa(pid) + "/task/"
		ents, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range ents {
			tid, err := strconv.Atoi(e.Name())
			if err != nil || len(seen) >= maxTasks {
				continue
			}
			seen[tid] = true
			if w.tasks[tid] == nil {
				if f, err := os.Open(dir + e.Name() + "/schedstat"); err == nil {
					if v, ok := readSchedstat(f); ok {
						w.tasks[tid] = &task{f: f, delay: v}
					} else {
						f.Close()
					}
				}
			}
			if b, err := os.ReadFile(dir + e.Name() + "/children"); err == nil {
				for _, c := range bytes.Fields(b) {
					if child, err := strconv.Atoi(string(c)); err == nil {
						walk(child)
					}
				}
			}
		}
	}
	for _, pid := range w.roots {
		walk(pid)
	}
	for tid, t := range w.tasks {
		if !seen[tid] {
			t.f.Close()
			delete(w.tasks, tid)
		}
	}
}

func (w *systemWatch) close() {
	for tid, t := range w.tasks {
		t.f.Close()
		delete(w.tasks, tid)
	}
}

// record is the evidence for run.json.
func (w *systemWatch) record() *runrecord.SystemHost {
	w.mu.Lock()
	defer w.mu.Unlock()
	r := &runrecord.SystemHost{Watched: slices.Clone(w.watched), WaitMaxMS: float64(w.waitMax.Milliseconds()),
		StarvedSpans: slices.Clone(w.spans), StarvedSpansCut: w.spansCut}
	switch {
	case w.find == nil:
		r.Unwatched = w.none
	case len(w.watched) == 0 && w.findErr != "":
		r.Unwatched = "the system under test's processes could not be found: " + w.findErr
	case len(w.watched) == 0:
		r.Unwatched = "the system under test's processes could not be found"
	}
	return r
}

// gone reports whether process pid is no longer there.
func gone(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return err != nil
}

// readSchedstat reads a thread's run-queue delay (ns) from its open
// schedstat afresh, with one system call.
func readSchedstat(f *os.File) (int64, bool) {
	var buf [128]byte
	n, err := syscall.Pread(int(f.Fd()), buf[:], 0)
	if n <= 0 || err != nil {
		return 0, false
	}
	return parseSchedstat(buf[:n])
}

// parseSchedstat is the second field of a schedstat's text: the time the
// thread waited on a run queue, ready to run, in nanoseconds.
func parseSchedstat(b []byte) (int64, bool) {
	f := bytes.Fields(b)
	if len(f) < 2 {
		return 0, false
	}
	v, err := strconv.ParseInt(string(f[1]), 10, 64)
	return v, err == nil
}

// WatchSystem has the monitor watch the system under test's processes on
// this host too, as find lists them (an environment's, env.SystemProcesses);
// where there are none to watch (find nil), none says why, for the record.
// Call it before Run.
func (m *Monitor) WatchSystem(find Finder, none string) {
	now := m.now
	if now == nil {
		now = time.Now
	}
	m.sys = &systemWatch{find: find, none: none, start: m.start, now: now}
}
