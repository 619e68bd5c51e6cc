package drive

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/gameday-dev/gameday/gameday/internal/adminapi"
	"github.com/gameday-dev/gameday/gameday/runrecord"
	"github.com/gameday-dev/gameday/gameday/system"
	"github.com/gameday-dev/gameday/internal/noredirect"
	"github.com/gameday-dev/gameday/internal/redact"
	"github.com/gameday-dev/gameday/scenarios"
)

// breakerProbe samples the breakers of the system under test every
// interval, where its description says they can be read. Through gameday's
// admin protocol (GET /admin/breakers, which the reference checkout
// speaks) each transition comes with the system's own time, so the probe
// reports exact times even between samples. From a Prometheus gauge or a
// PromQL query, transitions are stamped with the time of the sample that
// first saw them. A system whose breakers cannot be read has none here:
// black-box promises (fast refusals) judge it instead.
type breakerProbe struct {
	metric *scenarios.BreakerMetric
	promql *promqlSource
	none   bool // nothing to read
	admin  adminapi.API
	// pods, in a system of pods, are each pod's admin protocol: its
	// breakers are named POD/DEPENDENCY (pod-2/inventory).
	pods     []podAdmin
	hc       *http.Client
	interval time.Duration
	start    time.Time

	mu      sync.Mutex
	seen    map[string]int // transitions already taken per dependency
	trans   map[string][]runrecord.Transition
	state   map[string]string
	samples int
	errors  int
}

// newProbe is the probe of the drill's system: the scenario's or the
// options' breaker metric first (for a service of your own drilled with
// the old external flags), then the system file's breakers, then its admin
// protocol; else none.
func (d *drill) newProbe(start time.Time) *breakerProbe {
	p := newBreakerProbe(adminapi.New(d.Sys), d.Config.ProbeInterval, start)
	switch {
	case d.Config.BreakerMetric != nil:
		p.metric = d.Config.BreakerMetric
	case d.Scenario.Environment.BreakerMetric != nil:
		p.metric = d.Scenario.Environment.BreakerMetric
	case d.Sys.Breakers != nil && d.Sys.Breakers.Metric != nil:
		p.metric = d.Sys.Breakers.Metric
	case d.Sys.Breakers != nil && d.Sys.Breakers.PromQL != nil:
		p.promql = &promqlSource{server: d.Sys.Prometheus, q: d.Sys.Breakers.PromQL}
		p.interval = max(p.interval, 250*time.Millisecond)
	case len(d.podAdmins()) > 0:
		p.pods = d.podAdmins()
		for i := range p.pods {
			p.pods[i].api = p.pods[i].api.WithClient(p.hc)
		}
	case !p.admin.OK():
		p.none = true
	}
	return p
}

// podAdmin is one pod's admin protocol.
type podAdmin struct {
	pod string
	api adminapi.API
}

// podAdmins are the admin protocols of the pods that hold the drill's
// shops, one a pod, in the order of the ledgers: each pod has its own
// breakers.
func (d *drill) podAdmins() []podAdmin {
	var out []podAdmin
	seen := map[string]bool{}
	for _, lg := range d.Ledgers {
		if lg.Pod == "" || seen[lg.Pod] {
			continue
		}
		if a := adminapi.New(lg.Sys); a.OK() {
			seen[lg.Pod] = true
			out = append(out, podAdmin{pod: lg.Pod, api: a})
		}
	}
	return out
}

func newBreakerProbe(admin adminapi.API, interval time.Duration, start time.Time) *breakerProbe {
	hc := noredirect.Client(time.Second)
	admin = admin.WithClient(hc)
	return &breakerProbe{
		admin: admin, interval: interval, start: start,
		hc:   hc,
		seen: map[string]int{}, trans: map[string][]runrecord.Transition{}, state: map[string]string{},
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

// breakersAnswer is GET /admin/breakers of gameday's admin protocol.
type breakersAnswer struct {
	Breakers map[string]breakerAnswer `json:"breakers"`
}

// breakerAnswer is one breaker of GET /admin/breakers.
type breakerAnswer struct {
	State       string `json:"state"`
	Transitions []struct {
		To string    `json:"to"`
		At time.Time `json:"at"`
	} `json:"transitions"`
	// TransitionCount includes transitions dropped from the kept
	// history.
	TransitionCount uint64 `json:"transition_count"`
}

func (p *breakerProbe) sample() {
	switch {
	case p.none:
		return
	case p.metric != nil || p.promql != nil:
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
		p.state[dep] = v.State
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
			p.trans[dep] = append(p.trans[dep], runrecord.Transition{State: tr.To, AtMS: tr.At.Sub(p.start).Milliseconds()})
		}
		p.seen[dep] = n
	}
}

func (p *breakerProbe) fetch() (breakersAnswer, error) {
	var ans breakersAnswer
	if len(p.pods) == 0 {
		return ans, p.admin.Call(context.Background(), http.MethodGet, "/admin/breakers", &ans)
	}
	// Every pod's, each breaker named after its pod; a pod that does not
	// answer this time (its checkout killed, say) is read the next time,
	// with every transition it kept.
	ans.Breakers = map[string]breakerAnswer{}
	var errs []error
	for _, pa := range p.pods {
		var one breakersAnswer
		if err := pa.api.Call(context.Background(), http.MethodGet, "/admin/breakers", &one); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", pa.pod, err))
			continue
		}
		for dep, b := range one.Breakers {
			ans.Breakers[system.PodDependency(pa.pod, dep)] = b
		}
	}
	if len(errs) == len(p.pods) {
		return ans, errors.Join(errs...)
	}
	return ans, nil
}

// baseline records the transition counts before the load, so that the
// warm-up's transitions are not reported.
func (p *breakerProbe) baseline() error {
	if p.none {
		return nil
	}
	if p.metric != nil || p.promql != nil {
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
		p.state[dep] = v.State
	}
	return nil
}

func (p *breakerProbe) transitions() map[string][]runrecord.Transition {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string][]runrecord.Transition, len(p.trans))
	for dep, ts := range p.trans {
		out[dep] = append([]runrecord.Transition(nil), ts...)
	}
	for dep := range p.state {
		if _, ok := out[dep]; !ok {
			out[dep] = []runrecord.Transition{}
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
			p.trans[dep] = append(p.trans[dep], runrecord.Transition{State: st, AtMS: at})
			p.state[dep] = st
		}
	}
}

// fetchMetric reads the breakers' states from the gauge or the query.
func (p *breakerProbe) fetchMetric() (map[string]string, error) {
	if p.promql != nil {
		return p.promql.states(p.hc)
	}
	m := p.metric
	resp, err := p.hc.Get(m.URL)
	if err != nil {
		return nil, redact.Error(err)
	}
	defer resp.Body.Close()
	if noredirect.Is(resp) {
		return nil, fmt.Errorf("GET %s: %w", redact.URL(m.URL), noredirect.Error(resp))
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", redact.URL(m.URL), resp.Status)
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
	values := stateValues(m.Closed, m.HalfOpen, m.Open)
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

// promqlSource reads breaker states from a PromQL query on a Prometheus
// server: each series of the instant vector is a breaker, named by its
// label, in the state its value stands for.
type promqlSource struct {
	server string
	q      *system.PromQL
}

func (s *promqlSource) states(hc *http.Client) (map[string]string, error) {
	vec, err := promQuery(hc, s.server, s.q.Query)
	if err != nil {
		return nil, err
	}
	values := stateValues(s.q.Closed, s.q.HalfOpen, s.q.Open)
	out := map[string]string{}
	for _, smp := range vec {
		dep := smp.labels[s.q.Label]
		if dep == "" {
			continue
		}
		for st, want := range values {
			if smp.value == want {
				out[dep] = st
			}
		}
	}
	return out, nil
}

// stateValues maps each breaker state to the number that stands for it
// (default 0 closed, 1 half-open, 2 open).
func stateValues(closed, halfOpen, open *float64) map[string]float64 {
	values := map[string]float64{"closed": 0, "half-open": 1, "open": 2}
	for st, v := range map[string]*float64{"closed": closed, "half-open": halfOpen, "open": open} {
		if v != nil {
			values[st] = *v
		}
	}
	return values
}
