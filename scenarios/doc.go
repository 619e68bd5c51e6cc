// Package scenarios is the drill format of gameday: a strict YAML scenario
// file, its defaults and validation, and the catalogue of built-in
// scenarios embedded in the binary.
//
// # The format
//
// A scenario is one YAML mapping; [Scenario] and the types it holds list
// every field with its yaml name, and their comments give each default and
// bound. A short one:
//
//	name: payment-latency            # lower-case words joined by '-'
//	matrix: {dependency: payment, failure: latency}
//	checkout:
//	  payment: {timeout: 300ms, probe_timeout: 300ms, open_for: 3s}
//	stock: 2000
//	load:
//	  stages:                        # ramps, like k6's ramping-arrival-rate
//	    - {duration: 5s, target: 30} # 0 -> 30 arrivals/s
//	    - {duration: 30s, target: 30}
//	  patience: 8s
//	  max_retries: 3
//	faults:
//	  - name: slow-provider
//	    target: payment              # payment, inventory or sessions
//	    at: 10s
//	    for: 10s
//	    toxic: {type: latency, attributes: {latency: 1s}}
//	expect:
//	  - breaker_opens: {dependency: payment, within: 2s}
//	  - latency: {window: during, percentile: 95, below: 500ms, outcomes: [unavailable]}
//
// # Strictness
//
// [Parse] and [LoadFile] refuse input larger than [MaxSize], more than one
// YAML document, anchors and aliases (so nothing is expanded), unknown and
// repeated keys, values of the wrong type, and durations that are bare
// numbers or negative: durations are strings such as "250ms" or "2s",
// toxic attributes included (Toxiproxy's own API takes milliseconds; this
// format does not). Every problem is an [*Error] naming the file, line and
// field path, as in
//
//	payment-latency.yaml:14: faults[0].for: "2" is not a duration (write "2s")
//
// Decoding reports every problem it meets with keys and types; validation
// reports every problem with values, at most 20 in all.
//
// # Decisions
//
//   - Defaults are written into the parsed scenario ([Scenario.SetDefaults]),
//     including the reference checkout's own, so that a run record shows what
//     a drill ran with and [Scenario.Scaled] can scale them.
//   - An expectation's window defaults to "during" when the scenario has a
//     fault and to "all" when it has none; a window that could hold nothing
//     ("after" a fault that never ends) is an error rather than a promise
//     that holds vacuously.
//   - A process fault's for is how long it lasts: "kill" and "pause" end by
//     starting or resuming the process; "restart" kills and starts it at once
//     and needs a for, the least length of the window its promises look at
//     (it ends later when the process takes longer to answer again).
//   - Time scaling shortens the timeline (stages, fault times, patience,
//     retry_after, lease_ttl, open_for, the abort guard) and the stock with
//     it, but no bound on speed: see [Scenario.Scaled].
//
// # The catalogue
//
// [Catalogue] and [Lookup] serve the built-in scenarios of catalog/, each a
// 30-35 s drill at about 30-40 arrivals per second on loopback, named after
// its file. "gameday list" shows them; "gameday validate" checks files.
package scenarios
