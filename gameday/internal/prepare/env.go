// Package prepare is a drill's first stage: it brings up the environment
// every drive of the drill shares (Env.Up: a killed runner's faults
// removed, the system described and checked, the processes or containers
// started, the proxies created) and readies each drive in it (Env.Arm: the
// scenario's faults checked, the proxies found clean, the checkout ids
// chosen, the checkout and the books reached, set up and read).
//
// In: the scenario and Config, the runner's options that shape the
// environment. Out: Env, what every drive reads (the environment, its
// fault injector, the system under test as described, the journal), and
// per drive Armed (the checkout ids' prefix and the opened ledgers).
// Nothing here sends load or injects a fault.
package prepare

import (
	"fmt"

	"github.com/gameday-dev/gameday/gameday/env"
)

// ScaledSystemNote warns that a time-scaled drill of a described system
// shortens what gameday runs, not the system: its leases, timeouts, retry
// waits and settle times are its own. "" at full scale.
func ScaledSystemNote(name string, scale float64) string {
	if scale == 1 || scale == 0 {
		return ""
	}
	return fmt.Sprintf("time-scaled by %g: the load, the faults' times, the shoppers' patience and the stock were scaled, but %s's own leases, timeouts, retry waits and settle times were not (gameday cannot shorten what it does not run): a drill that passes at full scale can fail scaled, and the other way round; judge %s at -time-scale 1", scale, name, name)
}

// Starter is the environment the reference checkout is drilled in: the
// options', else the scenario's external one, else the local one.
func (p *Env) Starter() env.Starter {
	if p.Config.Environment != nil {
		return p.Config.Environment
	}
	if e := p.Base.Environment; e.Kind == "external" {
		return env.ExternalOptions{Toxiproxy: e.Toxiproxy, Proxies: e.Proxies, CheckoutURL: e.CheckoutURL, PaymentURL: e.PaymentURL}
	}
	return env.LocalOptions{Binary: p.Binary, EmbeddedRedis: p.EmbeddedRedis}
}

// Described reports whether the system under test is described by a
// system file (the options' or the scenario's), not the reference
// checkout.
func (p *Env) Described() bool { return p.Config.System != nil || p.Base.System != "" }

// Fresh reports whether the drill starts the reference checkout itself,
// with the scenario's settings and empty books, rather than drilling a
// system that runs anyway (described, external, Compose).
func (p *Env) Fresh() bool {
	return !p.Described() && p.Starter().Fresh()
}

// routes is the router's table of a scenario's pods: shop -> pod.
func (p *Env) routes() map[string]string {
	if p.Base.Environment.Pods == 0 {
		return nil
	}
	out := map[string]string{}
	for _, sh := range p.Base.Shops {
		out[sh.Name] = sh.Pod
	}
	Misroute(out)
	return out
}

// Misroute changes the routing table the runner writes; tests make it
// send a shop to the wrong pod.
var Misroute = func(map[string]string) {}
