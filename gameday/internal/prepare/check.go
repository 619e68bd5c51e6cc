package prepare

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/gameday-dev/gameday/gameday/env"
	"github.com/gameday-dev/gameday/gameday/internal/ledger"
	"github.com/gameday-dev/gameday/gameday/system"
	"github.com/gameday-dev/gameday/internal/noredirect"
	"github.com/gameday-dev/gameday/internal/pathutil"
	"github.com/gameday-dev/gameday/internal/redact"
	"github.com/gameday-dev/gameday/scenarios"
)

// SameEnvironment refuses a scenario to drive in an environment prepared
// for base when it asks for another one: another system, environment,
// checkout, payment stand-in, stock or shops. Moves are refused too: the
// routes a move leaves would be the next drive's.
func SameEnvironment(base, sc *scenarios.Scenario) error {
	for _, c := range []struct {
		field string
		a, b  any
	}{
		{"system", pathutil.Abs(base.SystemPath()), pathutil.Abs(sc.SystemPath())},
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
	errs = append(errs, ledger.CheckShops(sc, sys)...)
	deps := strings.Join(slices.Sorted(maps.Keys(sys.Dependencies)), ", ")
	for i, f := range sc.Faults {
		field := fmt.Sprintf("faults[%d].target", i)
		dep, ok := sys.Dependencies[f.Target]
		switch {
		case !ok:
			errs = append(errs, &scenarios.Error{File: sc.File, Line: sc.Line(field), Field: field,
				Msg: fmt.Sprintf("%q is not a dependency of %s (%s: %s)", f.Target, sys.Name, sys.File, deps)})
		case f.Process == "" && !dep.Proxied():
			errs = append(errs, &scenarios.Error{File: sc.File, Line: sc.Line(field), Field: field,
				Msg: fmt.Sprintf("%s is a process alone (proxy: none in %s): only a process fault (kill, pause, restart) acts on it", f.Target, sys.File)})
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
	errs = append(errs, checkStreams(sc, sys)...)
	errs = append(errs, checkCaches(sc, sys)...)
	return errors.Join(append(errs, needsPrometheus(sc, sys)...)...)
}

// checkCaches refuses a cache fault on a dependency that does not speak
// Redis, and, on a dependency the books are read from, a flush or an
// expiry, or a memory limit whose policy may evict, unless the scenario
// says it means it (clears_books): the verdict is judged on those books.
func checkCaches(sc *scenarios.Scenario, sys *system.System) []error {
	var errs []error
	for i, f := range sc.Faults {
		target := f.Target
		if _, ok := sys.Dependencies[target]; !ok {
			// A pod's dependency (pod-2/inventory) is the system's
			// (inventory) in each pod.
			if _, dep, inPod := strings.Cut(target, "/"); inPod {
				target = dep
			}
		}
		dep, ok := sys.Dependencies[target]
		if f.Cache == nil || !ok {
			continue
		}
		field := fmt.Sprintf("faults[%d].cache", i)
		switch {
		case dep.Protocol != "redis":
			speaks := dep.Protocol
			if speaks == "" {
				speaks = "a protocol it does not name"
			}
			errs = append(errs, &scenarios.Error{File: sc.File, Line: sc.Line(field), Field: field,
				Msg: fmt.Sprintf("a cache fault acts through Redis's own commands, and %s speaks %s (dependencies.%s.protocol in %s): write protocol: redis there if it is a Redis", f.Target, speaks, f.Target, sys.File)})
		case f.Cache.Clears() && sys.HoldsBooks(target) && !f.Cache.ClearsBooks:
			errs = append(errs, &scenarios.Error{File: sc.File, Line: sc.Line(field), Field: field,
				Msg: fmt.Sprintf("%s holds the books (%s): a %s of its keys clears what the verdict is judged on; write clears_books: true if the drill means it", f.Target, sys.File, f.Kind())})
		case f.Cache.MaxMemory != "" && f.Cache.Policy != "noeviction" && sys.HoldsBooks(target) && !f.Cache.ClearsBooks:
			pf := field + ".policy"
			errs = append(errs, &scenarios.Error{File: sc.File, Line: cmp.Or(sc.Line(pf), sc.Line(field)), Field: pf,
				Msg: fmt.Sprintf("%s holds the books (%s): a memory limit there evicts what the verdict is judged on unless its policy is noeviction (which refuses writes and loses nothing); write policy: noeviction, or clears_books: true if the drill means it", f.Target, sys.File)})
		}
	}
	return errs
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
	var errs []error
	counter := func(field string, m *scenarios.MetricBound) {
		if _, ok := sys.Counters[m.Counter]; m.Counter != "" && !ok {
			have := "none"
			if len(sys.Counters) > 0 {
				have = strings.Join(slices.Sorted(maps.Keys(sys.Counters)), ", ")
			}
			errs = append(errs, &scenarios.Error{File: sc.File, Line: sc.Line(field + ".counter"), Field: field + ".counter",
				Msg: fmt.Sprintf("%s names no counter %q (counters: %s)", sys.File, m.Counter, have)})
		}
	}
	for i, e := range sc.Expect {
		if e.Metric != nil {
			counter(fmt.Sprintf("expect[%d].metric", i), e.Metric)
		}
	}
	if a := sc.Abort; a != nil && a.Metric != nil {
		counter("abort.metric", a.Metric)
	}
	if sys.Prometheus != "" {
		return errs
	}
	for i, e := range sc.Expect {
		if e.Metric != nil && e.Metric.Query != "" {
			field := fmt.Sprintf("expect[%d].metric", i)
			errs = append(errs, &scenarios.Error{File: sc.File, Line: sc.Line(field), Field: field,
				Msg: fmt.Sprintf("a PromQL promise needs a Prometheus server: %s names none (prometheus:)", sys.File)})
		}
	}
	if a := sc.Abort; a != nil && a.Metric != nil && a.Metric.Query != "" {
		errs = append(errs, &scenarios.Error{File: sc.File, Line: sc.Line("abort.metric"), Field: "abort.metric",
			Msg: fmt.Sprintf("a PromQL halt condition needs a Prometheus server: %s names none (prometheus:)", sys.File)})
	}
	return errs
}

// proxies are the names of the proxies the drill uses: every dependency's
// and every fault target's that has one.
func (d armer) proxies() []string {
	seen := map[string]bool{}
	var out []string
	add := func(dep string) {
		if p, ok := d.Environment.ProxyName(dep); ok && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, dep := range slices.Sorted(maps.Keys(d.Sys.Dependencies)) {
		add(dep)
	}
	for _, f := range d.sc.Faults {
		add(f.Target)
	}
	return out
}

// checkTargets refuses a fault on a dependency the system does not have,
// or that it cannot act on as the fault asks.
func (d armer) checkTargets() error {
	for i, f := range d.sc.Faults {
		field := fmt.Sprintf("faults[%d].target", i)
		if f.Cache != nil {
			if _, ok := env.RedisOf(d.Environment, f.Target); ok {
				continue
			}
			if _, ok := d.Sys.Dependencies[f.Target]; ok {
				return &scenarios.Error{File: d.sc.File, Line: d.sc.Line(field), Field: field,
					Msg: fmt.Sprintf("a cache fault on %s needs its Redis's address, and the %s environment does not know it (a system file's dependencies.%s.upstream, with protocol: redis)", f.Target, d.Environment.Info().Kind, f.Target)}
			}
		} else if f.Process != "" {
			if _, ok := d.Environment.Process(f.Target); ok {
				continue
			}
			if _, ok := d.Sys.Dependencies[f.Target]; ok {
				return &scenarios.Error{File: d.sc.File, Line: d.sc.Line(field), Field: field,
					Msg: fmt.Sprintf("a process fault on %s needs a process to act on: %s declares none (dependencies.%s.process)", f.Target, d.Sys.File, f.Target)}
			}
		} else if _, ok := d.Environment.ProxyName(f.Target); ok {
			continue
		} else if _, ok := d.Sys.Dependencies[f.Target]; ok {
			return &scenarios.Error{File: d.sc.File, Line: d.sc.Line(field), Field: field,
				Msg: fmt.Sprintf("no Toxiproxy proxy is known in front of %s (name it: environment.proxies, -proxy %s=NAME)", f.Target, f.Target)}
		}
		return &scenarios.Error{File: d.sc.File, Line: d.sc.Line(field), Field: field,
			Msg: fmt.Sprintf("%q is not a dependency of %s (%s: %s)", f.Target, d.Sys.Name, d.Sys.File, strings.Join(slices.Sorted(maps.Keys(d.Sys.Dependencies)), ", "))}
	}
	return nil
}

// checkRequestAware refuses, before anything is sent, a drill whose
// request-aware toxic (lost_reply) the Toxiproxy in front of its target
// cannot serve: a stock Toxiproxy, whose toxics are TCP-level only, or a
// proxy of gameday's without a relay behind it (one created before the
// drill, by someone who did not ask for one).
func (d armer) checkRequestAware(ctx context.Context) error {
	if len(d.sc.RequestAwareTargets()) == 0 {
		return nil
	}
	c := d.Environment.Toxiproxy()
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
		proxy, _ := d.Environment.ProxyName(f.Target)
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

// checkStreams checks the load's streams against the system's journeys:
// every journey a mix names is one, and the stream's patience leaves its
// visitors time for the journey's think times.
func checkStreams(sc *scenarios.Scenario, sys *system.System) []error {
	var errs []error
	known := slices.Sorted(maps.Keys(sys.Journeys))
	for i, st := range sc.Load.Streams {
		for _, name := range slices.Sorted(maps.Keys(st.Mix)) {
			field := fmt.Sprintf("load.streams[%d].mix.%s", i, name)
			if name == scenarios.PurchaseJourney {
				continue
			}
			if _, ok := sys.Journeys[name]; !ok {
				have := "none"
				if len(known) > 0 {
					have = strings.Join(known, ", ")
				}
				line := sc.Line(field)
				if line == 0 && sc.Load.Replay != nil && st.Name == scenarios.ReplayStream(name) {
					// A journey of the replay's recording.
					field, line = "load.replay", sc.Line("load.replay")
				}
				errs = append(errs, &scenarios.Error{File: sc.File, Line: line, Field: field,
					Msg: fmt.Sprintf("%q is not a journey of %s (%s: journeys: %s; purchase is the purchase)", name, sys.Name, sys.File, have)})
				continue
			}
			// A drill's -time-scale scales the patience, and the think
			// times with it.
			if think := time.Duration(float64(sys.ThinkTime(name)) * sc.TimeScale()); think >= st.Patience.D() {
				pf := fmt.Sprintf("load.streams[%d].patience", i)
				line := sc.Line(pf)
				if line == 0 { // the load's patience, taken by default
					line = sc.Line(fmt.Sprintf("load.streams[%d]", i))
				}
				if line == 0 && sc.Load.Replay != nil { // a journey of the replay's recording
					pf, line = "load.patience", cmp.Or(sc.Line("load.patience"), sc.Line("load.replay"))
				}
				errs = append(errs, &scenarios.Error{File: sc.File, Line: line, Field: pf,
					Msg: fmt.Sprintf("%s: journey %s's think times add up to %s (%s): no visitor would finish it", st.Patience.D(), name, think, sys.File)})
			}
		}
	}
	return errs
}
