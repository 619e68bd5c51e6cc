package drive

import (
	"context"
	"fmt"
	"time"

	"github.com/gameday-dev/gameday/gameday/env"
	"github.com/gameday-dev/gameday/gameday/fleet"
	"github.com/gameday-dev/gameday/gameday/judge"
	"github.com/gameday-dev/gameday/gameday/runrecord"
)

// starvation is the evidence of the machines that measured the run: the
// runner's own stalls (host), and in a sharded run each worker's, as it
// reported them (a worker that reported none excuses nothing); and the
// system's own, where it runs on the runner's host (host.System).
func (d *drill) starvation(host *runrecord.Host, shards []runrecord.Shard) judge.Starvation {
	var st judge.Starvation
	if host != nil {
		st.Runner = stalls(host.StarvedSpans)
		if host.System != nil {
			st.System = stalls(host.System.StarvedSpans)
		}
	}
	if d.Config.Shards != nil {
		st.Shards = make([][]judge.Stall, d.Config.Shards.N)
		for _, sh := range shards {
			if sh.Index >= 0 && sh.Index < len(st.Shards) {
				st.Shards[sh.Index] = stalls(sh.StarvedSpans)
			}
		}
	}
	return st
}

func stalls(spans []runrecord.StallSpan) []judge.Stall {
	out := make([]judge.Stall, 0, len(spans))
	for _, sp := range spans {
		out = append(out, judge.Stall{From: time.Duration(sp.FromMS) * time.Millisecond, To: time.Duration(sp.ToMS) * time.Millisecond,
			Waited: time.Duration(sp.WaitedMS) * time.Millisecond})
	}
	return out
}

// joinShards starts the coordinator of the load's workers (and, unless
// they are remote, the workers) and waits until every one is ready. stop
// ends the workers and the coordinator. When they do not all join, the
// workers are stopped and what each reported is returned with the error.
func (d *drill) joinShards(ctx context.Context) (*fleet.Coordinator, func(), []runrecord.Shard, error) {
	so := d.Config.Shards
	listen := so.Listen
	if listen == "" {
		listen = "127.0.0.1:0"
	}
	if len(d.Scenario.Load.Streams) > 0 {
		// A worker is sent the purchase flow only (FlowSource).
		return nil, nil, nil, fmt.Errorf("%s: load.streams are sent by one process: workers carry the purchase only; drill it without shards", d.Scenario.File)
	}
	if so.Remote && so.Token == "" {
		return nil, nil, nil, fmt.Errorf("remote workers need the run's token (%s) given to them and to the coordinator", fleet.TokenEnv)
	}
	// The workers are sent the purchase flow and its values only: not the
	// books' DSNs, the admin token or anything else of the system file.
	flow, err := d.Sys.FlowSource()
	if err != nil {
		return nil, nil, nil, err
	}
	job := fleet.Job{Of: so.N, System: flow, Plan: d.plan()}
	c, err := fleet.Listen(listen, job, so.Token)
	if err != nil {
		return nil, nil, nil, err
	}
	var local *fleet.Local
	stop := func() {
		if local != nil {
			local.Stop()
		}
		_ = c.Close()
	}
	if so.Announce != nil {
		so.Announce(c.URL())
	}
	if so.Remote {
		d.progress("gameday: %s: waiting for %d workers to call in at %s", d.Scenario.Name, so.N, c.URL())
	} else {
		bin, err := env.ResolveBinary(d.Config.Binary)
		if err != nil {
			stop()
			return nil, nil, nil, err
		}
		d.progress("gameday: %s: starting %d local load workers", d.Scenario.Name, so.N)
		if local, err = fleet.StartLocal(c, bin, d.Dir); err != nil {
			stop()
			return nil, nil, nil, err
		}
	}
	if err := c.Join(ctx, so.JoinWithin); err != nil {
		joined := c.Shards()
		stop()
		return nil, nil, joined, err
	}
	return c, stop, nil, nil
}
