package predict_test

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/gameday-dev/gameday/checkout/admission"
	"github.com/gameday-dev/gameday/gameday/predict"
	"github.com/gameday-dev/gameday/internal/testenv"
	"github.com/gameday-dev/gameday/scenarios"
)

// The benchmarks run a fixed prediction per iteration, so -benchtime 1x is
// the natural setting:
//
//	go test -run '^$' -bench . -benchtime 1x ./gameday/predict/
//
// Besides the wall time they report cpu-s/op, the process's CPU time (user
// plus system, getrusage) per prediction, which a busy machine inflates
// less than the wall time; it includes the garbage collector's work on
// other cores.

// peak is the peak scenario of issue 6 (peak_test.go).
var peak = predict.PeakModel

func benchPredict(b *testing.B, m predict.Model, runs int) {
	b.ReportAllocs()
	before, ok := testenv.CPUTime()
	for b.Loop() {
		if _, err := predict.Predict(m, runs, 1); err != nil {
			b.Fatal(err)
		}
	}
	if after, _ := testenv.CPUTime(); ok {
		b.ReportMetric((after-before).Seconds()/float64(b.N), "cpu-s/op")
	}
}

// BenchmarkPredictPeakLottery is 400 runs of the peak scenario in the
// lottery mode (N = 8): every shopper not let in asks again about once a
// second until its patience ends, about 24,000 attempts a run.
func BenchmarkPredictPeakLottery(b *testing.B) {
	benchPredict(b, peak(admission.ModeLottery), 400)
}

// BenchmarkPredictPeakFair is 40 runs of the same in the fair mode, whose
// every attempt signs or verifies a waiting-room token (HMAC-SHA256 in
// package admission): about 35,000 of them a run.
func BenchmarkPredictPeakFair(b *testing.B) {
	benchPredict(b, peak(admission.ModeFair), 40)
}

// BenchmarkPredictPeakQueue is 400 runs of the same in the queue mode: no
// retries, every shopper waits in the payment slots' queue.
func BenchmarkPredictPeakQueue(b *testing.B) {
	benchPredict(b, peak(admission.ModeQueue), 400)
}

// BenchmarkPredictCatalogue is what "gameday predict" and every drill of a
// peak-* scenario do: 400 runs of the catalogue scenario, on one worker
// (serial) and on as many as the machine has cores (parallel, the default),
// side by side in one run. runs/s is the figure to read:
//
//	go test -run '^$' -bench PredictCatalogue -benchtime 1x ./gameday/predict/
func BenchmarkPredictCatalogue(b *testing.B) {
	for _, name := range scenarios.CatalogueNames() {
		if !strings.HasPrefix(name, "peak-") {
			continue
		}
		sc, err := scenarios.Lookup(name)
		if err != nil {
			b.Fatal(err)
		}
		m, err := predict.FromScenario(sc)
		if err != nil {
			b.Fatal(err)
		}
		for _, par := range []struct {
			name    string
			workers int
		}{{"serial", 1}, {"parallel", runtime.GOMAXPROCS(0)}} {
			b.Run(name+"/"+par.name, func(b *testing.B) {
				const runs = 400
				for b.Loop() {
					if _, err := predict.PredictWith(context.Background(), m, runs, sc.Seed, par.workers); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(runs*b.N)/b.Elapsed().Seconds(), "runs/s")
			})
		}
	}
}
