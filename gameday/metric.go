package gameday

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/gameday-dev/gameday/scenarios"
)

// metricSampler asks a Prometheus server, every second while the load
// runs, for each PromQL expression the scenario promises on or halts on.
type metricSampler struct {
	server string
	hc     *http.Client
	start  time.Time
	every  time.Duration

	mu      sync.Mutex
	samples map[string][]metricSample // by query
}

type metricSample struct {
	at  time.Duration
	v   float64
	err error
}

func newMetricSampler(server string, start time.Time) *metricSampler {
	return &metricSampler{server: server, hc: &http.Client{Timeout: 2 * time.Second}, start: start, every: time.Second, samples: map[string][]metricSample{}}
}

// run samples every query until ctx ends. halt, when set, is checked after
// every sample of its query: it has held for its For when every sample of
// the last For did.
func (m *metricSampler) run(ctx context.Context, queries []string, halt *scenarios.MetricBound, haltFor time.Duration, onHalt func(string)) {
	t := time.NewTicker(m.every)
	defer t.Stop()
	var holding time.Duration = -1
	for {
		for _, q := range queries {
			at := time.Since(m.start)
			v, err := m.one(q)
			m.mu.Lock()
			m.samples[q] = append(m.samples[q], metricSample{at: at, v: v, err: err})
			m.mu.Unlock()
			if halt == nil || q != halt.Query {
				continue
			}
			if err == nil && halts(v, halt) {
				if holding < 0 {
					holding = at
				}
				if at-holding >= haltFor {
					onHalt(fmt.Sprintf("%s was %g for %s", q, v, haltFor))
					return
				}
			} else {
				holding = -1
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (m *metricSampler) one(q string) (float64, error) {
	vec, err := promQuery(m.hc, m.server, q)
	if err != nil {
		return 0, err
	}
	if len(vec) != 1 {
		return 0, fmt.Errorf("%q gave %d series; want one value", q, len(vec))
	}
	return vec[0].value, nil
}

// halts reports whether a halt condition holds: the metric above its
// above, or below its below.
func halts(v float64, h *scenarios.MetricBound) bool {
	return (h.Above != nil && v > *h.Above) || (h.Below != nil && v < *h.Below)
}

// within reports whether v is below below and above above (each when set).
func within(v float64, below, above *float64) bool {
	return (below == nil || v < *below) && (above == nil || v > *above)
}

// metricExpectation: every sample of the window within the bounds, and at
// least one sample.
func (m *metricSampler) expectation(b *scenarios.MetricBound, w windows) ExpectationResult {
	var bounds string
	switch {
	case b.Below != nil && b.Above != nil:
		bounds = fmt.Sprintf("between %g and %g", *b.Above, *b.Below)
	case b.Below != nil:
		bounds = fmt.Sprintf("below %g", *b.Below)
	default:
		bounds = fmt.Sprintf("above %g", *b.Above)
	}
	r := ExpectationResult{Window: string(b.Window), Promise: fmt.Sprintf("%s stays %s %s", b.Query, bounds, windowWords(b.Window))}
	if m == nil {
		r.Observed = "not sampled"
		return r
	}
	m.mu.Lock()
	samples := append([]metricSample(nil), m.samples[b.Query]...)
	m.mu.Unlock()
	n, bad := 0, 0
	var lo, hi float64
	for _, s := range samples {
		if !w.contains(b.Window, s.at) {
			continue
		}
		if s.err != nil {
			r.Observed = "could not be read: " + s.err.Error()
			return r
		}
		if n == 0 || s.v < lo {
			lo = s.v
		}
		if n == 0 || s.v > hi {
			hi = s.v
		}
		n++
		if !within(s.v, b.Below, b.Above) {
			bad++
		}
	}
	if n == 0 {
		r.Observed = "no sample in that window"
		return r
	}
	r.Held = bad == 0
	r.Observed = fmt.Sprintf("%g to %g over %d samples (%d outside)", lo, hi, n, bad)
	return r
}
