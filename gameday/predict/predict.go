package predict

import (
	"context"
	"fmt"
	"github.com/gameday-dev/gameday/internal/stats"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

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
// millisecond) once ctx is done: a large model takes minutes. The runs are
// shared among as many workers as the process may run at once
// (GOMAXPROCS), each with a simulation of its own; every run depends on its
// seed only, so the prediction is the same whatever the number of cores.
func PredictContext(ctx context.Context, m Model, runs int, seed int64) (Prediction, error) {
	return predictWith(ctx, m, runs, seed, runtime.GOMAXPROCS(0))
}

// predictWith is PredictContext with workers workers.
func predictWith(ctx context.Context, m Model, runs int, seed int64, workers int) (Prediction, error) {
	if runs <= 0 {
		return Prediction{}, fmt.Errorf("predict: runs %d: must be above 0", runs)
	}
	workers = max(1, min(workers, runs))
	sims := make([]*sim, workers)
	for w := range sims {
		s, err := newSim(m)
		if err != nil {
			return Prediction{}, err
		}
		sims[w] = s
	}
	names := flash.Names()
	values := make([][]float64, len(names))
	for k := range values {
		values[k] = make([]float64, runs)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	var wg sync.WaitGroup
	for _, s := range sims {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				r := int(next.Add(1) - 1)
				if r >= runs {
					return
				}
				f, err := s.runContext(ctx, seed+int64(r))
				if err != nil {
					cancel(err) // the first error is the one reported
					return
				}
				// Each run has its own index: no two workers write the same
				// element, and the figures are in seed order whoever ran
				// them.
				for k, n := range names {
					values[k][r] = f.Value(n.Key)
				}
			}
		}()
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return Prediction{}, err
	}
	p := Prediction{Runs: runs, Seed: seed, Figures: make(map[string]Range, len(names))}
	for k, n := range names {
		v := values[k]
		var sum float64
		for _, x := range v {
			sum += x
		}
		slices.Sort(v)
		p.Figures[n.Key] = Range{Mean: sum / float64(runs), P5: stats.Percentile(v, 5), P95: stats.Percentile(v, 95), Min: v[0], Max: v[runs-1]}
	}
	return p, nil
}
