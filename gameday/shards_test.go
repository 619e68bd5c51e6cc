package gameday_test

import (
	"bytes"
	"context"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday"
	"github.com/gameday-dev/gameday/gameday/fleet"
)

// TestShardedDrillMatchesOneProcess: the same drill and seed, its load sent
// once by this process and once by four local worker processes (standing
// in for four machines): the same sale, the same verdict and exactly the
// same totals, every shard's part back. Its log prints the lateness of
// both side by side (docs/scale.md records them).
func TestShardedDrillMatchesOneProcess(t *testing.T) {
	sc := lookup(t, "baseline")
	one := run(t, context.Background(), sc, options(t))
	o := options(t)
	o.Shards = &gameday.ShardOptions{N: 4}
	four := run(t, context.Background(), sc, o)
	for _, rec := range []*gameday.Record{one, four} {
		if rec.Verdict != gameday.VerdictPass {
			t.Fatalf("verdict %s: %s", rec.Verdict, rec.Reason)
		}
	}
	if one.Load.Scheduled != four.Load.Scheduled || four.Load.Started != four.Load.Scheduled || one.Load.Started != four.Load.Started || four.Load.Dropped != 0 {
		t.Errorf("one process %+v, four %+v: want the same sale, all of it started", one.Load, four.Load)
	}
	// Declines are drawn by the payment stand-in from the seed and the
	// checkout id: the same ids give the same outcomes.
	if !maps.Equal(one.Outcomes, four.Outcomes) {
		t.Errorf("outcomes: one process %v, four %v", one.Outcomes, four.Outcomes)
	}
	if one.Invariants != four.Invariants {
		t.Errorf("books: one process %+v, four %+v", one.Invariants, four.Invariants)
	}
	if len(one.Load.Shards) != 0 || len(four.Load.Shards) != 4 {
		t.Fatalf("shard records: one process %d, four %d", len(one.Load.Shards), len(four.Load.Shards))
	}
	sum := 0
	for _, s := range four.Load.Shards {
		sum += s.Shoppers
		if s.Error != "" || s.Shoppers != s.Scheduled || s.Host == "" {
			t.Errorf("shard %+v: want its whole part back", s)
		}
	}
	if sum != four.Load.Scheduled {
		t.Errorf("the shards sent back %d shoppers of %d", sum, four.Load.Scheduled)
	}
	t.Logf("lateness p50/p99/max ms: one process %.2f/%.2f/%.2f, four workers %.2f/%.2f/%.2f",
		one.Load.LateP50MS, one.Load.LateP99MS, one.Load.LateMaxMS, four.Load.LateP50MS, four.Load.LateP99MS, four.Load.LateMaxMS)
}

// TestAKilledShardMakesTheDrillInconclusive: a worker killed while a fault
// is in place: the load stops everywhere, the fault comes off, and the
// drill says which shard died instead of judging a sale it did not send.
func TestAKilledShardMakesTheDrillInconclusive(t *testing.T) {
	l := startService(t)
	o := options(t)
	o.Environment = external(l)
	o.Shards = &gameday.ShardOptions{N: 3}
	// Kill shard 2 a second into the fault (at 4s, for 4s, time-scaled).
	o.Progress = watchFor("load   5.0s", func() {
		if err := killWorker(2); err != nil {
			t.Error(err)
		}
	})
	rec := run(t, context.Background(), lookup(t, "payment-latency"), o)
	if rec.Verdict != gameday.VerdictInconclusive || !strings.Contains(rec.Reason, "shard 2 died") {
		t.Fatalf("verdict %s: %s, want inconclusive, shard 2 named", rec.Verdict, rec.Reason)
	}
	if len(rec.Load.Shards) != 3 || rec.Load.Shards[2].Error == "" || rec.Load.Started >= rec.Load.Scheduled {
		t.Errorf("load %+v: want shard 2's death recorded and the sale cut short", rec.Load)
	}
	if got := faultsOn(t, l); len(got) != 0 {
		t.Errorf("faults left on the service: %v", got)
	}
}

// TestRemoteWorkersCallIn: workers started elsewhere (here, in this
// process, as a Swarm task or a Kubernetes pod would run "gameday worker")
// call in with the run's token and send the sale; one that never comes
// leaves the drill inconclusive before anything is sent.
func TestRemoteWorkersCallIn(t *testing.T) {
	sc := lookup(t, "baseline")
	o := options(t)
	token := "remote-secret"
	var wg sync.WaitGroup
	o.Shards = &gameday.ShardOptions{N: 2, Remote: true, Token: token, Announce: func(url string) {
		for k := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := fleet.Work(context.Background(), fleet.WorkerOptions{Coordinator: url, Token: token, Shard: k}); err != nil {
					t.Errorf("worker %d: %v", k, err)
				}
			}()
		}
	}}
	rec := run(t, context.Background(), sc, o)
	wg.Wait()
	if rec.Verdict != gameday.VerdictPass || len(rec.Load.Shards) != 2 || rec.Load.Started != rec.Load.Scheduled {
		t.Fatalf("verdict %s (%s), load %+v", rec.Verdict, rec.Reason, rec.Load)
	}

	o = options(t)
	o.Shards = &gameday.ShardOptions{N: 2, Remote: true, Token: token, JoinWithin: 2 * time.Second}
	rec = run(t, context.Background(), sc, o)
	if rec.Verdict != gameday.VerdictInconclusive || !strings.Contains(rec.Reason, "shards 0, 1 of 2 were not ready") || rec.Load.Started != 0 {
		t.Fatalf("no worker came: verdict %s (%s), load %+v", rec.Verdict, rec.Reason, rec.Load)
	}
}

// watchFor is a progress writer that calls f once, when a line holds s.
func watchFor(s string, f func()) *progressWatch {
	return &progressWatch{s: s, f: f}
}

type progressWatch struct {
	mu   sync.Mutex
	s    string
	f    func()
	done bool
}

func (w *progressWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done && bytes.Contains(p, []byte(w.s)) {
		w.done = true
		go w.f()
	}
	return len(p), nil
}

// killWorker kills the local worker process of shard k of this test's
// binary.
func killWorker(k int) error {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if len(args) == 6 && args[0] == binary && args[1] == "worker" && args[4] == "-shard" && args[5] == string(rune('0'+k)) {
			var pid int
			for _, c := range strings.TrimPrefix(filepath.Dir(p), "/proc/") {
				pid = pid*10 + int(c-'0')
			}
			return syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	return os.ErrNotExist
}
