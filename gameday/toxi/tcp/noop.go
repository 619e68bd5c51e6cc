package tcp

import "github.com/Shopify/toxiproxy/v2/toxics"

// Noop hands every chunk on as it came (Toxiproxy's noop), on the
// connections its toxicity hits as on those it spares.
type Noop struct {
	Toxicity
}

// Pipe hands every chunk on as it came.
func (t *Noop) Pipe(stub *toxics.ToxicStub) { PassThrough(stub) }

// Cleanup hands on what the toxic kept.
func (t *Noop) Cleanup(stub *toxics.ToxicStub) { t.Toxicity.Cleanup(stub) }

var _ toxics.CleanupToxic = (*Noop)(nil)

// PassThrough is the Pipe of a toxic that changes nothing: every chunk
// handed on as it came, with a send that an interrupt cuts short. gameday's
// request-aware toxics (package relay) sit in Toxiproxy's chain so.
func PassThrough(stub *toxics.ToxicStub) {
	k := keptIn(stub)
	for {
		c, _, ok := k.next(stub)
		switch {
		case !ok:
			return
		case c == nil:
			stub.Close()
			return
		case !send(stub, c):
			k.keep(c)
			return
		}
	}
}
