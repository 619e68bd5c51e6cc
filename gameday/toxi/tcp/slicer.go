package tcp

import (
	"math/rand/v2"
	"time"

	"github.com/Shopify/toxiproxy/v2/stream"
	"github.com/Shopify/toxiproxy/v2/toxics"
)

// Slicer hands each chunk on in slices of AverageSize ± SizeVariation
// bytes, waiting Delay microseconds after each (Toxiproxy's slicer). An
// average of 0 or less does not slice; a variation of the average or more
// counts as one byte less than it, so that no slice is empty.
type Slicer struct {
	AverageSize   int `json:"average_size"`
	SizeVariation int `json:"size_variation"`
	Delay         int `json:"delay"`
	Toxicity
}

// size is a slice's size: the whole chunk (0) when it does not slice.
func (t *Slicer) size() int {
	if t.AverageSize <= 0 {
		return 0
	}
	v := min(t.SizeVariation, t.AverageSize-1)
	if v <= 0 {
		return t.AverageSize
	}
	return t.AverageSize + rand.IntN(2*v+1) - v
}

// Pipe slices each chunk and hands the slices on. Interrupted, it keeps
// the rest of the chunk and slices it when the stub runs again; removed,
// it hands the rest on at once (Cleanup).
func (t *Slicer) Pipe(stub *toxics.ToxicStub) {
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
		delay := time.Duration(t.Delay) * time.Microsecond
		for rest := c.Data; len(rest) > 0; {
			n := len(rest)
			if size := t.size(); size > 0 {
				n = min(n, size)
			}
			if !send(stub, &stream.StreamChunk{Data: rest[:n], Timestamp: c.Timestamp}) {
				k.keep(&stream.StreamChunk{Data: rest, Timestamp: c.Timestamp})
				return
			}
			rest = rest[n:]
			if !sleepUntil(stub, time.Now().Add(delay)) {
				if len(rest) > 0 {
					k.keep(&stream.StreamChunk{Data: rest, Timestamp: c.Timestamp})
				}
				return
			}
		}
	}
}

// Cleanup hands on what the toxic kept.
func (t *Slicer) Cleanup(stub *toxics.ToxicStub) { t.Toxicity.Cleanup(stub) }

var _ toxics.CleanupToxic = (*Slicer)(nil)
