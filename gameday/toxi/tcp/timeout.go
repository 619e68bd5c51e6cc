package tcp

import "github.com/Shopify/toxiproxy/v2/toxics"

// Timeout is Toxiproxy's timeout toxic (it embeds it: the same attribute,
// the same Pipe and Cleanup): it drops the data, and closes the connection
// Timeout milliseconds after the last chunk, never when Timeout is 0.
// gameday serves it only to draw its toxicity itself (Toxicity): on a
// connection it spares it passes the data through as gameday's toxics do,
// and its removal leaves that connection open; a connection it has held
// is closed when it is removed, as Toxiproxy's is.
type Timeout struct {
	toxics.TimeoutToxic
	Toxicity
}

// Pipe runs Toxiproxy's timeout on a connection the toxic hits, and
// passes the data through on one it spares.
func (t *Timeout) Pipe(stub *toxics.ToxicStub) {
	k := keptIn(stub)
	if k.spares(&t.Toxicity) {
		PassThrough(stub)
		return
	}
	k.held = true
	t.TimeoutToxic.Pipe(stub)
}

// Cleanup closes a connection the toxic has held (Toxiproxy's Cleanup: its
// data was dropped), and hands on what it kept of one it spared.
func (t *Timeout) Cleanup(stub *toxics.ToxicStub) {
	if keptIn(stub).held {
		t.TimeoutToxic.Cleanup(stub)
		return
	}
	t.Toxicity.Cleanup(stub)
}

var _ toxics.CleanupToxic = (*Timeout)(nil)
