package gameday

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/runrecord"
	"github.com/gameday-dev/gameday/scenarios"
)

// The prediction before a drill has a budget: past it the drill goes on
// without one and says so; an interrupt ends it at once and the run stops
// before its setup. The predictor here only waits for its context, as the
// real one (which looks at it every few thousand events) does.
func TestPredictionHasABudgetAndStopsOnInterrupt(t *testing.T) {
	waits := func(ctx context.Context, _ *scenarios.Scenario, _ int64, _ int) (*runrecord.Prediction, error) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Minute):
			return &runrecord.Prediction{}, nil
		}
	}
	big := &scenarios.Scenario{Name: "big"}
	o := Options{Predict: waits, PredictBudget: 50 * time.Millisecond}
	d := &drill{env: o.environment(big), o: o, sc: big, rec: &Record{}}
	start := time.Now()
	pred, err := d.predict(context.Background())
	if pred != nil || err == nil || !strings.Contains(err.Error(), "did not finish within its budget of 50ms") {
		t.Errorf("past the budget: prediction %v, %v", pred, err)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("the budget of 50ms took %s", took)
	}

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	rec, _, err := Run(ctx, big, Options{Predict: waits, RunsDir: t.TempDir()})
	if err != nil || rec.Verdict != VerdictInconclusive || rec.Reason != "interrupted before setup" || rec.Environment.Kind != "" {
		t.Errorf("interrupted: %v, verdict %s (%s), environment %+v, notes %q", err, rec.Verdict, rec.Reason, rec.Environment, rec.Notes)
	}
}
