package drive

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
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

	// openCounters reaches the system's counters, from the sampler's own
	// goroutine before its first reading (nil: the system has none);
	// counter then reads one by name, or counterErr says why none can be.
	// prev is each counter's last reading.
	openCounters func(context.Context) (func(context.Context, string) (float64, error), func(), error)
	counter      func(context.Context, string) (float64, error)
	counterErr   error
	prev         map[string]counterReading

	mu      sync.Mutex
	samples map[string][]metricSample // by query
}

// counterReading is a counter's value and when it was read.
type counterReading struct {
	at time.Duration
	v  float64
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
	return &metricSampler{server: server, hc: noredirect.Client(2 * time.Second), start: start, every: time.Second, samples: map[string][]metricSample{}, prev: map[string]counterReading{}}
}

// run samples every query until ctx ends. halt, when set, is checked after
// every sample of its query: it has held for its For when every sample of
// the last For did.
func (m *metricSampler) run(ctx context.Context, queries []string, halt *scenarios.MetricBound, haltFor time.Duration, onHalt func(string)) {
	if m.openCounters != nil && slices.ContainsFunc(queries, isCounter) {
		read, closeCounters, err := m.openCounters(ctx)
		if err != nil {
			m.counterErr = err
		} else {
			m.counter = read
			defer closeCounters()
		}
	}
	t := time.NewTicker(m.every)
	defer t.Stop()
	var holding time.Duration = -1
	for {
		for _, q := range queries {
			at := time.Since(m.start)
			v, err := m.one(ctx, q, &at)
			if errors.Is(err, errFirstReading) {
				continue
			}
			m.mu.Lock()
			m.samples[q] = append(m.samples[q], metricSample{at: at, v: v, err: err})
			m.mu.Unlock()
			if halt == nil || q != halt.Key() {
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

// errFirstReading is a counter's first reading: a rate needs two.
var errFirstReading = errors.New("the counter's first reading")

// isCounter reports whether a sampled key is a counter's.
func isCounter(q string) bool { return strings.HasPrefix(q, scenarios.CounterKey("")) }

// one reads query q: a PromQL expression's value, or a counter's rate,
// whose reading time it writes to at (the rate is of the time between
// two readings, not two askings).
func (m *metricSampler) one(ctx context.Context, q string, at *time.Duration) (float64, error) {
	if name, ok := strings.CutPrefix(q, scenarios.CounterKey("")); ok {
		return m.rate(ctx, name, at)
	}
	vec, err := promQuery(m.hc, m.server, q)
	if err != nil {
		return 0, err
	}
	if len(vec) != 1 {
		return 0, fmt.Errorf("%w: %q gave %d series; want one value", errNoValue, q, len(vec))
	}
	return vec[0].value, nil
}

// rate reads counter name and gives its rise since the last reading, per
// second, the reading's time written to at. A counter that fell (its
// process started again) gives no rate for that second: it is read afresh
// from there, as at its first reading.
func (m *metricSampler) rate(ctx context.Context, name string, at *time.Duration) (float64, error) {
	if m.counter == nil {
		err := m.counterErr
		if err == nil {
			err = errors.New("no counter can be read")
		}
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	v, err := m.counter(ctx, name)
	if err != nil {
		return 0, err
	}
	*at = time.Since(m.start)
	prev, seen := m.prev[name]
	m.prev[name] = counterReading{at: *at, v: v}
	if !seen || v < prev.v || *at <= prev.at {
		return 0, errFirstReading
	}
	return (v - prev.v) / (*at - prev.at).Seconds(), nil
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
