package tcp

import "github.com/Shopify/toxiproxy/v2/toxics"

// Types are Toxiproxy's toxic types this package serves in place of
// Toxiproxy's own, sorted. Toxiproxy's reset_peer stays its own: Toxiproxy
// makes a connection's close a reset only when a toxic of its own
// reset_peer type is in the chain as the connection starts.
var Types = []string{"bandwidth", "latency", "limit_data", "noop", "slicer", "slow_close", "timeout"}

// init replaces Toxiproxy's toxics by these, under the same names: a
// process that links this package serves these wherever it runs
// Toxiproxy. Toxiproxy's package registers its own first (it is imported
// by this one, so its init runs before).
func init() {
	toxics.Register("bandwidth", new(Bandwidth))
	toxics.Register("latency", new(Latency))
	toxics.Register("limit_data", new(LimitData))
	toxics.Register("noop", new(Noop))
	toxics.Register("slicer", new(Slicer))
	toxics.Register("slow_close", new(SlowClose))
	toxics.Register("timeout", new(Timeout))
}
