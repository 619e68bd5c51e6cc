package tcp

import (
	"math/rand/v2"
	"time"

	"github.com/Shopify/toxiproxy/v2/toxics"
)

// Latency delays every chunk by Latency ± Jitter milliseconds from the
// moment the proxy read it (Toxiproxy's latency). A chunk carries the
// moment it left as its timestamp, so a latency toxic after this one
// delays it from then.
type Latency struct {
	Latency int64 `json:"latency"`
	Jitter  int64 `json:"jitter"`
	Toxicity
}

// GetBufferSize is how many chunks may wait in line for their delay, as
// in Toxiproxy's.
func (t *Latency) GetBufferSize() int { return 1024 }

func (t *Latency) delay() time.Duration {
	d := t.Latency
	if t.Jitter > 0 {
		d += rand.Int64N(2*t.Jitter+1) - t.Jitter
	}
	return time.Duration(d) * time.Millisecond
}

// Pipe delays each chunk, then hands it on. Interrupted, it keeps the
// chunk and when it is due, and goes on from there when the stub runs
// again; removed, it hands the chunk on at once (Cleanup).
func (t *Latency) Pipe(stub *toxics.ToxicStub) {
	k := keptIn(stub)
	if k.spares(&t.Toxicity) {
		PassThrough(stub)
		return
	}
	for {
		c, due, ok := k.next(stub)
		if !ok {
			return
		}
		if c == nil {
			stub.Close()
			return
		}
		if due.IsZero() {
			due = c.Timestamp.Add(t.delay())
		}
		if sleepUntil(stub, due) {
			c.Timestamp = time.Now()
			if send(stub, c) {
				continue
			}
		}
		k.keep(c)
		k.due = due
		return
	}
}

// Cleanup hands on what the toxic kept.
func (t *Latency) Cleanup(stub *toxics.ToxicStub) { t.Toxicity.Cleanup(stub) }

var (
	_ toxics.CleanupToxic  = (*Latency)(nil)
	_ toxics.BufferedToxic = (*Latency)(nil)
)
