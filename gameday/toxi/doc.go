// Package toxi runs Toxiproxy embedded in a gameday process and talks to any
// Toxiproxy server, embedded or external, through its standard HTTP API.
//
// The embedded server is the upstream github.com/Shopify/toxiproxy/v2 proxy
// collection behind the same routes as toxiproxy-server, served on a listener
// that gameday chooses (loopback by default), so toxiproxy-cli works against
// it. Its API has no authentication: anyone who reaches it can relay traffic
// anywhere, which is why it binds to loopback unless told otherwise.
//
// The client differs from the upstream client in one way that matters during a
// drill: every call carries a context and a deadline (DefaultCallTimeout when
// the context has none). Removing a toxic under heavy traffic has been reported
// to hang Toxiproxy's API, and a runner must never hang while removing faults.
package toxi
