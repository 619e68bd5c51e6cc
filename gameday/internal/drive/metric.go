package drive

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/gameday-dev/gameday/gameday/judge"
	"github.com/gameday-dev/gameday/internal/noredirect"
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

// errNoValue is a query Prometheus answered with no single value: the
// system's series was gone (an exporter that died with the fault) or
// split. It breaks the promise, where a Prometheus that did not answer
// leaves it unobserved.
var errNoValue = errors.New("no single value")

type metricSample struct {
	at  time.Duration
	v   float64
	err error
}

func newMetricSampler(server string, start time.Time) *metricSampler {
	return &metricSampler{server: server, hc: noredirect.Client(2 * time.Second), start: start, every: time.Second, samples: map[string][]metricSample{}}
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
		return 0, fmt.Errorf("%w: %q gave %d series; want one value", errNoValue, q, len(vec))
	}
	return vec[0].value, nil
}

// halts reports whether a halt condition holds: the metric above its
// above, or below its below.
func halts(v float64, h *scenarios.MetricBound) bool {
	return (h.Above != nil && v > *h.Above) || (h.Below != nil && v < *h.Below)
}

// taken copies what was sampled so far, by query, for judging; nil for
// no sampler (judge.Evaluate says "not sampled").
func (m *metricSampler) taken() map[string][]judge.Sample {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string][]judge.Sample, len(m.samples))
	for q, ss := range m.samples {
		for _, x := range ss {
			out[q] = append(out[q], judge.Sample{At: x.at, V: x.v, Err: x.err, NoValue: errors.Is(x.err, errNoValue)})
		}
	}
	return out
}
