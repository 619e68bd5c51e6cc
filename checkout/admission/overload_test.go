package admission

import (
	"container/heap"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// overload is a steady overload of a fair room on the fake clock: shoppers
// arrive evenly at rate a second, each retries a waiting-room answer after
// RetryAfter × uniform[0.5, 1.5] and gives up when that wait would take
// it past its patience (as gameday/load's shoppers do), and an admitted
// checkout takes uniform[minS, maxS]. The room ticks every Config.Tick.
type overload struct {
	rate             float64
	patience         time.Duration
	minS, maxS       time.Duration
	arrivals         time.Duration // arrivals stop after this
	measureFrom, end time.Duration // the window the figures cover
}

// overloadFigures is what a run of an overload shows.
type overloadFigures struct {
	meanInProgress float64 // over the window, as the ticks see it
	span           float64 // seconds: the ticks in the window × Tick
	maxInProgress  int     // over the window
	admitted       int     // over the window
	firstK, lastK  float64 // K at the window's ends, for the log
	orderBroken    string  // the first shopper told to wait after a later one got in
}

type simEvent struct {
	at   time.Duration
	seq  int
	kind int // 0 send, 1 answered, 2 tick
	who  int
}

type simQueue []simEvent

func (q simQueue) Len() int { return len(q) }
func (q simQueue) Less(i, j int) bool {
	return q[i].at < q[j].at || q[i].at == q[j].at && q[i].seq < q[j].seq
}
func (q simQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *simQueue) Push(x any)   { *q = append(*q, x.(simEvent)) }
func (q *simQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

func (o overload) run(t *testing.T, r *Room, c *clock, seed uint64) overloadFigures {
	t.Helper()
	cfg := r.Config()
	start := c.Now()
	rng := rand.New(rand.NewPCG(seed, 1))
	type shopper struct {
		token    string
		stamp    int64
		deadline time.Duration
	}
	var shoppers []shopper
	var q simQueue
	seq := 0
	push := func(at time.Duration, kind, who int) {
		seq++
		heap.Push(&q, simEvent{at: at, seq: seq, kind: kind, who: who})
	}
	for k := 0; ; k++ {
		at := time.Duration(float64(k) / o.rate * float64(time.Second))
		if at >= o.arrivals {
			break
		}
		shoppers = append(shoppers, shopper{deadline: at + o.patience})
		push(at, 0, k)
	}
	push(cfg.Tick, 2, 0)

	var f overloadFigures
	var busy, span float64
	latest := int64(math.MinInt64) // the latest stamp admitted
	for q.Len() > 0 {
		e := heap.Pop(&q).(simEvent)
		if e.at > o.end {
			break
		}
		c.Advance(start.Add(e.at).Sub(c.Now()))
		now := e.at
		switch e.kind {
		case 0:
			s := &shoppers[e.who]
			d := r.Admit(fmt.Sprint("co-", e.who), s.token)
			if s.token == "" {
				s.token = d.Token
				s.stamp = stampOf(t, r, d.Token, fmt.Sprint("co-", e.who))
			}
			if d.Admitted {
				latest = max(latest, s.stamp)
				if now >= o.measureFrom {
					f.admitted++
				}
				push(now+o.minS+time.Duration(rng.Int64N(int64(o.maxS-o.minS)+1)), 1, e.who)
				break
			}
			if d.Refusal != RefusalWaitingRoom {
				t.Fatalf("shopper %d: %+v", e.who, d)
			}
			if s.stamp < latest && f.orderBroken == "" {
				f.orderBroken = fmt.Sprintf("at %v shopper %d was told to wait, after a later shopper got in", now, e.who)
			}
			wait := time.Duration(float64(cfg.RetryAfter) * (0.5 + rng.Float64()))
			if now+wait < s.deadline {
				push(now+wait, 0, e.who)
			}
		case 1:
			r.Done()
		case 2:
			if now >= o.measureFrom {
				if f.firstK == 0 {
					f.firstK = r.fair.target
				}
				// What the tick sees, weighted by the time it stands for.
				in := r.Stats().InProgress
				busy += float64(in) * cfg.Tick.Seconds()
				span += cfg.Tick.Seconds()
				f.maxInProgress = max(f.maxInProgress, in)
			}
			r.Tick()
			f.lastK = r.fair.target
			push(now+cfg.Tick, 2, 0)
		}
	}
	f.meanInProgress, f.span = busy/span, span
	return f
}

// Under a steady overload of retrying shoppers, some of whom run out of
// patience while they wait, the fair room keeps the number in progress
// near N, and admits in the order of first attempts: no shopper still
// trying is told to wait after a later one got in.
//
// The bound is the controller's rule. Each tick moves ln K by
// (N − in progress) / N × tick / RetryAfter, so over a window of W
// seconds in which K stays within its bounds, the mean shortfall
// N − mean(in progress) is N × RetryAfter × ln(K_end / K_start) / W. K
// stays between N and N × (1 + GoneAfter / S), S the time a checkout
// takes, at least minS; so the mean in progress is within
// N × RetryAfter × ln(1 + GoneAfter / minS) / W of N. (A K held at a bound
// for long would break that, and fail the test: it would mean the bounds
// keep K from where in progress is N.)
func TestFairKeepsInProgressNearN(t *testing.T) {
	const n = 8
	o := overload{
		// Twice what N checkouts of 250 ms on average can serve (32 a
		// second), for longer than the patience: the line grows until its
		// head is shoppers about to leave, and many of those called have
		// already left.
		rate: 64, patience: 10 * time.Second,
		minS: 100 * time.Millisecond, maxS: 400 * time.Millisecond,
		arrivals: 80 * time.Second, measureFrom: 20 * time.Second, end: 80 * time.Second,
	}
	c := newClock()
	r := newRoom(t, Config{Mode: ModeFair, InProgress: n}, c)
	f := o.run(t, r, c, 1)
	cfg := r.Config()
	w := f.span
	bound := n * cfg.RetryAfter.Seconds() * math.Log(1+float64(cfg.GoneAfter)/float64(o.minS)) / w
	t.Logf("mean in progress %.2f (N %d ± %.2f), most %d, %d admitted, K %.1f to %.1f", f.meanInProgress, n, bound, f.maxInProgress, f.admitted, f.firstK, f.lastK)
	if f.orderBroken != "" {
		t.Error(f.orderBroken)
	}
	if math.Abs(f.meanInProgress-n) > bound {
		t.Errorf("mean in progress %.2f, want N = %d ± %.2f", f.meanInProgress, n, bound)
	}
}
