package scenarios

import (
	"slices"
	"strconv"
	"strings"
	"time"

	defaults "github.com/gameday-dev/gameday/internal/checkoutdefaults"
)

// Defaults that Parse writes into zero fields; each field's comment says
// which applies. The checkout's and the payment stand-in's come from
// package checkoutdefaults, where the checkout and the stand-in's flags
// take them too, so that a scenario shows what it ran with.
const (
	DefaultPatience    = 10 * time.Second
	DefaultRetryJitter = 0.5
)

// SetDefaults writes the defaults named in the field comments into the
// zero fields. Parse calls it; call it on a Scenario built in code before
// Validate. It is idempotent, and harmless on an invalid scenario (Validate
// still reports what is wrong).
func (s *Scenario) SetDefaults() {
	if s.Seed == 0 {
		s.Seed = 1
	}
	if s.Environment.Kind == "" && s.System != "" {
		// A described system runs as it runs: gameday starts nothing of it.
		s.Environment.Kind = "external"
	}
	if s.Environment.Kind == "" {
		s.Environment.Kind = "local"
	}
	if s.Environment.Kind == "local" {
		s.Checkout.setDefaults()
		if s.Payment.MinLatency == 0 && s.Payment.MaxLatency == 0 {
			s.Payment.MinLatency, s.Payment.MaxLatency = Duration(defaults.StandInMinLatency), Duration(defaults.StandInMaxLatency)
		}
		// The deadline modes skip a charge that could not finish before
		// the shopper leaves: the longest a healthy charge takes.
		if m := s.Checkout.Admission.Mode; (m == "deadline" || m == "fair-deadline" || m == "paced") && s.Checkout.MinPaymentTime == 0 {
			s.Checkout.MinPaymentTime = s.Payment.MaxLatency
		}
	}

	l := &s.Load
	if l.Patience == 0 {
		l.Patience = Duration(DefaultPatience)
	}
	for i := range l.Streams {
		st := &l.Streams[i]
		if st.Patience == 0 {
			st.Patience = l.Patience
		}
		if st.MaxRetries == nil {
			r := l.MaxRetries
			st.MaxRetries = &r
		}
	}
	if l.RetryJitter == nil {
		l.RetryJitter = ptr(DefaultRetryJitter)
	}
	if l.SessionShare == nil || *l.SessionShare == 0 {
		l.SessionShare = ptr(1.0)
	}
	if r := l.Replay; r != nil && r.Speedup == 0 {
		r.Speedup = 1
	}

	for _, e := range s.Expect {
		if f := e.FastRefusals; f != nil {
			if f.Share == 0 {
				f.Share = 0.5
			}
		}
	}
	for i := range s.Faults {
		f := &s.Faults[i]
		if f.Name == "" {
			f.Name = strings.ReplaceAll(f.Target, "/", "-") + "-" + f.Kind() + "-" + strconv.Itoa(i)
		}
		if f.Toxic != nil {
			if f.Toxic.Stream == "" {
				f.Toxic.Stream = "downstream"
			}
			if f.Toxic.Toxicity == nil {
				f.Toxic.Toxicity = ptr(1.0)
			}
		}
	}

	for i := range s.Moves {
		if m := &s.Moves[i]; m.Name == "" {
			m.Name = "move-" + m.Shop + "-" + strconv.Itoa(i)
		}
	}
	for _, e := range s.Expect {
		if mv := e.Moved; mv != nil && len(mv.Outcomes) == 0 {
			mv.Outcomes = []string{"completed"}
		}
	}

	window := WindowAll
	if len(s.Faults) > 0 {
		window = WindowDuring
	}
	for i := range s.Expect {
		e := &s.Expect[i]
		for _, b := range []*BreakerWithin{e.BreakerOpens, e.BreakerCloses} {
			if b != nil && b.Fault == "" {
				if f := s.firstFaultOn(b.Dependency); f != nil {
					b.Fault = f.Name
				}
			}
		}
		if e.Latency != nil && e.Latency.Window == "" {
			e.Latency.Window = window
		}
		if e.Ratio != nil && e.Ratio.Window == "" {
			e.Ratio.Window = window
		}
		if b := e.BlastRadius; b != nil {
			if b.Window == "" && b.To == 0 {
				b.Window = window
			}
			if b.Baseline == "" && b.BaselineTo == 0 {
				b.Baseline = WindowBefore
			}
		}
		if e.Degraded != nil {
			if e.Degraded.Window == "" {
				e.Degraded.Window = window
			}
			if e.Degraded.AtLeast == 0 {
				e.Degraded.AtLeast = 1
			}
		}
		if e.FastRefusals != nil && e.FastRefusals.Fault == "" && len(s.Faults) > 0 {
			e.FastRefusals.Fault = s.Faults[0].Name
		}
		if e.Metric != nil && e.Metric.Window == "" {
			e.Metric.Window = window
		}
	}
}

func (c *Checkout) setDefaults() {
	if c.Mode == "" {
		c.Mode = "reserve"
	}
	if c.Admission.Mode == "" {
		c.Admission.Mode = "none"
	}
	if c.LeaseTTL == 0 {
		c.LeaseTTL = Duration(defaults.LeaseTTL)
	}
	if c.RetryAfter == 0 {
		c.RetryAfter = Duration(defaults.RetryAfter)
	}
	c.Payment.setDefaults(defaults.PaymentTimeout)
	c.Inventory.setDefaults(defaults.InventoryTimeout)
	c.Sessions.setDefaults(defaults.SessionsTimeout)
}

func (b *Breaker) setDefaults(timeout time.Duration) {
	if b.Timeout == 0 {
		b.Timeout = Duration(timeout)
	}
	if b.Failures == 0 {
		b.Failures = defaults.Failures
	}
	if b.OpenFor == 0 {
		b.OpenFor = Duration(defaults.OpenFor)
	}
	if b.MaxConcurrent == 0 {
		b.MaxConcurrent = defaults.MaxConcurrent
	}
}

// Kind names the fault's kind: the toxic type, "down", the cache fault's
// (cache-flush, cache-expire, cache-limit), or the process action (""
// when none is set).
func (f Fault) Kind() string {
	switch {
	case f.Toxic != nil:
		return f.Toxic.Type
	case f.Down:
		return "down"
	case f.Cache != nil:
		switch {
		case f.Cache.Flush != "":
			return KindCacheFlush
		case f.Cache.Expire != "":
			return KindCacheExpire
		case f.Cache.MaxMemory != "":
			return KindCacheLimit
		}
		return "cache"
	}
	return f.Process
}

// RequestAwareTargets are the targets of the faults whose toxic only
// gameday's Toxiproxy serves (RequestAware), sorted, each once: their
// proxies need a relay behind them.
func (s *Scenario) RequestAwareTargets() []string {
	var out []string
	for _, f := range s.Faults {
		if f.Toxic != nil && RequestAware(f.Toxic.Type) && !slices.Contains(out, f.Target) {
			out = append(out, f.Target)
		}
	}
	slices.Sort(out)
	return out
}

// firstFaultOn returns the first fault whose target is dep, or nil.
func (s *Scenario) firstFaultOn(dep string) *Fault {
	for i := range s.Faults {
		if s.Faults[i].Target == dep {
			return &s.Faults[i]
		}
	}
	return nil
}

func ptr[T any](v T) *T { return &v }
