package predict

import "time"

// kind is what an event does when its time comes.
type kind uint8

const (
	evSend       kind = iota // a shopper sends an attempt (id: shopper)
	evReady                  // the checkout's own work for a request is done (id: request)
	evChargeDone             // a charge's processing ends in the stand-in (id: request)
	evGuardEnd               // the payment guard's deadline on a call (id: request)
	evCallerEnd              // the shopper's deadline on a call, in the modes that honour it (id: request)
	evLineLate               // a request in the payment line can no longer finish in time (id: request)
	evTick                   // the waiting room's controller steps (id unused)
)

// event is one thing due at a time. Events due at the same time happen in
// the order of their kind (as listed above: a charge that answers exactly
// at the guard's deadline wins, as in breakers.Guard), then of their id,
// so a run is the same every time. Kind and id share one word, which keeps
// an event at 16 bytes: four of them, a node's children, fill a cache line.
type event struct {
	at  time.Duration
	tag uint64 // kind << 32 | id
}

func newEvent(at time.Duration, k kind, id int32) event {
	return event{at: at, tag: uint64(k)<<32 | uint64(uint32(id))}
}

func (e event) kind() kind { return kind(e.tag >> 32) }
func (e event) id() int32  { return int32(uint32(e.tag)) }

func (e event) before(o event) bool {
	return e.at < o.at || e.at == o.at && e.tag < o.tag
}

// events is a 4-ary min-heap of events by (at, tag). It is hand-written
// rather than container/heap, whose interface boxes every event it
// handles: this one allocates only when its slice grows. Four children a
// node halve the depth of a binary heap, and the four sit next to each
// other in memory, which is what a pop mostly pays for.
type events []event

func (h *events) push(e event) {
	q := append(*h, e)
	i := len(q) - 1
	for i > 0 {
		p := (i - 1) / 4
		if !e.before(q[p]) {
			break
		}
		q[i] = q[p]
		i = p
	}
	q[i] = e
	*h = q
}

func (h *events) pop() event {
	q := *h
	top := q[0]
	n := len(q) - 1
	last := q[n]
	q = q[:n]
	i := 0
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		// The earliest of the (up to) four children.
		m := c
		for k := c + 1; k < min(c+4, n); k++ {
			if q[k].before(q[m]) {
				m = k
			}
		}
		if !q[m].before(last) {
			break
		}
		q[i] = q[m]
		i = m
	}
	if n > 0 {
		q[i] = last
	}
	*h = q
	return top
}
