package prepare

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/gameday-dev/gameday/gameday/env"
	"github.com/gameday-dev/gameday/gameday/faults"
	"github.com/gameday-dev/gameday/gameday/system"
	defaults "github.com/gameday-dev/gameday/internal/checkoutdefaults"
	"github.com/gameday-dev/gameday/scenarios"
)

// Config is what preparing reads of the runner's options (gameday.Options
// says what each means).
type Config struct {
	System        *system.System
	Proxies       map[string]string
	Environment   env.Starter
	Engine        env.Engine
	Journal       *faults.Journal
	Binary        string
	EmbeddedRedis bool
	// Seed overrides the scenario's when not 0; TimeScale is the scale
	// the scenario was shortened by (1: none).
	Seed      int64
	TimeScale float64
}

// Env is what every drive of a drill shares, brought up once by Up: the
// environment and its injector, the system under test as described, and
// the fault journal.
type Env struct {
	Config
	// Base is the scenario the environment was brought up for: its
	// system, environment, checkout, payment, stock and shops are every
	// drive's (SameEnvironment).
	Base        *scenarios.Scenario
	Environment env.Environment
	Inj         *faults.Injector
	Sys         *system.System
	Journal     *faults.Journal
	// Vars are the reference checkout's variables (nil for a described
	// system): a shop's books on a pod are read through them.
	Vars map[string]string
	// Notes are what preparing found, for every drive's record.
	Notes []string
	// drives counts the drives armed.
	drives int
}

// Up brings up the environment and describes the system under test:
// the journal's leftovers removed, the system file read and checked, the
// processes or containers started, the proxies created. dir receives the
// environment's own files.
func (p *Env) Up(ctx context.Context, dir string, progress func(string, ...any)) error {
	p.Journal = p.Config.Journal
	if p.Journal == nil {
		p.Journal = faults.OpenJournal(faults.DefaultJournalPath())
		p.Journal.Engine = p.Engine
	}
	removed, aside, err := p.Journal.Cleanup(ctx)
	if err != nil {
		return fmt.Errorf("remove faults left by an earlier run: %w", err)
	}
	if len(removed) > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("removed %d faults left behind by a runner that was killed", len(removed)))
	}
	for _, e := range aside {
		// Not this drill's business unless it is on the same proxy, which
		// steady state then shows; it must not stop the drill.
		p.Notes = append(p.Notes, fmt.Sprintf("a fault left by killed run %s could not be undone and is set aside: %s: %s (gameday cleanup lists it; -drop %s forgets it)", e.RunID, e, e.SetAside, e.RunID))
	}
	runID := strconv.FormatInt(time.Now().UnixNano(), 36)
	sc := p.Base
	sys := p.System
	if sys == nil && sc.System != "" {
		s, err := system.LoadFile(sc.SystemPath(), nil)
		if err != nil {
			return err
		}
		sys = s
	}
	if sys != nil {
		if p.Config.Environment != nil {
			return fmt.Errorf("system %s is described (%s): gameday drills it as it runs, through its description, so the %s environment given as well cannot apply: leave it out", sys.Name, sys.File, p.Config.Environment.Kind())
		}
		// Refused before anything is started or created on its Toxiproxy.
		if err := CheckScenario(sc, sys); err != nil {
			return err
		}
		progress("gameday: %s: drilling %s (%s)", sc.Name, sys.Name, sys.File)
		e, err := env.StartDescribed(ctx, sys, p.Proxies, sc.RequestAwareTargets(), p.Engine)
		if err != nil {
			return err
		}
		p.Environment, p.Sys = e, sys
		if n := ScaledSystemNote(sys.Name, p.TimeScale); n != "" {
			p.Notes = append(p.Notes, n)
			progress("gameday: %s: warning: %s", sc.Name, n)
		}
	} else {
		st := p.Starter()
		if k := st.Kind(); sc.Environment.Pods > 0 && k != "local" && k != "containers" && k != "compose" {
			return fmt.Errorf("scenario %s asks for %d pods (environment.pods): pods are drilled in the local, containers and compose environments, not in the %s one", sc.Name, sc.Environment.Pods, k)
		}
		if st.Fresh() {
			progress("gameday: %s: starting the %s environment", sc.Name, st.Kind())
		}
		seed := sc.Seed
		if p.Seed != 0 {
			seed = p.Seed
		}
		e, err := st.Start(ctx, env.Spec{Dir: dir, RunID: runID,
			PaymentArgs: PaymentArgs(sc, seed), CheckoutArgs: CheckoutArgs(sc), CatalogArgs: []string{"-seed", strconv.FormatInt(seed, 10)},
			Pods: sc.Environment.Pods, Routes: p.routes(), RequestAware: sc.RequestAwareTargets()})
		if err != nil {
			return err
		}
		p.Environment = e
	}
	// A pause through a system file's own handle (systemd, a command, a
	// pid file) outlives the runner whoever's Toxiproxy it uses: it is
	// journaled before the SIGSTOP.
	env.JournalPauses(p.Environment, faults.PauseJournal(p.Journal, runID))
	if env.OwnsToxiproxy(p.Environment) {
		p.Inj = faults.NewInjector(p.Environment, nil, runID) // its Toxiproxy dies with us
		if p.Sys != nil {
			// A described system's own containers do not.
			p.Inj.JournalContainers(p.Journal)
		}
	} else {
		p.Inj = faults.NewInjector(p.Environment, p.Journal, runID) // its Toxiproxy outlives us
	}
	if p.Sys == nil {
		// The reference checkout, described like any system, at the
		// addresses this environment chose.
		p.Vars = map[string]string{
			"CHECKOUT_URL": p.Environment.CheckoutURL(), "PAYMENT_URL": p.Environment.PaymentURL(), "CATALOG_URL": env.CatalogURL(p.Environment),
			"TOXIPROXY": p.Environment.Toxiproxy().Addr(), "SETTLE_WITHIN": SettleLimit(sc).String(),
		}
		// Unknown to the environment, the token is the runner's own
		// GAMEDAY_ADMIN_TOKEN, if set (the system file's ${} rule).
		if tok := p.Environment.AdminToken(); tok != "" {
			p.Vars[env.AdminTokenVar] = tok
		}
		s, err := system.Reference(p.Vars)
		if err != nil {
			return err
		}
		p.Sys = s
		if env.PodsOf(p.Environment) != nil {
			// The router answers purchases; the pods' books and breakers
			// are each pod's own: the shops' ledgers read the books, the
			// probe each pod's breakers (podAdmins).
			// The catalogue they share stays, for its counter.
			stores := map[string]*system.Store{}
			if c, ok := p.Sys.Stores["catalog"]; ok {
				stores["catalog"] = c
			}
			p.Sys.Admin, p.Sys.Stores, p.Sys.Setup, p.Sys.Books = "", stores, nil, system.Books{}
		}
	}
	for _, n := range p.Environment.Info().Notes {
		progress("gameday: note: %s", n)
	}
	return nil
}

// Close stops the environment.
func (p *Env) Close() error {
	if p.Environment == nil {
		return nil
	}
	err := p.Environment.Close()
	p.Environment = nil
	if err != nil {
		return fmt.Errorf("stopping the environment: %w", err)
	}
	return nil
}

// SettleLimit bounds the wait for the reference checkout's books after
// sc's load (its system file's settle_within): leases expire (the lease
// TTL), the late-claim grace passes (twice the payment timeout), the
// sweeper voids (ten seconds).
func SettleLimit(sc *scenarios.Scenario) time.Duration {
	lease := sc.Checkout.LeaseTTL.D()
	if lease == 0 {
		lease = defaults.LeaseTTL
	}
	pay := sc.Checkout.Payment.Timeout.D()
	if pay == 0 {
		pay = defaults.PaymentTimeout
	}
	return lease + 2*pay + 10*time.Second
}
