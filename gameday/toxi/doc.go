// Package toxi runs Toxiproxy embedded in a gameday process and talks to any
// Toxiproxy server, embedded or external, through its standard HTTP API.
//
// The embedded server is the upstream github.com/Shopify/toxiproxy/v2 proxy
// collection behind the same routes as toxiproxy-server, served on a listener
// that gameday chooses (loopback by default), so toxiproxy-cli works against
// it. Its API has no authentication: anyone who reaches it can relay traffic
// anywhere, which is why it binds to loopback unless told otherwise. It
// serves Toxiproxy's toxics, those that hand data on and timeout in
// gameday's version (package tcp: a removal never waits on them for ever,
// and each draws its toxicity itself, while the API shows the toxicity a
// client set: toxicity.go), and gameday's request-aware toxics (package
// relay). Every proxy's chains start with a pass-through of gameday's
// that the API hides (heads.go), so that adding a toxic never waits on
// the pass-through Toxiproxy starts each chain with.
//
// The client differs from the upstream client in one way that matters during a
// drill: every call carries a context and a deadline (DefaultCallTimeout when
// the context has none). Removing a toxic can hang a stock Toxiproxy's API
// (Toxiproxy issue #558), and a runner must never hang while removing
// faults: a call that gets no answer is an error naming the Toxiproxy.
package toxi
