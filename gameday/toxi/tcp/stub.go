// Package tcp is gameday's own version of Toxiproxy's TCP toxics that hand
// data on — latency, bandwidth, slicer, slow_close, limit_data and noop —
// and of its timeout, registered in Toxiproxy's toxic registry under
// Toxiproxy's names, so that gameday's Toxiproxy (embedded, and gameday
// serve toxiproxy) serves them through the standard API with the same
// attributes and the same effect.
//
// They differ from Toxiproxy's in one way: a removal never waits on them
// for ever. In Toxiproxy's chain each toxic hands its data to the next;
// Toxiproxy's own toxics do so with a send that watches nothing else, so
// when nothing reads what a toxic hands on (the client has stopped reading
// and its socket buffers are full, or has gone; a reset_peer after it is
// holding the connection up), the toxic sits in that send, never sees the
// interrupt its removal sends it, and the removal waits for ever holding
// the proxy's lock: every call of the API after it hangs (Toxiproxy issue
// #558). These toxics hand a chunk on with a send that an interrupt cuts
// short; the chunk is then kept in the stub and handed on first when the
// stub runs again (a toxic added, changed or removed after this one), or
// by Cleanup when this toxic is removed: at once if the toxic after it
// takes it within HandOnWithin, else the connection is closed (never a
// chunk dropped from the middle of a stream).
//
// For the same reason each draws its toxicity itself (Toxicity), once per
// connection and direction: Toxiproxy passes a connection a toxic's
// toxicity spares through a pass-through of its own whose send nothing
// interrupts. The timeout toxic hands nothing on; gameday serves it (it
// embeds Toxiproxy's) only for that.
package tcp

import (
	"math/rand/v2"
	"time"

	"github.com/Shopify/toxiproxy/v2/stream"
	"github.com/Shopify/toxiproxy/v2/toxics"
)

// HandOnWithin bounds how long the removal of a toxic waits to hand on the
// chunks its connections kept, all of them together: Toxiproxy removes a
// toxic from one connection after another, holding the proxy's lock, so
// a bound of each connection's own would grow with their number. A toxic after it that reads nothing for that
// long has closed the connection or is holding it up on purpose, or the
// client reads nothing; the connection is then closed rather than a chunk
// dropped from the middle of its stream (Toxiproxy's timeout toxic closes
// it too when removed). Past the bound each connection still gets
// handOnAtLeast, for a toxic after it that reads at once.
const (
	HandOnWithin  = time.Second
	handOnAtLeast = 10 * time.Millisecond
)

// kept is what a toxic keeps in its stub between runs.
type kept struct {
	// draw decides whether the toxic acts on this connection direction
	// (Toxicity): drawn once, uniform in [0, 1).
	draw float32
	// pending is a chunk (or the rest of one) taken and not yet handed
	// on, when an interrupt came first; due, when not zero, is when it
	// is due (latency's).
	pending *stream.StreamChunk
	due     time.Time
	// free is when bandwidth's link has carried what it was given.
	free time.Time
	// closeAt is when slow_close closes the connection, once its input
	// has ended.
	closeAt time.Time
	// sent counts what limit_data has handed on.
	sent int64
	// held: the timeout toxic has held this connection direction (and
	// dropped its data).
	held bool
}

// keptIn returns what stub keeps, making it on the stub's first run.
func keptIn(stub *toxics.ToxicStub) *kept {
	k, _ := stub.State.(*kept)
	if k == nil {
		k = &kept{draw: rand.Float32()}
		stub.State = k
	}
	return k
}

// keep puts c aside, to hand on first when the stub runs again.
func (k *kept) keep(c *stream.StreamChunk) { k.pending = c }

// next returns the chunk kept from the stub's last run (and when it is
// due), or else the next chunk from the input: nil at the input's end. ok
// is false when the stub is interrupted first.
func (k *kept) next(stub *toxics.ToxicStub) (c *stream.StreamChunk, due time.Time, ok bool) {
	if k.pending != nil {
		c, due = k.pending, k.due
		k.pending, k.due = nil, time.Time{}
		return c, due, true
	}
	select {
	case <-stub.Interrupt:
		return nil, time.Time{}, false
	case c = <-stub.Input:
		return c, time.Time{}, true
	}
}

// send hands c on, unless an interrupt comes first: false then, and c was
// not handed on.
func send(stub *toxics.ToxicStub, c *stream.StreamChunk) bool {
	select {
	case stub.Output <- c:
		return true
	case <-stub.Interrupt:
		return false
	}
}

// sleepUntil waits until t, unless an interrupt comes first: false then.
func sleepUntil(stub *toxics.ToxicStub, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return true
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-stub.Interrupt:
		return false
	}
}

// Cleanup is the Cleanup of every toxic here (and of gameday's
// request-aware ones), called by Toxiproxy as the toxic is removed from
// each connection, once its Pipe has returned: the chunk it kept goes on
// at once, and so does what waited in its input when its removal began
// (what arrives after, Toxiproxy hands on once it has stopped the toxic
// before it), or, when the toxic after
// it does not take them within what is left of the removal's HandOnWithin
// (at least handOnAtLeast each), the connection is closed. Toxiproxy
// would hand what waits in the input on itself, after this, waiting five
// seconds for each chunk the toxic after it does not take: behind a
// reset_peer that has reset its connection and stopped reading, a latency
// toxic's line of chunks held the removal, and the proxy's lock, for far
// longer than the API's deadline. A connection closed here is one
// Toxiproxy leaves as it is.
func (x *Toxicity) Cleanup(stub *toxics.ToxicStub) {
	var c *stream.StreamChunk
	if k, _ := stub.State.(*kept); k != nil {
		c, k.pending = k.pending, nil
	}
	for waiting := len(stub.Input); ; waiting-- {
		if c != nil {
			if err := stub.WriteOutput(c, max(x.removalLeft(), handOnAtLeast)); err != nil {
				stub.Close()
				return
			}
		}
		if waiting <= 0 {
			return
		}
		select {
		case c = <-stub.Input:
			if c == nil { // the input ended: so does the connection
				stub.Close()
				return
			}
		default:
			return
		}
	}
}
