package tcp

import (
	"sync"
	"time"

	"github.com/Shopify/toxiproxy/v2/toxics"
)

// ToxicityAttribute is the attribute under which gameday's Toxiproxy keeps
// the toxicity a client set on a toxic that draws its own (Toxicity's JSON
// name). Its API moves a client's toxicity there as the toxic is added or
// changed, and back to the toxic's "toxicity" in every answer: a client
// never sees it.
const ToxicityAttribute = "gameday_toxicity"

// Toxicity is embedded by every toxic of gameday's: the toxic draws its
// toxicity itself — once per connection and direction, kept in the stub —
// and, on a connection it spares, passes the data through with a send
// that an interrupt cuts short.
//
// Toxiproxy draws a toxic's toxicity each time its stub runs, and passes a
// connection it spares through a pass-through of its own whose send
// watches nothing else, so that removing or changing the toxic, or adding
// one after it, waits for ever when nothing reads what it hands on (as in
// Toxiproxy issue #558). gameday's Toxiproxy therefore hands such a toxic
// to Toxiproxy with toxicity 1, so that Toxiproxy always runs the toxic's
// own Pipe, and keeps the client's toxicity here.
type Toxicity struct {
	// Share is the share of connections the toxic acts on, as the client
	// set it: a connection is hit when its draw, uniform in [0, 1), is
	// below it, as in Toxiproxy. nil is 1 (every connection).
	Share *float32 `json:"gameday_toxicity,omitempty"`

	// giveUp is when the toxic's removal stops waiting to hand on what
	// its connections kept: HandOnWithin after it began (Cleanup).
	removal sync.Mutex
	giveUp  time.Time
}

// removalLeft is what is left of the toxic's removal's HandOnWithin,
// which its first connection's Cleanup starts.
func (x *Toxicity) removalLeft() time.Duration {
	x.removal.Lock()
	defer x.removal.Unlock()
	if x.giveUp.IsZero() {
		x.giveUp = time.Now().Add(HandOnWithin)
	}
	return time.Until(x.giveUp)
}

func (x *Toxicity) toxicity() *Toxicity { return x }

// drawsOwn is a toxic that embeds Toxicity.
type drawsOwn interface{ toxicity() *Toxicity }

// DrawsItsToxicity reports whether toxic t draws its toxicity itself (it
// embeds Toxicity): every toxic of this package's, and gameday's
// request-aware ones.
func DrawsItsToxicity(t toxics.Toxic) bool {
	_, ok := t.(drawsOwn)
	return ok
}

// ToxicityOf is the toxicity of the toxic w wraps as its client set it:
// its own for a toxic that draws it, else Toxiproxy's.
func ToxicityOf(w *toxics.ToxicWrapper) float32 {
	if t, ok := w.Toxic.(drawsOwn); ok {
		if s := t.toxicity().Share; s != nil {
			return *s
		}
		return 1
	}
	return w.Toxicity
}

// spares reports whether a toxic of toxicity x leaves alone the
// connection direction whose stub keeps k: its draw, made once, is not
// below the toxicity. A change of toxicity applies from the stub's next
// run, to the same draw: the share hit is the toxicity's at any time.
func (k *kept) spares(x *Toxicity) bool {
	return x.Share != nil && !(k.draw < *x.Share)
}
