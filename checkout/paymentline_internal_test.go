package checkout

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func (l *paymentLine) waitingNow() int { n, _ := l.counts(); return n }

// Without deadlines the line is a plain first-come, first-served
// semaphore: slots are given in the order the waiters came...
func TestPaymentLineFirstComeFirstServed(t *testing.T) {
	const waiters = 12
	l := newPaymentLine(1, 0, time.Now)
	if !l.acquire(context.Background()) {
		t.Fatal("a free slot was refused")
	}
	granted := make(chan int)
	done := make([]chan struct{}, waiters)
	var wg sync.WaitGroup
	for i := range waiters {
		done[i] = make(chan struct{})
		wg.Go(func() {
			if !l.acquire(context.Background()) {
				t.Errorf("waiter %d refused without a deadline", i)
				return
			}
			granted <- i
			<-done[i]
			l.release()
		})
		// The next one comes once this one is in line.
		WaitFor(t, "the waiter in line", func() bool { return l.waitingNow() == i+1 })
	}
	l.release()
	for k := range waiters {
		if i := <-granted; i != k {
			t.Fatalf("slot %d went to waiter %d, want arrival order", k, i)
		}
		close(done[k])
	}
	wg.Wait()
	if l.free != 1 || l.waitingNow() != 0 {
		t.Errorf("afterwards: %d free, %d waiting", l.free, l.waitingNow())
	}
}

// ...and never more than its slots are held at once.
func TestPaymentLineHoldsAtMostItsSlots(t *testing.T) {
	const slots = 3
	l := newPaymentLine(slots, 0, time.Now)
	var held, most atomic.Int32
	var wg sync.WaitGroup
	for range 40 {
		wg.Go(func() {
			for range 50 {
				if !l.acquire(context.Background()) {
					t.Error("refused without a deadline")
					return
				}
				n := held.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				held.Add(-1)
				l.release()
			}
		})
	}
	wg.Wait()
	if most.Load() > slots || most.Load() < 1 {
		t.Errorf("%d slots held at once, want 1 to %d", most.Load(), slots)
	}
	if l.free != slots {
		t.Errorf("%d free afterwards, want %d", l.free, slots)
	}
}

// A waiter leaves too_late the moment it can no longer finish before its
// deadline (deadline − need), long before the deadline itself, and the
// slot then goes to the one behind it.
func TestPaymentLineLeavesWhenItCanNoLongerFinish(t *testing.T) {
	const need = 300 * time.Millisecond
	l := newPaymentLine(1, need, time.Now)
	if !l.acquire(context.Background()) {
		t.Fatal("a free slot was refused")
	}
	start := time.Now()
	short, cancel := context.WithDeadline(context.Background(), start.Add(need+100*time.Millisecond))
	defer cancel()
	shortDone := make(chan time.Duration, 1)
	go func() {
		if l.acquire(short) {
			t.Error("a waiter that could not finish got a slot")
			l.release()
		}
		shortDone <- time.Since(start)
	}()
	WaitFor(t, "the short waiter in line", func() bool { return l.waitingNow() == 1 })
	long, cancel2 := context.WithTimeout(context.Background(), time.Minute)
	defer cancel2()
	longGot := make(chan bool, 1)
	go func() { longGot <- l.acquire(long) }()
	WaitFor(t, "the long waiter in line", func() bool { return l.waitingNow() == 2 })

	took := <-shortDone
	if dl, _ := short.Deadline(); took >= dl.Sub(start) {
		t.Errorf("the short waiter left after %s, at or after its deadline: it must leave when it can no longer finish", took)
	}
	if _, skipped := l.counts(); skipped != 1 {
		t.Errorf("skipped %d, want 1", skipped)
	}
	l.release()
	if !<-longGot {
		t.Error("the waiter with time enough did not get the slot")
	}
	l.release()
}

// The rule also holds where a slot is given: a waiter whose time ran short
// before its own timer fired (a slow machine, a stepped clock) is skipped
// and answered, and the slot goes to the next that can finish. The line's
// clock is moved here; the waiter's timer is a minute away.
func TestPaymentLineSkipsAtTheGrant(t *testing.T) {
	const need = time.Second
	var now atomic.Int64
	t0 := time.Now()
	now.Store(t0.UnixNano())
	l := newPaymentLine(1, need, func() time.Time { return time.Unix(0, now.Load()) })
	if !l.acquire(context.Background()) {
		t.Fatal("a free slot was refused")
	}
	soon, cancel := context.WithDeadline(context.Background(), t0.Add(time.Minute))
	defer cancel()
	later, cancel2 := context.WithDeadline(context.Background(), t0.Add(time.Hour))
	defer cancel2()
	got := make([]chan bool, 2)
	for i, ctx := range []context.Context{soon, later} {
		got[i] = make(chan bool, 1)
		go func() { got[i] <- l.acquire(ctx) }()
		WaitFor(t, "the waiter in line", func() bool { return l.waitingNow() == i+1 })
	}
	// Within need of the first waiter's deadline: it cannot finish.
	now.Store(t0.Add(time.Minute - need/2).UnixNano())
	l.release()
	if <-got[0] {
		t.Error("the waiter that could not finish got the slot")
	}
	if !<-got[1] {
		t.Error("the next waiter, with time enough, did not get the slot")
	}
	if _, skipped := l.counts(); skipped != 1 {
		t.Errorf("skipped %d, want 1", skipped)
	}
	l.release()
	if l.free != 1 {
		t.Errorf("%d free after every release, want 1", l.free)
	}
}

// A shopper who leaves (its request cancelled) leaves the line, and a slot
// given as it left is passed on, not lost.
func TestPaymentLineShopperLeaves(t *testing.T) {
	l := newPaymentLine(1, 0, time.Now)
	if !l.acquire(context.Background()) {
		t.Fatal("a free slot was refused")
	}
	ctx, cancel := context.WithCancel(context.Background())
	gone := make(chan bool, 1)
	go func() { gone <- l.acquire(ctx) }()
	WaitFor(t, "the waiter in line", func() bool { return l.waitingNow() == 1 })
	cancel()
	if <-gone {
		t.Error("a shopper who left got a slot")
	}
	l.release()
	if !l.acquire(context.Background()) {
		t.Error("the slot was lost")
	}
	for range 200 { // the race between a grant and a leaving shopper
		ctx, cancel := context.WithCancel(context.Background())
		got := make(chan bool, 1)
		go func() { got <- l.acquire(ctx) }()
		WaitFor(t, "the waiter in line", func() bool { return l.waitingNow() == 1 })
		go cancel()
		l.release()
		if <-got {
			l.release()
		}
		if !l.acquire(context.Background()) {
			t.Fatal("a slot was lost to a shopper leaving as it was given")
		}
	}
	l.release()
	if l.free != 1 || l.waitingNow() != 0 {
		t.Errorf("%d free, %d waiting; want 1, 0", l.free, l.waitingNow())
	}
	// Shoppers who closed the page were not too late: not counted so.
	if _, skipped := l.counts(); skipped != 0 {
		t.Errorf("%d counted too late, want 0: they left", skipped)
	}
}
