package relay

import (
	"time"

	"github.com/Shopify/toxiproxy/v2/stream"
	"github.com/Shopify/toxiproxy/v2/toxics"
)

// Every request-aware toxic sits in Toxiproxy's chain as a pass-through
// (the relay behind the proxy does its work) and must never hold the
// chain up. Toxiproxy's own noop does: it hands a chunk on with a send
// that watches nothing else, so when the toxic after it stops reading
// (a reset_peer that closed the connection, or is waiting to), the noop
// is stuck in that send, never sees the interrupt a removal sends it, and
// the removal waits for ever holding the proxy's lock: the whole API
// hangs (Toxiproxy issue #558; a search drew http_lost_response with a
// reset_peer after it on one proxy, and every trial after it failed).
// passThrough hands a chunk on with a send that an interrupt cuts short;
// the chunk is then kept in the stub (passState) and handed on first when
// the stub runs again (a toxic added or removed after this one), or by
// Cleanup when this toxic is removed.

// passState is what a pass-through toxic keeps in its stub between runs: a
// chunk it took and had not handed on when it was interrupted.
type passState struct{ pending *stream.StreamChunk }

// handOnWithin bounds how long the removal of a request-aware toxic waits
// to hand on the chunk it holds. A toxic after it that reads nothing for
// that long has closed the connection or is holding it up on purpose; the
// connection is closed rather than a chunk dropped from the middle of its
// stream (Toxiproxy's timeout toxic does the same).
const handOnWithin = time.Second

func passThrough(stub *toxics.ToxicStub) {
	st, _ := stub.State.(*passState)
	if st == nil {
		st = &passState{}
		stub.State = st
	}
	for {
		c := st.pending
		if c == nil {
			select {
			case <-stub.Interrupt:
				return
			case c = <-stub.Input:
				if c == nil {
					stub.Close()
					return
				}
			}
		}
		select {
		case stub.Output <- c:
			st.pending = nil
		case <-stub.Interrupt:
			st.pending = c
			return
		}
	}
}

// cleanup is every request-aware toxic's Cleanup, called by Toxiproxy as
// the toxic is removed, once its Pipe has returned: the chunk it held goes
// on, or, when the toxic after it will not take it, the connection is
// closed.
func cleanup(stub *toxics.ToxicStub) {
	st, _ := stub.State.(*passState)
	if st == nil || st.pending == nil {
		return
	}
	c := st.pending
	st.pending = nil
	if err := stub.WriteOutput(c, handOnWithin); err != nil {
		stub.Close()
	}
}

func (t *LostReply) Cleanup(stub *toxics.ToxicStub)        { cleanup(stub) }
func (t *HTTPError) Cleanup(stub *toxics.ToxicStub)        { cleanup(stub) }
func (t *HTTPLostResponse) Cleanup(stub *toxics.ToxicStub) { cleanup(stub) }
func (t *HTTPLatency) Cleanup(stub *toxics.ToxicStub)      { cleanup(stub) }
func (t *HTTPMalformed) Cleanup(stub *toxics.ToxicStub)    { cleanup(stub) }

var (
	_ toxics.CleanupToxic = (*LostReply)(nil)
	_ toxics.CleanupToxic = (*HTTPError)(nil)
	_ toxics.CleanupToxic = (*HTTPLostResponse)(nil)
	_ toxics.CleanupToxic = (*HTTPLatency)(nil)
	_ toxics.CleanupToxic = (*HTTPMalformed)(nil)
)
