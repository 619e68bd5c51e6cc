package load

import "sync"

// pool is the fixed set of shopper goroutines of a run, created before the
// sale. An arrival starts only on an idle one; with none idle it is dropped,
// never queued, so at most size shoppers are in flight.
//
// Idle shoppers are kept on a stack: an arrival goes to the one that
// finished last. A shared channel would wake the one idle longest instead,
// cycling through the whole pool, so that every goroutine's stack grows
// again after the collector shrank it and the CPU caches are always cold;
// a stack keeps the busy few hot and lets the rest sleep.
type pool struct {
	mu   sync.Mutex
	idle []int // indexes into work, the last one finished on top
	work []chan int
	wg   sync.WaitGroup
}

func newPool(size int, shop func(i int)) *pool {
	p := &pool{idle: make([]int, size), work: make([]chan int, size)}
	p.wg.Add(size)
	for w := range size {
		p.idle[size-1-w] = w // worker 0 on top
		p.work[w] = make(chan int, 1)
		go func() {
			defer p.wg.Done()
			for i := range p.work[w] {
				shop(i)
				p.mu.Lock()
				p.idle = append(p.idle, w)
				p.mu.Unlock()
			}
		}()
	}
	return p
}

// start hands arrival i to an idle shopper, or reports that none is idle.
// It never blocks: the shopper's channel has room for one arrival and an
// idle shopper has none.
func (p *pool) start(i int) bool {
	p.mu.Lock()
	n := len(p.idle)
	if n == 0 {
		p.mu.Unlock()
		return false
	}
	w := p.idle[n-1]
	p.idle = p.idle[:n-1]
	p.mu.Unlock()
	p.work[w] <- i
	return true
}

// close lets every shopper finish its arrival and waits for them all. It
// is called once, after the last start.
func (p *pool) close() {
	for _, ch := range p.work {
		close(ch)
	}
	p.wg.Wait()
}
