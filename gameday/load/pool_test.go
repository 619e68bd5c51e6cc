package load

import (
	"sync"
	"testing"
	"time"
)

// TestPool: at most size shoppers at once, the last to finish takes the
// next arrival, one idle too long is ended, and close waits for all.
func TestPool(t *testing.T) {
	var mu sync.Mutex
	release := map[int]chan struct{}{}
	ran := map[int]bool{}
	for i := range 5 {
		release[i] = make(chan struct{})
	}
	p := newPool(2, func(i int) {
		<-release[i]
		mu.Lock()
		ran[i] = true
		mu.Unlock()
	})
	workers := func() int {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.workers
	}
	idle := func() int {
		p.mu.Lock()
		defer p.mu.Unlock()
		return len(p.idle)
	}
	waitIdle := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); idle() != n; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d idle, want %d", idle(), n)
			}
		}
	}

	// Two start, the third finds both busy.
	if !p.start(0) || !p.start(1) || p.start(2) {
		t.Fatal("a pool of 2 did not start exactly 2")
	}
	close(release[0])
	close(release[1])
	waitIdle(2)
	if workers() != 2 {
		t.Fatalf("%d workers, want 2", workers())
	}
	// Past idleRetire, starting one retires the one idle longest: the
	// pool shrinks as the sale needs fewer.
	time.Sleep(idleRetire + 100*time.Millisecond)
	if !p.start(3) {
		t.Fatal("an idle pool refused an arrival")
	}
	if w := workers(); w != 1 {
		t.Errorf("%d workers after a retirement, want 1", w)
	}
	// One busy, room for one more.
	if !p.start(4) {
		t.Fatal("a pool of 2 with 1 busy refused an arrival")
	}
	close(release[3])
	close(release[4])
	p.close()
	if len(ran) != 4 || ran[2] {
		t.Errorf("ran %v, want 0, 1, 3, 4", ran)
	}
}
