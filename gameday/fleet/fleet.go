// Package fleet sends one sale's load from several processes or machines
// with one verdict (docs/scale.md). The coordinator runs inside "gameday
// run": it owns the faults, the breakers and the books as in any drill, and
// serves the shard protocol over HTTP. Each worker ("gameday worker") is
// given a shard of the plan (load.Shard: arrival i to shard i mod N), asks
// the coordinator for the job, measures its clock against the
// coordinator's, says it is ready, is told the common start instant, sends
// its arrivals and streams every shopper's record back as it ends. The
// coordinator joins the records into the whole sale's report
// (load.Complete) and the drill judges it as today.
//
// The protocol. A worker first proves it knows the run's token, and the
// coordinator that it does, without either sending it (auth.go); every
// later request carries the worker's proof, and every answer the
// coordinator's signature, which the worker checks before it acts:
//
//	GET  /v1/hello?nonce=NW  {"nonce": NC, "proof": ...}, the coordinator's proof
//	GET  /v1/job?shard=K     the Job (K a number, or "any": the first free shard)
//	GET  /v1/clock           {"now": coordinator time, Unix nanoseconds}
//	POST /v1/ready?shard=K   a Ready; answered when every shard is ready,
//	                         with {"start": ...} (or 409 and why not)
//	POST /v1/shoppers?shard=K  JSON lines, one Line each: a shopper, then done
//	GET  /v1/stop?shard=K    {"stop": true} when the shard must stop sending,
//	                         {"stop": false} after Heartbeat: ask again
//
// A shard that dies (its stream ends before its done line, its process
// exits), that is given the start after the start has passed, or that
// cannot reach the system under test fails the run: the load stops
// everywhere, and the drill is inconclusive with the reason.
package fleet

import (
	"errors"
	"time"

	"github.com/gameday-dev/gameday/gameday/load"
	"github.com/gameday-dev/gameday/gameday/runrecord"
	"github.com/gameday-dev/gameday/gameday/system"
)

// Protocol names the protocol's version: a worker of another refuses the
// job.
const Protocol = "gameday-shard/2"

// TokenEnv is the environment variable the run's token travels in: to a
// worker (never on its command line: the job holds the system's variables,
// its admin token among them), and to a coordinator whose workers are
// started elsewhere with the same secret.
const TokenEnv = "GAMEDAY_SHARD_TOKEN"

// ErrShard wraps every failure of a shard: the run cannot be judged whole.
var ErrShard = errors.New("a load shard failed")

// Job is what every worker is given: the system under test as it was
// described (a worker builds its purchase flow from it, as the coordinator
// would), the plan, and the worker's shard of it.
type Job struct {
	Protocol string        `json:"protocol"`
	Shard    int           `json:"shard"`
	Of       int           `json:"of"`
	System   system.Source `json:"system"`
	Plan     load.Plan     `json:"plan"`
}

// Ready is a worker saying it can take part, or why it cannot.
type Ready struct {
	// Offset is the coordinator's clock minus the worker's; RTT the round
	// trip of the reading it came from.
	Offset time.Duration `json:"offset_ns"`
	RTT    time.Duration `json:"rtt_ns"`
	Host   string        `json:"host,omitempty"`
	// Error, when set, is why the worker cannot take part (the target is
	// unreachable, the job is not understood).
	Error string `json:"error,omitempty"`
}

// Line is one line of a worker's stream: a shopper that ended, or, last,
// the shard's end.
type Line struct {
	Shopper *load.Shopper `json:"shopper,omitempty"`
	Done    *Done         `json:"done,omitempty"`
}

// Done ends a shard's stream.
type Done struct {
	// Scheduled, Started and Dropped are the shard's counts (load.Report).
	Scheduled int `json:"scheduled"`
	Started   int `json:"started"`
	Dropped   int `json:"dropped"`
	// Error is why the shard did not send its part; "" when it did (or
	// was told to stop).
	Error string `json:"error,omitempty"`
	// Unmatched are the answers no rule of the system file understood.
	Unmatched []runrecord.Unmatched `json:"unmatched,omitempty"`
	// EmptyKept are the steps that sent a kept value empty.
	EmptyKept []runrecord.EmptyKept `json:"empty_kept,omitempty"`
	// Stalls are the worker's own timer's stalls of 100 ms or more
	// (hostmon), from the sale's start: the evidence that excuses a
	// timing promise over the shoppers it timed. StallsCut counts those
	// beyond the ones kept. At most MaxStalls.
	Stalls    []runrecord.StallSpan `json:"stalls,omitempty"`
	StallsCut int                   `json:"stalls_cut,omitempty"`
}

// start is the coordinator's answer to Ready: the sale's start instant on
// its clock.
type start struct {
	Start int64 `json:"start"`
}
