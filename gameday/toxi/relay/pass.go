package relay

import (
	"github.com/Shopify/toxiproxy/v2/toxics"

	"github.com/gameday-dev/gameday/gameday/toxi/tcp"
)

// Every request-aware toxic sits in Toxiproxy's chain as a pass-through
// (the relay behind the proxy does its work) and must never hold the
// chain up: it hands a chunk on with a send that an interrupt cuts short,
// as gameday's versions of Toxiproxy's TCP toxics do (package tcp, which
// says why: Toxiproxy issue #558; a search drew http_lost_response with a
// reset_peer after it on one proxy, and every trial after it failed).

func passThrough(stub *toxics.ToxicStub) { tcp.PassThrough(stub) }

func (t *LostReply) Cleanup(stub *toxics.ToxicStub)        { t.Toxicity.Cleanup(stub) }
func (t *HTTPError) Cleanup(stub *toxics.ToxicStub)        { t.Toxicity.Cleanup(stub) }
func (t *HTTPLostResponse) Cleanup(stub *toxics.ToxicStub) { t.Toxicity.Cleanup(stub) }
func (t *HTTPLatency) Cleanup(stub *toxics.ToxicStub)      { t.Toxicity.Cleanup(stub) }
func (t *HTTPMalformed) Cleanup(stub *toxics.ToxicStub)    { t.Toxicity.Cleanup(stub) }

var (
	_ toxics.CleanupToxic = (*LostReply)(nil)
	_ toxics.CleanupToxic = (*HTTPError)(nil)
	_ toxics.CleanupToxic = (*HTTPLostResponse)(nil)
	_ toxics.CleanupToxic = (*HTTPLatency)(nil)
	_ toxics.CleanupToxic = (*HTTPMalformed)(nil)
)
