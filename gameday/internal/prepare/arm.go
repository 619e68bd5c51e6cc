package prepare

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gameday-dev/gameday/gameday/env"
	"github.com/gameday-dev/gameday/gameday/faults"
	"github.com/gameday-dev/gameday/gameday/internal/adminapi"
	"github.com/gameday-dev/gameday/gameday/internal/ledger"
	"github.com/gameday-dev/gameday/scenarios"
)

// Armed is one drive made ready: the prefix of its checkout ids, its
// ledgers opened (each to be closed, ledger.Close, whether or not arming
// worked), and what the record should say of arming.
type Armed struct {
	Prefix  string
	Ledgers []*ledger.Ledger
	Notes   []string
}

// Arm readies one drive of sc (seeded by seed) in the prepared
// environment: the scenario's faults checked against it, its proxies found
// clean, the checkout ids' prefix chosen, the checkout reached, the books
// reached, set up and read before the load. Nothing is sent to the system
// before all of that worked. What it did is returned whether or not it
// worked.
func (p *Env) Arm(ctx context.Context, sc *scenarios.Scenario, seed int64) (a Armed, err error) {
	p.drives++
	d := armer{Env: p, sc: sc, seed: seed}
	if p.Described() {
		if err := CheckScenario(sc, p.Sys); err != nil {
			return a, err
		}
	} else if err := errors.Join(checkCaches(sc, p.Sys)...); err != nil {
		return a, err
	}
	if err := d.checkTargets(); err != nil {
		return a, err
	}
	if err := d.checkRequestAware(ctx); err != nil {
		return a, err
	}
	// The drill starts on clean proxies: what a dead runner left is
	// removed by the journal's rules; any other fault refuses the drill,
	// changing nothing, rather than measure it as the system's.
	cleaned, err := faults.Preflight(ctx, p.Environment, p.Journal, d.proxies())
	if err != nil {
		return a, err
	}
	if len(cleaned) > 0 {
		a.Notes = append(a.Notes, fmt.Sprintf("removed %d faults a killed runner had left on the proxies this drill uses", len(cleaned)))
	}
	if err := errors.Join(needsPrometheus(sc, p.Sys)...); err != nil {
		return a, err
	}
	if strings.HasPrefix(p.Environment.Info().Redis, "embedded") {
		for _, f := range sc.Faults {
			if f.Process != "" && f.Target != env.Payment {
				return a, fmt.Errorf("fault %s: a process fault on %s needs a real redis-server (the embedded one has no process, and comes back empty); install redis-server", f.Name, f.Target)
			}
		}
	}
	a.Prefix = d.idPrefix()
	if err := reachCheckout(ctx, p.Sys); err != nil {
		return a, err
	}
	if a.Ledgers, err = ledger.Of(sc, p.Sys, p.Environment, p.Vars); err != nil {
		return a, err
	}
	for _, lg := range a.Ledgers {
		if err := lg.Open(ctx, a.Prefix); err != nil {
			return a, err
		}
	}
	if admin := adminapi.New(p.Sys); admin.OK() {
		// The most checkouts in progress at once is this drill's, not the
		// checkout's since it started.
		_ = adminapi.ResetAdmissionMax(ctx, admin)
	}
	return a, nil
}

// armer is one drive being armed: the prepared environment and the
// scenario driven.
type armer struct {
	*Env
	sc   *scenarios.Scenario
	seed int64
}

// idPrefix starts every checkout id. In the local environment, which
// starts empty, it is the seed's, so that the same seed gives the same ids
// and therefore the same payment latencies and declines (the stand-in draws
// them from the seed and the key). Against an external service it also
// carries the time, so a run never meets the orders of an earlier one.
func (d armer) idPrefix() string {
	p := "s" + strconv.FormatInt(d.seed, 36)
	if !d.Fresh() {
		p += "t" + strconv.FormatInt(time.Now().Unix(), 36)
	}
	// A prepared environment driven again never meets an earlier drive's
	// ids, whatever the seeds.
	if d.drives > 1 {
		p += "d" + strconv.Itoa(d.drives)
	}
	return p
}
