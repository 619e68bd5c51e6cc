package load

import (
	"sync"
	"time"
)

// idleRetire is how long a shopper goroutine of the pool may wait for an
// arrival before it ends.
const idleRetire = time.Second

// pool runs shoppers, at most size at once. An arrival starts only when
// fewer than size are busy; otherwise it is dropped, never queued.
//
// The goroutines are made when first needed and kept while the sale keeps
// them busy; an idle one waits on a stack, so that an arrival goes to the
// one that finished last (its stack grown, its caches warm) and the one
// idle longest is at the bottom, where it is ended once it has been idle
// for idleRetire. A pool of size goroutines made up front would cost
// nothing in CPU while they sleep, but the collector scans every
// goroutine's stack on every cycle: with 10,000 idle ones the late-start
// p99 at 5,000 arrivals/s went from about 2 ms to between 4 and 27 ms, and
// a pool sized for the worst case (the runner's default is 2 × peak rate ×
// patience) would hold hundreds of megabytes of stacks that the sale never
// uses. The bound is the same: never more than size goroutines.
type pool struct {
	size int
	shop func(i int)
	wg   sync.WaitGroup

	mu      sync.Mutex
	idle    []idler // the last one to finish on top
	workers int     // busy and idle
	closed  bool
}

type idler struct {
	work  chan int
	since time.Time
}

func newPool(size int, shop func(i int)) *pool {
	return &pool{size: size, shop: shop}
}

// start hands arrival i to an idle shopper, or to a new one while fewer
// than size exist, or reports that all of them are busy. It never blocks.
func (p *pool) start(i int) bool {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		w := p.idle[n-1].work
		p.idle = p.idle[:n-1]
		p.retire()
		p.mu.Unlock()
		w <- i // it is idle: its channel is empty
		return true
	}
	if p.workers == p.size {
		p.mu.Unlock()
		return false
	}
	p.workers++
	p.mu.Unlock()
	w := make(chan int, 1)
	w <- i
	p.wg.Add(1)
	go p.work(w)
	return true
}

// retire ends the shopper idle longest if it has been idle for idleRetire;
// one at a time, so that a pool shrinks gently. p.mu is held.
func (p *pool) retire() {
	if len(p.idle) > 0 && time.Since(p.idle[0].since) > idleRetire {
		close(p.idle[0].work)
		p.idle = p.idle[1:]
		p.workers--
	}
}

func (p *pool) work(w chan int) {
	defer p.wg.Done()
	for i := range w {
		p.shop(i)
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return
		}
		p.idle = append(p.idle, idler{work: w, since: time.Now()})
		p.mu.Unlock()
	}
}

// close waits for every busy shopper to finish and ends them all. It is
// called once, after the last start.
func (p *pool) close() {
	p.mu.Lock()
	p.closed = true
	for _, it := range p.idle {
		close(it.work)
	}
	p.idle = nil
	p.mu.Unlock()
	p.wg.Wait()
}
