package tcp

import (
	"github.com/Shopify/toxiproxy/v2/stream"
	"github.com/Shopify/toxiproxy/v2/toxics"
)

// LimitData hands on the first Bytes bytes of its direction of the
// connection, then closes the connection (Toxiproxy's limit_data). What it
// handed on is counted per connection, and the count outlives a change of
// Bytes.
type LimitData struct {
	Bytes int64 `json:"bytes"`
	Toxicity
}

// Pipe hands on what is left of the limit, cutting the chunk that reaches
// it, and closes the connection once the limit is reached.
func (t *LimitData) Pipe(stub *toxics.ToxicStub) {
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
		limit := t.Bytes
		if left := max(limit-k.sent, 0); int64(len(c.Data)) > left {
			c = &stream.StreamChunk{Data: c.Data[:left], Timestamp: c.Timestamp}
		}
		if len(c.Data) > 0 {
			if !send(stub, c) {
				k.keep(c)
				return
			}
			k.sent += int64(len(c.Data))
		}
		if k.sent >= limit {
			stub.Close()
			return
		}
	}
}

// Cleanup hands on what the toxic kept.
func (t *LimitData) Cleanup(stub *toxics.ToxicStub) { t.Toxicity.Cleanup(stub) }

var _ toxics.CleanupToxic = (*LimitData)(nil)
