package gameday

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/gameday-dev/gameday/checkout"
	"github.com/gameday-dev/gameday/scenarios"
)

// breakerProbe samples the checkout's GET /admin/breakers every interval.
// The checkout records each transition with its own time, so the probe
// reports exact times even between samples; the samples also give the
// state over time for the report and the abort guard.
//
// With a metric set, it reads a Prometheus gauge of breaker state instead
// (a service of the user's own): transitions are then stamped with the
// time of the sample that first saw them.
type breakerProbe struct {
	metric   *scenarios.BreakerMetric
	url      string
	hc       *http.Client
	interval time.Duration
	start    time.Time

	mu      sync.Mutex
	seen    map[string]int // transitions already taken per dependency
	trans   map[string][]Transition
	state   map[string]string
	samples int
	errors  int
}

func newBreakerProbe(checkoutURL string, interval time.Duration, start time.Time) *breakerProbe {
	return &breakerProbe{
		url: checkoutURL + "/admin/breakers", interval: interval, start: start,
		hc:   &http.Client{Timeout: time.Second},
		seen: map[string]int{}, trans: map[string][]Transition{}, state: map[string]string{},
	}
}

// run samples until ctx is done, then takes one last sample.
func (p *breakerProbe) run(ctx context.Context) {
	t := time.NewTicker(p.interval)
	defer t.Stop()
	for {
		p.sample()
		select {
		case <-ctx.Done():
			p.sample()
			return
		case <-t.C:
		}
	}
}

type breakersAnswer struct {
	Breakers map[string]checkout.BreakerView `json:"breakers"`
}

func (p *breakerProbe) sample() {
	if p.metric != nil {
		p.sampleMetric()
		return
	}
	ans, err := p.fetch()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.samples++
	if err != nil {
		p.errors++
		return
	}
	for dep, v := range ans.Breakers {
		p.state[dep] = v.State.String()
		// The checkout keeps the newest transitions; take those after the
		// last one seen. A count that went down means the checkout
		// restarted: take them all.
		n := int(v.TransitionCount)
		seen := p.seen[dep]
		if n < seen {
			seen = 0
		}
		newOnes := n - seen
		ts := v.Transitions
		if newOnes > len(ts) {
			newOnes = len(ts)
		}
		for _, tr := range ts[len(ts)-newOnes:] {
			if tr.At.Before(p.start) {
				continue // before the load: warm-up
			}
			p.trans[dep] = append(p.trans[dep], Transition{State: tr.To.String(), AtMS: tr.At.Sub(p.start).Milliseconds()})
		}
		p.seen[dep] = n
	}
}

func (p *breakerProbe) fetch() (breakersAnswer, error) {
	var ans breakersAnswer
	resp, err := p.hc.Get(p.url)
	if err != nil {
		return ans, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return ans, fmt.Errorf("GET %s: %s", p.url, resp.Status)
	}
	return ans, json.NewDecoder(resp.Body).Decode(&ans)
}

// baseline records the transition counts before the load, so that the
// warm-up's transitions are not reported.
func (p *breakerProbe) baseline() error {
	if p.metric != nil {
		states, err := p.fetchMetric()
		if err != nil {
			return err
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		maps.Copy(p.state, states)
		return nil
	}
	ans, err := p.fetch()
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for dep, v := range ans.Breakers {
		p.seen[dep] = int(v.TransitionCount)
		p.state[dep] = v.State.String()
	}
	return nil
}

func (p *breakerProbe) transitions() map[string][]Transition {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string][]Transition, len(p.trans))
	for dep, ts := range p.trans {
		out[dep] = append([]Transition(nil), ts...)
	}
	for dep := range p.state {
		if _, ok := out[dep]; !ok {
			out[dep] = []Transition{}
		}
	}
	return out
}

func (p *breakerProbe) states() map[string]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]string, len(p.state))
	for k, v := range p.state {
		out[k] = v
	}
	return out
}

// sampleMetric reads the gauge and records every state change it sees.
func (p *breakerProbe) sampleMetric() {
	states, err := p.fetchMetric()
	at := time.Since(p.start).Milliseconds()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.samples++
	if err != nil {
		p.errors++
		return
	}
	for dep, st := range states {
		if p.state[dep] != st {
			p.trans[dep] = append(p.trans[dep], Transition{State: st, AtMS: at})
			p.state[dep] = st
		}
	}
}

// fetchMetric reads the breaker gauge from a Prometheus text exposition.
func (p *breakerProbe) fetchMetric() (map[string]string, error) {
	m := p.metric
	resp, err := p.hc.Get(m.URL)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", m.URL, resp.Status)
	}
	return parseBreakerMetric(io.LimitReader(resp.Body, 8<<20), m)
}

// parseBreakerMetric maps each series of the gauge to a state by its
// dependency label.
func parseBreakerMetric(r io.Reader, m *scenarios.BreakerMetric) (map[string]string, error) {
	name, label := m.Name, m.Label
	if name == "" {
		name = "gameday_breaker_state"
	}
	if label == "" {
		label = "dependency"
	}
	values := map[string]float64{"closed": 0, "half-open": 1, "open": 2}
	for st, v := range map[string]*float64{"closed": m.Closed, "half-open": m.HalfOpen, "open": m.Open} {
		if v != nil {
			values[st] = *v
		}
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("read breaker metric: %w", err)
	}
	fam, ok := fams[name]
	if !ok {
		return nil, fmt.Errorf("read breaker metric: no %s in the exposition", name)
	}
	out := map[string]string{}
	for _, mt := range fam.GetMetric() {
		var dep string
		for _, lp := range mt.GetLabel() {
			if lp.GetName() == label {
				dep = lp.GetValue()
			}
		}
		v := mt.GetGauge().GetValue()
		if mt.GetGauge() == nil {
			v = mt.GetUntyped().GetValue()
		}
		for st, want := range values {
			if v == want && dep != "" {
				out[dep] = st
			}
		}
	}
	return out, nil
}
