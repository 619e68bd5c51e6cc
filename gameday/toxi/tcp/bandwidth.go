package tcp

import (
	"time"

	"github.com/Shopify/toxiproxy/v2/stream"
	"github.com/Shopify/toxiproxy/v2/toxics"
)

// Bandwidth hands the data on at Rate kilobytes (1,000 bytes) a second at
// most, in pieces of a tenth of a second's worth (Toxiproxy's bandwidth).
// A rate of 0 or less does not limit.
type Bandwidth struct {
	Rate int64 `json:"rate"`
	Toxicity
}

// Pipe hands each piece on once the link has carried it at the rate: the
// link carries a piece after the one before it, and an idle link saves no
// time for later. Interrupted, it keeps the rest of the chunk and goes on
// at the rate when the stub runs again; removed, it hands the rest on at
// once (Cleanup).
func (t *Bandwidth) Pipe(stub *toxics.ToxicStub) {
	k := keptIn(stub)
	if k.spares(&t.Toxicity) {
		PassThrough(stub)
		return
	}
	for {
		c, _, ok := k.next(stub)
		if !ok {
			return
		}
		if c == nil {
			stub.Close()
			return
		}
		if t.Rate <= 0 {
			if !send(stub, c) {
				k.keep(c)
				return
			}
			continue
		}
		piece := t.Rate * 100 // a tenth of a second's worth
		for rest := c.Data; len(rest) > 0; {
			n := min(int64(len(rest)), piece)
			// n bytes take n/Rate milliseconds.
			done := later(k.free, time.Now()).Add(time.Duration(n) * time.Millisecond / time.Duration(t.Rate))
			if !sleepUntil(stub, done) || !send(stub, &stream.StreamChunk{Data: rest[:n], Timestamp: c.Timestamp}) {
				k.keep(&stream.StreamChunk{Data: rest, Timestamp: c.Timestamp})
				return
			}
			k.free = done
			rest = rest[n:]
		}
	}
}

// Cleanup hands on what the toxic kept.
func (t *Bandwidth) Cleanup(stub *toxics.ToxicStub) { t.Toxicity.Cleanup(stub) }

var _ toxics.CleanupToxic = (*Bandwidth)(nil)

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
