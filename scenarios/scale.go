package scenarios

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"time"
)

// TotalDuration is how long the load lasts: the sum of the stages.
func (s *Scenario) TotalDuration() time.Duration {
	var total time.Duration
	for _, st := range s.Load.Stages {
		total += st.Duration.D()
	}
	return total
}

// PeakRate is the highest stage target, in arrivals per second.
func (l Load) PeakRate() float64 {
	peak := 0.0
	for _, st := range l.Stages {
		peak = max(peak, st.Target)
	}
	return peak
}

// PeakRate is the highest arrival rate of the whole sale: the load's peak,
// every shop's own and every stream's (twice: a funnel's purchases), added
// (an upper bound: their peaks may not meet).
func (s *Scenario) PeakRate() float64 {
	peak := s.stagesPeak()
	for _, st := range s.Load.Streams {
		// A funnel's purchases at most double a stream's arrivals.
		peak += 2 * Load{Stages: st.Stages}.PeakRate()
	}
	return peak
}

// stagesPeak is the load's peak and every shop's own, added.
func (s *Scenario) stagesPeak() float64 {
	peak := s.Load.PeakRate()
	for _, sh := range s.Shops {
		peak += Load{Stages: sh.Stages}.PeakRate()
	}
	return peak
}

// ShopperPool is the number of shoppers the load may have in flight:
// MaxShoppers, or when it is 0, 2 × peak rate × patience (DefaultPatience
// when Patience is 0), at least 100 and at most 1,000,000 (the load
// generator's limit).
func (l Load) ShopperPool() int { return l.pool(2 * l.PeakRate() * l.patience().Seconds()) }

// ShopperPool is the load's ShopperPool for the whole sale: the shops'
// own peaks added to the load's, and each stream's at its own patience,
// twice (a visitor holds a shopper for its whole journey, its pauses
// included, and a funnel's purchase another).
func (s *Scenario) ShopperPool() int {
	l := s.Load
	n := 2 * s.stagesPeak() * l.patience().Seconds()
	for _, st := range l.Streams {
		p := st.Patience.D()
		if p <= 0 {
			p = l.patience()
		}
		n += 2 * 2 * Load{Stages: st.Stages}.PeakRate() * p.Seconds()
	}
	return l.pool(n)
}

// patience is the load's patience, or its default.
func (l Load) patience() time.Duration {
	if p := l.Patience.D(); p > 0 {
		return p
	}
	return DefaultPatience
}

// pool is MaxShoppers, or n rounded up, at least 100 and at most the
// generator's limit.
func (l Load) pool(n float64) int {
	if l.MaxShoppers > 0 {
		return l.MaxShoppers
	}
	n = math.Ceil(n)
	if !(n < maxShoppers) { // also NaN
		return maxShoppers
	}
	return max(int(n), 100)
}

// Scaled returns a deep copy of the scenario for a drill at rate times the
// arrival rate and timeScale times the duration (a --rate-scale 1.5
// rehearsal of a bigger peak, a --time-scale 0.2 quick drill in CI). s is
// not changed. Both scales must be finite and above 0; Scaled panics
// otherwise, so check flags first.
//
// Scaled by rate: every stage target (a shop's own too), and MaxShoppers when set (so the
// pool still holds the peak). Scaled by timeScale, rounded to the millisecond:
// the timeline, meaning every stage's duration (a shop's own too), every
// fault's at and for, a move's at, a blast radius's from, to,
// baseline_from and baseline_to, every stream's stages (trimmed where
// rounding would take one past the load's end) and patience, and, through
// [Scenario.TimeScale], the system file's journeys' think times at drill
// time,
// the shoppers' patience, the checkout's retry_after (what it asks
// shoppers to wait, which must stay in proportion to their patience) and
// lease_ttl (which the runner waits out before counting lost units), every
// breaker's open_for, a fair waiting room's token_ttl, and the abort
// guard's for. Stock (a shop's own too) is scaled by
// timeScale too, rounded up, so that a shortened sale sells out at the same point of
// its timeline; a rate-scaled rehearsal keeps the stock, since more buyers
// for the same units is what it rehearses. A degraded expectation's
// at_least, a count of answers, is scaled by rate × timeScale, rounded up.
//
// Not scaled, because they are not part of the timeline but of how fast
// the system must be: latency bounds (below), breaker expectations'
// within, fast refusals' bounds, the checkout's timeouts and probe timeouts, min_payment_time,
// the payment stand-in's latencies, and toxic attributes (a 1s latency
// toxic stays 1s). Ratios, invariant allowances and the seed are not
// scaled either. A fault's for is trimmed if rounding would take its end
// past the end of the load.
func (s *Scenario) Scaled(rate, timeScale float64) *Scenario {
	for _, f := range []float64{rate, timeScale} {
		if !(f > 0) || math.IsInf(f, 0) {
			panic(fmt.Sprintf("scenarios: Scaled(%g, %g): scales must be finite and above 0", rate, timeScale))
		}
	}
	c := s.Clone()
	c.timeScale = s.TimeScale() * timeScale
	sd := func(d *Duration) { *d = scaleDuration(*d, timeScale) }

	for i := range c.Load.Stages {
		st := &c.Load.Stages[i]
		sd(&st.Duration)
		st.Target *= rate
	}
	for i := range c.Shops {
		c.Shops[i].Stock = int64(ceilInt(float64(c.Shops[i].Stock) * timeScale))
		for j := range c.Shops[i].Stages {
			st := &c.Shops[i].Stages[j]
			sd(&st.Duration)
			st.Target *= rate
		}
	}
	for i := range c.Load.Streams {
		st := &c.Load.Streams[i]
		for j := range st.Stages {
			sd(&st.Stages[j].Duration)
			st.Stages[j].Target *= rate
		}
		sd(&st.Patience)
	}
	if c.Load.MaxShoppers > 0 {
		c.Load.MaxShoppers = ceilInt(float64(c.Load.MaxShoppers) * rate)
	}
	sd(&c.Load.Patience)
	sd(&c.Checkout.RetryAfter)
	sd(&c.Checkout.LeaseTTL)
	sd(&c.Checkout.Admission.TokenTTL)
	sd(&c.Checkout.Payment.OpenFor)
	sd(&c.Checkout.Inventory.OpenFor)
	sd(&c.Checkout.Sessions.OpenFor)
	if c.Abort != nil {
		sd(&c.Abort.For)
	}
	if c.Stock > 0 {
		c.Stock = int64(max(ceilInt(float64(c.Stock)*timeScale), 1))
	}
	total := Duration(c.TotalDuration())
	for i := range c.Load.Streams {
		// Rounding may take a stream a millisecond past the load's
		// stages, which set the drill's length: its last stages give
		// the difference back.
		sts := c.Load.Streams[i].Stages
		over := Duration(c.Load.Streams[i].Duration()) - total
		for k := len(sts) - 1; k >= 0 && over > 0; k-- {
			cut := min(over, sts[k].Duration-1)
			sts[k].Duration -= cut
			over -= cut
		}
	}
	for i := range c.Faults {
		f := &c.Faults[i]
		sd(&f.At)
		sd(&f.For)
		if f.At < total && f.For > total-f.At {
			f.For = total - f.At
		}
	}
	for i := range c.Moves {
		sd(&c.Moves[i].At)
	}
	for _, e := range c.Expect {
		if b := e.BlastRadius; b != nil {
			sd(&b.From)
			sd(&b.To)
			sd(&b.BaselineFrom)
			sd(&b.BaselineTo)
		}
		if d := e.Degraded; d != nil && d.AtLeast > 0 {
			d.AtLeast = max(ceilInt(float64(d.AtLeast)*rate*timeScale), 1)
		}
	}
	return c
}

// scaleDuration multiplies d by f, rounded to the millisecond; a duration
// above 0 stays at least 1ms.
func scaleDuration(d Duration, f float64) Duration {
	if d <= 0 {
		return d
	}
	x := math.Round(float64(d) * f / float64(time.Millisecond))
	if x >= math.MaxInt64/float64(time.Millisecond) {
		return Duration(math.MaxInt64)
	}
	return Duration(max(time.Duration(x), 1) * time.Millisecond)
}

// ceilInt rounds f up, forgiving the float error of a product that should
// be whole (10 × 1.5 × 0.2 is 3, not 4), and bounds it.
func ceilInt(f float64) int {
	if !(f < math.MaxInt32) {
		return math.MaxInt32
	}
	return int(math.Ceil(f - 1e-9))
}

// Clone returns a deep copy of s: no slice, map or pointer is shared, so
// either can be changed without touching the other.
func (s *Scenario) Clone() *Scenario {
	c := *s
	c.Environment.Proxies = maps.Clone(s.Environment.Proxies)
	if m := s.Environment.BreakerMetric; m != nil {
		cm := *m
		cm.Closed, cm.HalfOpen, cm.Open = clonePtr(m.Closed), clonePtr(m.HalfOpen), clonePtr(m.Open)
		c.Environment.BreakerMetric = &cm
	}
	c.Load.Stages = slices.Clone(s.Load.Stages)
	if r := s.Load.Replay; r != nil {
		cr := *r
		cr.Journeys, cr.Read.Arrivals = maps.Clone(r.Journeys), maps.Clone(r.Read.Arrivals)
		c.Load.Replay = &cr
	}
	c.Moves = slices.Clone(s.Moves)
	c.Shops = slices.Clone(s.Shops)
	for i := range c.Shops {
		c.Shops[i].Stages = slices.Clone(s.Shops[i].Stages)
	}
	c.Load.Streams = slices.Clone(s.Load.Streams)
	for i, st := range s.Load.Streams {
		c.Load.Streams[i].Mix = maps.Clone(st.Mix)
		c.Load.Streams[i].Stages = slices.Clone(st.Stages)
		c.Load.Streams[i].MaxRetries = clonePtr(st.MaxRetries)
	}
	c.Checkout.Product.Coalesce = clonePtr(s.Checkout.Product.Coalesce)
	c.Checkout.Product.ServeStale = clonePtr(s.Checkout.Product.ServeStale)
	c.Checkout.GuestFallback = clonePtr(s.Checkout.GuestFallback)
	c.Load.RetryJitter = clonePtr(s.Load.RetryJitter)
	c.Load.SessionShare = clonePtr(s.Load.SessionShare)
	c.Faults = slices.Clone(s.Faults)
	for i := range c.Faults {
		if t := c.Faults[i].Toxic; t != nil {
			ct := *t
			ct.Toxicity = clonePtr(t.Toxicity)
			ct.Attributes = maps.Clone(t.Attributes)
			c.Faults[i].Toxic = &ct
		}
		c.Faults[i].Cache = clonePtr(c.Faults[i].Cache)
	}
	c.Expect = slices.Clone(s.Expect)
	for i := range c.Expect {
		e := &c.Expect[i]
		e.BreakerOpens = clonePtr(e.BreakerOpens)
		e.BreakerCloses = clonePtr(e.BreakerCloses)
		if e.Latency != nil {
			l := *e.Latency
			l.Outcomes = slices.Clone(l.Outcomes)
			l.Select = l.Select.clone()
			e.Latency = &l
		}
		if e.Ratio != nil {
			r := *e.Ratio
			r.Outcomes = slices.Clone(r.Outcomes)
			r.Select = r.Select.clone()
			r.AtLeast = clonePtr(r.AtLeast)
			r.AtMost = clonePtr(r.AtMost)
			e.Ratio = &r
		}
		e.Degraded = clonePtr(e.Degraded)
		e.FastRefusals = clonePtr(e.FastRefusals)
		e.Metric = cloneMetric(e.Metric)
		if mv := e.Moved; mv != nil {
			cm := *mv
			cm.Outcomes = slices.Clone(mv.Outcomes)
			e.Moved = &cm
		}
		if b := e.BlastRadius; b != nil {
			cb := *b
			cb.Select = b.Select.clone()
			cb.P95Within = clonePtr(b.P95Within)
			e.BlastRadius = &cb
		}
	}
	c.Invariants.Allow = maps.Clone(s.Invariants.Allow)
	c.Abort = clonePtr(s.Abort)
	if c.Abort != nil {
		c.Abort.Metric = cloneMetric(c.Abort.Metric)
	}
	// lines is never written after Parse, so sharing it is safe.
	return &c
}

func cloneMetric(m *MetricBound) *MetricBound {
	if m == nil {
		return nil
	}
	c := *m
	c.Below, c.Above = clonePtr(m.Below), clonePtr(m.Above)
	return &c
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
