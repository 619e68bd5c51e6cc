package predict

import (
	"context"
	"fmt"
	"slices"

	"github.com/gameday-dev/gameday/gameday/flash"
)

// Simulate runs the model once with the given seed and returns the run's
// figures. The same model and seed give the same figures.
func Simulate(m Model, seed int64) (flash.Figures, error) {
	s, err := newSim(m)
	if err != nil {
		return flash.Figures{}, err
	}
	return s.run(seed)
}

// Predict simulates runs runs of the model, with the seeds seed, seed+1,
// ..., and returns each figure's mean and 5th and 95th percentiles over
// them. The same arguments give the same prediction.
func Predict(m Model, runs int, seed int64) (Prediction, error) {
	return PredictContext(context.Background(), m, runs, seed)
}

// PredictContext is Predict, giving up with ctx's error (within about a
// millisecond) once ctx is done: a large model takes minutes.
func PredictContext(ctx context.Context, m Model, runs int, seed int64) (Prediction, error) {
	if runs <= 0 {
		return Prediction{}, fmt.Errorf("predict: runs %d: must be above 0", runs)
	}
	s, err := newSim(m)
	if err != nil {
		return Prediction{}, err
	}
	names := flash.Names()
	values := make([][]float64, len(names))
	for k := range values {
		values[k] = make([]float64, runs)
	}
	for r := range runs {
		f, err := s.runContext(ctx, seed+int64(r))
		if err != nil {
			return Prediction{}, err
		}
		for k, n := range names {
			values[k][r] = f.Value(n.Key)
		}
	}
	p := Prediction{Runs: runs, Seed: seed, Figures: make(map[string]Range, len(names))}
	for k, n := range names {
		v := values[k]
		var sum float64
		for _, x := range v {
			sum += x
		}
		slices.Sort(v)
		p.Figures[n.Key] = Range{Mean: sum / float64(runs), P5: percentile(v, 5), P95: percentile(v, 95), Min: v[0], Max: v[runs-1]}
	}
	return p, nil
}
