package tcp

import (
	"time"

	"github.com/Shopify/toxiproxy/v2/toxics"
)

// SlowClose hands the data on as it came, and closes the connection Delay
// milliseconds after its input has ended (Toxiproxy's slow_close).
type SlowClose struct {
	Delay int64 `json:"delay"`
	Toxicity
}

// Pipe hands every chunk on; at the input's end it waits out the delay
// and closes, and, interrupted meanwhile, goes on waiting for the same
// moment when the stub runs again.
func (t *SlowClose) Pipe(stub *toxics.ToxicStub) {
	k := keptIn(stub)
	if k.spares(&t.Toxicity) {
		PassThrough(stub)
		return
	}
	for k.closeAt.IsZero() {
		c, _, ok := k.next(stub)
		if !ok {
			return
		}
		if c == nil {
			k.closeAt = time.Now().Add(time.Duration(t.Delay) * time.Millisecond)
			break
		}
		if !send(stub, c) {
			k.keep(c)
			return
		}
	}
	if sleepUntil(stub, k.closeAt) {
		stub.Close()
	}
}

// Cleanup hands on what the toxic kept.
func (t *SlowClose) Cleanup(stub *toxics.ToxicStub) { t.Toxicity.Cleanup(stub) }

var _ toxics.CleanupToxic = (*SlowClose)(nil)
