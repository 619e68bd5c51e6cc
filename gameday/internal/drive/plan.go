package drive

import (
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"time"

	"github.com/gameday-dev/gameday/gameday/faults"
	"github.com/gameday-dev/gameday/gameday/load"
	"github.com/gameday-dev/gameday/gameday/runrecord"
	"github.com/gameday-dev/gameday/gameday/toxi"
	"github.com/gameday-dev/gameday/scenarios"
)

func (d *drill) plan() load.Plan {
	l := d.Scenario.Load
	p := load.Plan{
		Patience: l.Patience.D(), MaxRetries: l.MaxRetries, MaxShoppers: d.Scenario.ShopperPool(),
		Seed: d.Seed, IDPrefix: d.Prefix,
	}
	p.Stages = loadStages(l.Stages)
	for _, sh := range d.Scenario.Shops {
		p.Shops = append(p.Shops, load.ShopLoad{Name: sh.Name, Stages: loadStages(sh.Stages)})
	}
	for _, st := range l.Streams {
		ls := load.Stream{Name: st.Name, Stages: loadStages(st.Stages), Patience: st.Patience.D(), MaxRetries: *st.MaxRetries, Recorded: st.Recorded}
		for _, name := range slices.Sorted(maps.Keys(st.Mix)) {
			j := name
			if j == scenarios.PurchaseJourney {
				j = ""
			}
			ls.Mix = append(ls.Mix, load.Share{Journey: j, Weight: st.Mix[name]})
		}
		p.Streams = append(p.Streams, ls)
	}
	if len(l.Streams) > 0 {
		p.Journeys = d.Sys.LoadJourneys(d.Scenario.TimeScale())
	}
	if l.RetryJitter != nil {
		p.RetryJitter = *l.RetryJitter
	}
	if l.SessionShare != nil {
		p.SessionShare = *l.SessionShare
	}
	return p
}

func loadStages(sts []scenarios.Stage) []load.Stage {
	var out []load.Stage
	for _, st := range sts {
		out = append(out, load.Stage{Duration: st.Duration.D(), Target: st.Target, Hold: st.Hold})
	}
	return out
}

// rebase moves every time of the report to count from start, the zero of
// the fault timeline and the breaker probe (the load starts its own clock a
// moment later, once its shopper pool is ready).
func rebase(r *load.Report, start time.Time) {
	off := r.Start.Sub(start)
	if off == 0 {
		return
	}
	for _, s := range slices.Concat(r.Shoppers, r.Visits) {
		s.Scheduled += off
		s.Deadline += off
		if s.Started != 0 || s.Outcome != "" {
			s.Started += off
		}
		if s.Outcome != "" {
			s.Finished += off
		}
		for i := range s.Attempts {
			s.Attempts[i].At += off
		}
	}
	r.Start = start
}

// toFault turns a scenario fault into one the injector can apply. A
// request-aware toxic with no seed of its own draws from the run's seed
// and its fault's name: the same drill hits the same requests, where the
// system sends them in the same order.
func toFault(f scenarios.Fault, seed int64) (faults.Fault, error) {
	out := faults.Fault{Name: f.Name, Target: f.Target, Down: f.Down, Process: f.Process, Cache: f.Cache}
	if f.Toxic != nil {
		attrs, err := f.Toxic.APIAttributes()
		if err != nil {
			return out, err
		}
		if _, given := attrs["seed"]; !given && scenarios.RequestAware(f.Toxic.Type) {
			h := fnv.New64a()
			fmt.Fprintf(h, "%d/%s", seed, f.Name)
			attrs["seed"] = h.Sum64() >> 1 // a whole number JSON and YAML readers keep exact in int64
		}
		t := toxi.Toxic{Type: f.Toxic.Type, Stream: f.Toxic.Stream, Toxicity: 1, Attributes: attrs}
		if f.Toxic.Toxicity != nil {
			t.Toxicity = *f.Toxic.Toxicity
		}
		if t.Stream == "" {
			t.Stream = "downstream"
		}
		out.Toxic = &t
	}
	return out, nil
}

// idleFaults are the request-aware faults that were in place and cannot
// be said to have acted (runrecord.FaultRecord.Idle), each with why.
func idleFaults(faults []runrecord.FaultRecord) []string {
	var out []string
	for _, f := range faults {
		if why := f.Idle(); why != "" {
			out = append(out, fmt.Sprintf("%s on %s %s", f.Name, f.Target, why))
		}
	}
	return out
}
