package testenv

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ProcCPU is the CPU time of one process, user and system apart.
type ProcCPU struct {
	PID       int
	Name      string // what it is: its command line, shortened
	User, Sys time.Duration
	// Reads and Writes are the read and write system calls it made
	// (/proc/PID/io syscr, syscw: every recv, send, read and write).
	Reads, Writes int64
}

// SyscallsIO is this process's read and write system calls so far.
func SyscallsIO() (reads, writes int64) { return procIO("self") }

// procIO reads syscr and syscw of /proc/PID/io.
func procIO(pid string) (reads, writes int64) {
	b, err := os.ReadFile("/proc/" + pid + "/io")
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "syscr: "); ok {
			reads, _ = strconv.ParseInt(v, 10, 64)
		}
		if v, ok := strings.CutPrefix(line, "syscw: "); ok {
			writes, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	return reads, writes
}

// Usage is what getrusage says of this process and of its children that
// have ended and been waited for.
func Usage() (self, children ProcCPU) {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	self = ProcCPU{PID: os.Getpid(), Name: "this process", User: time.Duration(ru.Utime.Nano()), Sys: time.Duration(ru.Stime.Nano())}
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru)
	children = ProcCPU{Name: "children", User: time.Duration(ru.Utime.Nano()), Sys: time.Duration(ru.Stime.Nano())}
	return self, children
}

// ChildWatch samples the CPU time of this process's descendants (from
// /proc) until Stop, keeping each one's last reading: the CPU time of
// children that have ended, by name, to within one interval.
type ChildWatch struct {
	mu    sync.Mutex
	last  map[int]ProcCPU
	stop  chan struct{}
	ended chan struct{}
}

// WatchChildren samples every interval.
func WatchChildren(interval time.Duration) *ChildWatch {
	w := &ChildWatch{last: map[int]ProcCPU{}, stop: make(chan struct{}), ended: make(chan struct{})}
	go func() {
		defer close(w.ended)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			w.sample()
			select {
			case <-w.stop:
				return
			case <-t.C:
			}
		}
	}()
	return w
}

// Stop ends the sampling and returns every descendant seen.
func (w *ChildWatch) Stop() []ProcCPU {
	close(w.stop)
	<-w.ended
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]ProcCPU, 0, len(w.last))
	for _, p := range w.last {
		out = append(out, p)
	}
	return out
}

// tick is the clock ticks per second of /proc's times (USER_HZ, 100 on
// Linux everywhere it runs).
const tick = 100

func (w *ChildWatch) sample() {
	dirs, _ := os.ReadDir("/proc")
	parent := map[int]int{}
	stats := map[int][]string{}
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces; fields after
		// its closing parenthesis.
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 13 {
			continue
		}
		parent[pid], _ = strconv.Atoi(f[1])
		stats[pid] = f
	}
	self := os.Getpid()
	w.mu.Lock()
	defer w.mu.Unlock()
	for pid, f := range stats {
		p := pid
		for n := 0; n < 8 && p != self && p > 1; n++ {
			p = parent[p]
		}
		if p != self || pid == self {
			continue
		}
		ut, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		name := w.last[pid].Name
		if name == "" {
			b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
			name = strings.Join(strings.Fields(strings.ReplaceAll(string(b), "\x00", " ")), " ")
			if len(name) > 80 {
				name = name[:80]
			}
		}
		r, wr := procIO(strconv.Itoa(pid))
		if r == 0 && wr == 0 { // gone meanwhile: keep the last reading
			r, wr = w.last[pid].Reads, w.last[pid].Writes
		}
		w.last[pid] = ProcCPU{PID: pid, Name: name, User: time.Duration(ut) * time.Second / tick, Sys: time.Duration(st) * time.Second / tick, Reads: r, Writes: wr}
	}
}
