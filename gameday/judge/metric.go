package judge

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gameday-dev/gameday/scenarios"
)

// Sample is one reading of a metric the scenario promises on: when it was
// taken (from the start of the load) and its value, or why it could not be
// read.
type Sample struct {
	At  time.Duration
	V   float64
	Err error
	// NoValue: Prometheus answered, with no single value (the series was
	// gone, or several matched): the system's figure was missing, which
	// breaks the promise. Any other Err is a sample not observed.
	NoValue bool
}

// sampleJSON is a Sample as observations.json keeps it: the value as text,
// so that NaN and ±Inf (a PromQL division by zero) survive, and the error
// as its message.
type sampleJSON struct {
	At      time.Duration `json:"at_ns"`
	V       string        `json:"v"`
	Err     string        `json:"err,omitempty"`
	NoValue bool          `json:"no_value,omitempty"`
}

func (s Sample) MarshalJSON() ([]byte, error) {
	j := sampleJSON{At: s.At, V: strconv.FormatFloat(s.V, 'g', -1, 64), NoValue: s.NoValue}
	if s.Err != nil {
		j.Err = s.Err.Error()
	}
	return json.Marshal(j)
}

func (s *Sample) UnmarshalJSON(data []byte) error {
	var j sampleJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	v, err := strconv.ParseFloat(j.V, 64)
	if err != nil {
		return fmt.Errorf("metric sample at %s: value %q: %w", j.At, j.V, err)
	}
	*s = Sample{At: j.At, V: v, NoValue: j.NoValue}
	if j.Err != "" {
		s.Err = errors.New(j.Err)
	}
	return nil
}

// within reports whether v is below below and above above (each when set).
func within(v float64, below, above *float64) bool {
	return (below == nil || v < *below) && (above == nil || v > *above)
}

// metricExpectation: every sample of the window within the bounds, and at
// least one sample. A sample outside the bounds, or one Prometheus
// answered without a value (the series gone), breaks it, whatever else;
// a promise none of whose samples broke it but that could not be
// observed — not sampled, no sample in its window, or a sample that could
// not be read (Prometheus did not answer, or refused the query) — is not
// checked: it neither held nor failed (Decide: the run is inconclusive),
// since a Prometheus that did not answer says nothing of the system.
func metricExpectation(b *scenarios.MetricBound, samples []Sample, sampled bool, w Windows) ExpectationResult {
	var bounds string
	switch {
	case b.Below != nil && b.Above != nil:
		bounds = fmt.Sprintf("between %g and %g", *b.Above, *b.Below)
	case b.Below != nil:
		bounds = fmt.Sprintf("below %g", *b.Below)
	default:
		bounds = fmt.Sprintf("above %g", *b.Above)
	}
	r := ExpectationResult{Window: string(b.Window), Promise: fmt.Sprintf("%s stays %s %s", b.What(), bounds, WindowWords(b.Window))}
	unobserved := func(observed, needs string) ExpectationResult {
		r.Observed, r.NotChecked, r.Needs = observed, true, needs
		return r
	}
	if !sampled {
		return unobserved("not sampled", "samples of the metric, which were not taken")
	}
	n, bad, unread, missing := 0, 0, 0, 0
	var lo, hi float64
	var firstErr, firstMissing error
	for _, s := range samples {
		if !w.Contains(b.Window, s.At) {
			continue
		}
		if s.Err != nil && s.NoValue {
			if missing == 0 {
				firstMissing = s.Err
			}
			missing++
			continue
		}
		if s.Err != nil {
			if unread == 0 {
				firstErr = s.Err
			}
			unread++
			continue
		}
		if n == 0 || s.V < lo {
			lo = s.V
		}
		if n == 0 || s.V > hi {
			hi = s.V
		}
		n++
		if !within(s.V, b.Below, b.Above) {
			bad++
		}
	}
	if n > 0 {
		if b.Counter != "" {
			// A rate: four figures say it.
			r.Observed = fmt.Sprintf("%.4g to %.4g over %d samples (%d outside)", lo, hi, n, bad)
		} else {
			r.Observed = fmt.Sprintf("%g to %g over %d samples (%d outside)", lo, hi, n, bad)
		}
	}
	if missing > 0 {
		r.Observed = strings.TrimPrefix(fmt.Sprintf("%s; %d without a value: %v", r.Observed, missing, firstMissing), "; ")
	}
	if unread > 0 {
		r.Observed = strings.TrimPrefix(fmt.Sprintf("%s; %d could not be read: %v", r.Observed, unread, firstErr), "; ")
	}
	switch {
	case bad > 0 || missing > 0:
		return r
	case unread > 0:
		return unobserved(r.Observed, "every sample of the window read")
	case n == 0:
		return unobserved("no sample in that window", "a sample in the window")
	}
	r.Held = true
	return r
}
