package gameday

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gameday-dev/gameday/gameday/env"
	"github.com/gameday-dev/gameday/gameday/faults"
	"github.com/gameday-dev/gameday/gameday/system"
	"github.com/gameday-dev/gameday/internal/noredirect"
	"github.com/gameday-dev/gameday/internal/redact"
	"github.com/gameday-dev/gameday/scenarios"
)

// prepared is what every drive of a drill shares, brought up once by
// prepare: the environment and its injector, the system under test as
// described, and the fault journal.
type prepared struct {
	o Options
	// base is the scenario the environment was brought up for: its
	// system, environment, checkout, payment, stock and shops are every
	// drive's (sameEnvironment).
	base    *scenarios.Scenario
	env     env.Environment
	inj     *faults.Injector
	sys     *system.System
	journal *faults.Journal
	// vars are the reference checkout's variables (nil for a described
	// system): a shop's books on a pod are read through them.
	vars map[string]string
	// notes are what preparing found, for every drive's record.
	notes []string
	// drives counts the drives begun.
	drives int
}

// prepare brings up the environment and describes the system under test:
// the journal's leftovers removed, the system file read and checked, the
// processes or containers started, the proxies created. dir receives the
// environment's own files.
func (p *prepared) prepare(ctx context.Context, dir string, progress func(string, ...any)) error {
	p.journal = p.o.Journal
	if p.journal == nil {
		p.journal = faults.OpenJournal(faults.DefaultJournalPath())
		p.journal.Engine = p.o.Engine
	}
	removed, aside, err := p.journal.Cleanup(ctx)
	if err != nil {
		return fmt.Errorf("remove faults left by an earlier run: %w", err)
	}
	if len(removed) > 0 {
		p.notes = append(p.notes, fmt.Sprintf("removed %d faults left behind by a runner that was killed", len(removed)))
	}
	for _, e := range aside {
		// Not this drill's business unless it is on the same proxy, which
		// steady state then shows; it must not stop the drill.
		p.notes = append(p.notes, fmt.Sprintf("a fault left by killed run %s could not be undone and is set aside: %s: %s (gameday cleanup lists it; -drop %s forgets it)", e.RunID, e, e.SetAside, e.RunID))
	}
	runID := strconv.FormatInt(time.Now().UnixNano(), 36)
	sc := p.base
	sys := p.o.System
	if sys == nil && sc.System != "" {
		s, err := system.LoadFile(sc.SystemPath(), nil)
		if err != nil {
			return err
		}
		sys = s
	}
	if sys != nil {
		if p.o.Environment != nil {
			return fmt.Errorf("system %s is described (%s): gameday drills it as it runs, through its description, so the %s environment given as well cannot apply: leave it out", sys.Name, sys.File, p.o.Environment.Kind())
		}
		// Refused before anything is started or created on its Toxiproxy.
		if err := CheckScenario(sc, sys); err != nil {
			return err
		}
		progress("gameday: %s: drilling %s (%s)", sc.Name, sys.Name, sys.File)
		e, err := env.StartDescribed(ctx, sys, p.o.Proxies, sc.RequestAwareTargets(), p.o.Engine)
		if err != nil {
			return err
		}
		p.env, p.sys = e, sys
		if n := scaledSystemNote(sys.Name, p.o.TimeScale); n != "" {
			p.notes = append(p.notes, n)
			progress("gameday: %s: warning: %s", sc.Name, n)
		}
	} else {
		st := p.starter()
		if k := st.Kind(); sc.Environment.Pods > 0 && k != "local" && k != "containers" && k != "compose" {
			return fmt.Errorf("scenario %s asks for %d pods (environment.pods): pods are drilled in the local, containers and compose environments, not in the %s one", sc.Name, sc.Environment.Pods, k)
		}
		if st.Fresh() {
			progress("gameday: %s: starting the %s environment", sc.Name, st.Kind())
		}
		seed := sc.Seed
		if p.o.Seed != 0 {
			seed = p.o.Seed
		}
		e, err := st.Start(ctx, env.Spec{Dir: dir, RunID: runID,
			PaymentArgs: paymentArgs(sc, seed), CheckoutArgs: checkoutArgs(sc),
			Pods: sc.Environment.Pods, Routes: p.routes(), RequestAware: sc.RequestAwareTargets()})
		if err != nil {
			return err
		}
		p.env = e
	}
	// A pause through a system file's own handle (systemd, a command, a
	// pid file) outlives the runner whoever's Toxiproxy it uses: it is
	// journaled before the SIGSTOP.
	env.JournalPauses(p.env, faults.PauseJournal(p.journal, runID))
	if env.OwnsToxiproxy(p.env) {
		p.inj = faults.NewInjector(p.env, nil, runID) // its Toxiproxy dies with us
		if p.sys != nil {
			// A described system's own containers do not.
			p.inj.JournalContainers(p.journal)
		}
	} else {
		p.inj = faults.NewInjector(p.env, p.journal, runID) // its Toxiproxy outlives us
	}
	if p.sys == nil {
		// The reference checkout, described like any system, at the
		// addresses this environment chose.
		p.vars = map[string]string{
			"CHECKOUT_URL": p.env.CheckoutURL(), "PAYMENT_URL": p.env.PaymentURL(),
			"TOXIPROXY": p.env.Toxiproxy().Addr(), "SETTLE_WITHIN": SettleLimit(sc).String(),
		}
		// Unknown to the environment, the token is the runner's own
		// GAMEDAY_ADMIN_TOKEN, if set (the system file's ${} rule).
		if tok := p.env.AdminToken(); tok != "" {
			p.vars[env.AdminTokenVar] = tok
		}
		s, err := system.Reference(p.vars)
		if err != nil {
			return err
		}
		p.sys = s
		if env.PodsOf(p.env) != nil {
			// The router answers purchases; the pods' books and breakers
			// are each pod's own: the shops' ledgers read the books, the
			// probe each pod's breakers (podAdmins).
			p.sys.Admin, p.sys.Stores, p.sys.Setup, p.sys.Books = "", nil, nil, system.Books{}
		}
	}
	for _, n := range p.env.Info().Notes {
		progress("gameday: note: %s", n)
	}
	return nil
}

// close stops the environment.
func (p *prepared) close() error {
	if p.env == nil {
		return nil
	}
	err := p.env.Close()
	p.env = nil
	if err != nil {
		return fmt.Errorf("stopping the environment: %w", err)
	}
	return nil
}

// arm readies one drive of the prepared environment: the scenario's faults
// checked against it, its proxies found clean, the checkout ids' prefix
// chosen, the checkout reached, the books reached, set up and read before
// the load. Nothing is sent to the system before all of that worked. It
// returns what the record should say of it (the notes), whether or not it
// worked.
func (d *drill) arm(ctx context.Context) (notes []string, err error) {
	d.drives++
	if d.o.System != nil || d.base.System != "" {
		if err := CheckScenario(d.sc, d.sys); err != nil {
			return notes, err
		}
	}
	if err := d.checkTargets(); err != nil {
		return notes, err
	}
	if err := d.checkRequestAware(ctx); err != nil {
		return notes, err
	}
	// The drill starts on clean proxies: what a dead runner left is
	// removed by the journal's rules; any other fault refuses the drill,
	// changing nothing, rather than measure it as the system's.
	cleaned, err := faults.Preflight(ctx, d.env, d.journal, d.proxies())
	if err != nil {
		return notes, err
	}
	if len(cleaned) > 0 {
		notes = append(notes, fmt.Sprintf("removed %d faults a killed runner had left on the proxies this drill uses", len(cleaned)))
	}
	if err := errors.Join(needsPrometheus(d.sc, d.sys)...); err != nil {
		return notes, err
	}
	if strings.HasPrefix(d.env.Info().Redis, "embedded") {
		for _, f := range d.sc.Faults {
			if f.Process != "" && f.Target != env.Payment {
				return notes, fmt.Errorf("fault %s: a process fault on %s needs a real redis-server (the embedded one has no process, and comes back empty); install redis-server", f.Name, f.Target)
			}
		}
	}
	d.prefix = d.idPrefix()
	if err := reachCheckout(ctx, d.sys); err != nil {
		return notes, err
	}
	if d.ledgers, err = d.shopLedgers(d.vars); err != nil {
		return notes, err
	}
	for _, lg := range d.ledgers {
		if err := lg.open(ctx, d.prefix); err != nil {
			return notes, err
		}
	}
	if admin := newAdminAPI(d.sys); admin.ok() {
		// The most checkouts in progress at once is this drill's, not the
		// checkout's since it started.
		_ = resetAdmissionMax(ctx, admin)
	}
	return notes, nil
}

// absPath is p made absolute, so that two paths to one file compare equal;
// "" stays "".
func absPath(p string) string {
	if p == "" {
		return ""
	}
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// sameEnvironment refuses a scenario to drive in an environment prepared
// for base when it asks for another one: another system, environment,
// checkout, payment stand-in, stock or shops. Moves are refused too: the
// routes a move leaves would be the next drive's.
func sameEnvironment(base, sc *scenarios.Scenario) error {
	for _, c := range []struct {
		field string
		a, b  any
	}{
		{"system", absPath(base.SystemPath()), absPath(sc.SystemPath())},
		{"environment", base.Environment, sc.Environment},
		{"checkout", base.Checkout, sc.Checkout},
		{"payment", base.Payment, sc.Payment},
		{"stock", base.Stock, sc.Stock},
		{"shops", base.Shops, sc.Shops},
	} {
		if !reflect.DeepEqual(c.a, c.b) {
			return &scenarios.Error{File: sc.File, Line: sc.Line(c.field), Field: c.field,
				Msg: fmt.Sprintf("differs from %s's, for which the environment was prepared: prepare one for this scenario", base.Name)}
		}
	}
	if len(sc.Moves) > 0 {
		return &scenarios.Error{File: sc.File, Line: sc.Line("moves"), Field: "moves",
			Msg: "a drive of a prepared environment moves no shop (the routes a move leaves would be the next drive's): run it as a drill of its own"}
	}
	return nil
}

// CheckScenario checks a scenario against the described system it drills,
// with nothing contacted (gameday validate does it too): every fault's
// target is one of the system's dependencies, a process fault's declares a
// process handle that can carry it out, an HTTP toxic's speaks HTTP (or
// does not say), and PromQL promises and halts have a Prometheus server.
// The errors name the scenario's file, line and field.
func CheckScenario(sc *scenarios.Scenario, sys *system.System) error {
	var errs []error
	errs = append(errs, checkShops(sc, sys)...)
	deps := strings.Join(slices.Sorted(maps.Keys(sys.Dependencies)), ", ")
	for i, f := range sc.Faults {
		field := fmt.Sprintf("faults[%d].target", i)
		dep, ok := sys.Dependencies[f.Target]
		switch {
		case !ok:
			errs = append(errs, &scenarios.Error{File: sc.File, Line: sc.Line(field), Field: field,
				Msg: fmt.Sprintf("%q is not a dependency of %s (%s: %s)", f.Target, sys.Name, sys.File, deps)})
		case f.Process != "" && dep.Process == nil:
			errs = append(errs, &scenarios.Error{File: sc.File, Line: sc.Line(field), Field: field,
				Msg: fmt.Sprintf("a process fault on %s needs a process to act on: %s declares none (dependencies.%s.process)", f.Target, sys.File, f.Target)})
		case f.Toxic != nil && scenarios.ReadsHTTP(f.Toxic.Type) && !dep.SpeaksHTTP():
			tf := fmt.Sprintf("faults[%d].toxic.type", i)
			errs = append(errs, &scenarios.Error{File: sc.File, Line: sc.Line(tf), Field: tf,
				Msg: fmt.Sprintf("%s reads HTTP requests, and %s speaks %s (dependencies.%s.protocol in %s): it would act on none; a TCP toxic or lost_reply acts on any protocol", f.Toxic.Type, f.Target, dep.Protocol, f.Target, sys.File)})
		case f.Process != "" && !dep.Process.Can(f.Process):
			pf := fmt.Sprintf("faults[%d].process", i)
			errs = append(errs, &scenarios.Error{File: sc.File, Line: sc.Line(pf), Field: pf,
				Msg: fmt.Sprintf("%s's process handle in %s gives no way to %s it (a command handle needs %s)", f.Target, sys.File, f.Process, processNeeds(f.Process))})
		}
	}
	return errors.Join(append(errs, needsPrometheus(sc, sys)...)...)
}

// processNeeds names the programs a command process handle needs for a
// process fault's action.
func processNeeds(action string) string {
	if action == "pause" {
		return "pause and resume"
	}
	return "kill and start"
}

// needsPrometheus refuses PromQL promises and halts on a system that names
// no Prometheus server.
func needsPrometheus(sc *scenarios.Scenario, sys *system.System) []error {
	if sys.Prometheus != "" {
		return nil
	}
	var errs []error
	for i, e := range sc.Expect {
		if e.Metric != nil {
			field := fmt.Sprintf("expect[%d].metric", i)
			errs = append(errs, &scenarios.Error{File: sc.File, Line: sc.Line(field), Field: field,
				Msg: fmt.Sprintf("a PromQL promise needs a Prometheus server: %s names none (prometheus:)", sys.File)})
		}
	}
	if a := sc.Abort; a != nil && a.Metric != nil {
		errs = append(errs, &scenarios.Error{File: sc.File, Line: sc.Line("abort.metric"), Field: "abort.metric",
			Msg: fmt.Sprintf("a PromQL halt condition needs a Prometheus server: %s names none (prometheus:)", sys.File)})
	}
	return errs
}

// proxies are the names of the proxies the drill uses: every dependency's
// and every fault target's that has one.
func (d *drill) proxies() []string {
	seen := map[string]bool{}
	var out []string
	add := func(dep string) {
		if p, ok := d.env.ProxyName(dep); ok && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, dep := range slices.Sorted(maps.Keys(d.sys.Dependencies)) {
		add(dep)
	}
	for _, f := range d.sc.Faults {
		add(f.Target)
	}
	return out
}

// checkTargets refuses a fault on a dependency the system does not have,
// or that it cannot act on as the fault asks.
func (d *drill) checkTargets() error {
	for i, f := range d.sc.Faults {
		field := fmt.Sprintf("faults[%d].target", i)
		if f.Process != "" {
			if _, ok := d.env.Process(f.Target); ok {
				continue
			}
			if _, ok := d.sys.Dependencies[f.Target]; ok {
				return &scenarios.Error{File: d.sc.File, Line: d.sc.Line(field), Field: field,
					Msg: fmt.Sprintf("a process fault on %s needs a process to act on: %s declares none (dependencies.%s.process)", f.Target, d.sys.File, f.Target)}
			}
		} else if _, ok := d.env.ProxyName(f.Target); ok {
			continue
		} else if _, ok := d.sys.Dependencies[f.Target]; ok {
			return &scenarios.Error{File: d.sc.File, Line: d.sc.Line(field), Field: field,
				Msg: fmt.Sprintf("no Toxiproxy proxy is known in front of %s (name it: environment.proxies, -proxy %s=NAME)", f.Target, f.Target)}
		}
		return &scenarios.Error{File: d.sc.File, Line: d.sc.Line(field), Field: field,
			Msg: fmt.Sprintf("%q is not a dependency of %s (%s: %s)", f.Target, d.sys.Name, d.sys.File, strings.Join(slices.Sorted(maps.Keys(d.sys.Dependencies)), ", "))}
	}
	return nil
}

// checkRequestAware refuses, before anything is sent, a drill whose
// request-aware toxic (lost_reply) the Toxiproxy in front of its target
// cannot serve: a stock Toxiproxy, whose toxics are TCP-level only, or a
// proxy of gameday's without a relay behind it (one created before the
// drill, by someone who did not ask for one).
func (d *drill) checkRequestAware(ctx context.Context) error {
	if len(d.sc.RequestAwareTargets()) == 0 {
		return nil
	}
	c := d.env.Toxiproxy()
	caps, stock, err := c.Served(ctx)
	if err != nil {
		return fmt.Errorf("toxiproxy at %s: %w", redact.URL(c.Addr()), err)
	}
	for i, f := range d.sc.Faults {
		if f.Toxic == nil || !scenarios.RequestAware(f.Toxic.Type) {
			continue
		}
		field := fmt.Sprintf("faults[%d].toxic.type", i)
		fail := func(msg string) error {
			return &scenarios.Error{File: d.sc.File, Line: d.sc.Line(field), Field: field, Msg: msg}
		}
		if stock {
			return fail(fmt.Sprintf("%s is served by gameday's Toxiproxy only, and the one at %s is not gameday's (a stock Toxiproxy's toxics are TCP-level): run gameday serve toxiproxy -request-aware in its place, or name no toxiproxy in the system file for gameday to start its own (docs/faults.md)", f.Toxic.Type, redact.URL(c.Addr())))
		}
		if !slices.Contains(caps.Toxics, f.Toxic.Type) {
			return fail(fmt.Sprintf("the Toxiproxy at %s is gameday's but does not serve %s (it serves %s): run this version of gameday serve toxiproxy there", redact.URL(c.Addr()), f.Toxic.Type, strings.Join(caps.RequestAware, ", ")))
		}
		proxy, _ := d.env.ProxyName(f.Target)
		if !slices.Contains(caps.Relayed, proxy) {
			return fail(fmt.Sprintf("%s needs a relay behind proxy %s (in front of %s), and it has none: it was created without \"request_aware\": true; run gameday serve toxiproxy -request-aware, or delete the proxy for the drill to create it (docs/faults.md)", f.Toxic.Type, proxy, f.Target))
		}
	}
	return nil
}

// reachCheckout asks the checkout's base_url once (any HTTP answer will
// do) before anything is set up or sent: a checkout that is not there
// would otherwise take the whole load as errors and fail the drill, as if
// it had broken a promise, when the drill could not be carried out.
func reachCheckout(ctx context.Context, sys *system.System) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, sys.BaseURL, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", sys.Where("base_url"), err)
	}
	// Any answer will do, a redirect included (not followed).
	resp, err := noredirect.Client(0).Do(req)
	if err != nil {
		return fmt.Errorf("the checkout does not answer at %s (%s): %w; nothing was set up or sent", redact.URL(sys.BaseURL), sys.Where("base_url"), redact.Error(err))
	}
	resp.Body.Close()
	return nil
}

// idPrefix starts every checkout id. In the local environment, which
// starts empty, it is the seed's, so that the same seed gives the same ids
// and therefore the same payment latencies and declines (the stand-in draws
// them from the seed and the key). Against an external service it also
// carries the time, so a run never meets the orders of an earlier one.
func (d *drill) idPrefix() string {
	p := "s" + strconv.FormatInt(d.seed, 36)
	if !d.fresh() {
		p += "t" + strconv.FormatInt(time.Now().Unix(), 36)
	}
	// A prepared environment driven again never meets an earlier drive's
	// ids, whatever the seeds.
	if d.drives > 1 {
		p += "d" + strconv.Itoa(d.drives)
	}
	return p
}
