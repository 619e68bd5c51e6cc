package predict

import (
	"fmt"
	"testing"

	"github.com/gameday-dev/gameday/checkout/admission"
	"github.com/gameday-dev/gameday/gameday/load"
)

// BenchmarkPredictScale is one run of the peak scenario with its arrivals,
// payment slots and room scaled together by 1, 8 and 47 (64 to 3,008
// arrivals a second), side by side: attempts/arrival says whether the work
// per shopper stays the same as the sale grows (it should: the cost is
// linear in arrivals), ns/arrival what that work costs.
//
//	go test -run '^$' -bench PredictScale -benchtime 1x ./gameday/predict/
func BenchmarkPredictScale(b *testing.B) {
	for _, mode := range []admission.Mode{admission.ModeQueue, admission.ModeLottery, admission.ModeFair} {
		for _, k := range []float64{1, 8, 47} {
			b.Run(fmt.Sprintf("%s/x%g", mode, k), func(b *testing.B) {
				m := peakModel(mode)
				for i := range m.Stages[:2] {
					m.Stages[i].Target *= k
				}
				m.Slots, m.Admission.InProgress = int(8*k), int(8*k)
				s, err := newSim(m)
				if err != nil {
					b.Fatal(err)
				}
				n := len(load.Schedule(m.Stages))
				for b.Loop() {
					if _, err := s.run(1); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/arrival")
				b.ReportMetric(float64(len(s.attempts))/float64(n), "attempts/arrival")
			})
		}
	}
}
