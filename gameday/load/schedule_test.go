package load

import (
	"math"
	"slices"
	"testing"
	"time"
)

func TestSchedule(t *testing.T) {
	const ms = time.Millisecond
	tests := []struct {
		name   string
		stages []Stage
		want   int           // arrivals
		first  time.Duration // offset of the first arrival (when want > 0)
		last   time.Duration // offset of the last arrival (when want > 0)
		// from and gap, when gap > 0: arrivals from index from on are
		// exactly gap apart (a constant rate is evenly spaced).
		from int
		gap  time.Duration
	}{
		// A ramp from 0 to 100/s over 1 s has area 50; a hold at 100/s for
		// 2 s adds rate × duration = 200, one every 10 ms, the last at the
		// very end of the stage.
		{
			name:   "constant stage after a ramp",
			stages: []Stage{{Duration: time.Second, Target: 100}, {Duration: 2 * time.Second, Target: 100}},
			want:   250, first: time.Duration(math.Round(math.Sqrt(0.02) * 1e9)), last: 3 * time.Second,
			from: 50, gap: 10 * ms,
		},
		// The benchmark's plan: a 1 ms ramp (half an arrival) then 1,000/s
		// for 2 s is 2,000 arrivals 1 ms apart, each half a gap into its
		// millisecond because the ramp's half arrival carries over.
		{
			name:   "constant 1000/s for 2s",
			stages: []Stage{{Duration: ms, Target: 1000}, {Duration: 2 * time.Second, Target: 1000}},
			want:   2000, first: ms + ms/2, last: 2*time.Second + ms/2,
			from: 0, gap: ms,
		},
		// A ramp from 0: the count is the area (100/s × 2 s / 2 = 100) and
		// the first arrival comes when the area reaches 1, at
		// sqrt(2·D/R) = 0.2 s, not at 0.
		{
			name:   "ramp from 0",
			stages: []Stage{{Duration: 2 * time.Second, Target: 100}},
			want:   100, first: 200 * ms, last: 2 * time.Second,
		},
		// Up to 100/s over 1 s and down to 0 over 1 s: a triangle of area
		// 100, symmetric, so the first arrival is as far from the start as
		// the second-to-last is from the end, and the last is at the end.
		{
			name:   "ramp up and down",
			stages: []Stage{{Duration: time.Second, Target: 100}, {Duration: time.Second, Target: 0}},
			want:   100, first: time.Duration(math.Round(math.Sqrt(0.02) * 1e9)), last: 2 * time.Second,
		},
		// A stage of 0 (from 0 to 0) is a pause: no arrival in it, and the
		// next ramp starts after it.
		{
			name:   "stage of 0 then a ramp",
			stages: []Stage{{Duration: time.Second, Target: 0}, {Duration: time.Second, Target: 100}},
			want:   50, first: time.Second + time.Duration(math.Round(math.Sqrt(0.02)*1e9)), last: 2 * time.Second,
		},
		// Only stages of 0: no arrival at all.
		{
			name:   "only zero",
			stages: []Stage{{Duration: time.Second, Target: 0}, {Duration: time.Hour, Target: 0}},
			want:   0,
		},
		// No stage: no arrival.
		{name: "none", want: 0},
		// Fractions carry over: 0→2.5/s over 1 s is 1.25 arrivals, a hold
		// for 1 s adds 2.5: floor(3.75) = 3, not floor(1.25)+floor(2.5).
		{
			name:   "fractions carry over",
			stages: []Stage{{Duration: time.Second, Target: 2.5}, {Duration: time.Second, Target: 2.5}},
			want:   3, first: time.Duration(math.Round(math.Sqrt(0.8) * 1e9)), last: time.Second + 700*ms,
		},
		// A rate too low for one whole arrival gives none.
		{
			name:   "less than one arrival",
			stages: []Stage{{Duration: time.Second, Target: 1.9}},
			want:   0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Schedule(tt.stages)
			if len(got) != tt.want {
				t.Fatalf("%d arrivals, want %d", len(got), tt.want)
			}
			if !slices.IsSorted(got) {
				t.Fatal("schedule is not monotone")
			}
			if tt.want == 0 {
				return
			}
			near := func(what string, got, want time.Duration) {
				t.Helper()
				if d := got - want; d < -time.Microsecond || d > time.Microsecond {
					t.Errorf("%s at %v, want %v", what, got, want)
				}
			}
			near("first", got[0], tt.first)
			near("last", got[len(got)-1], tt.last)
			if tt.gap > 0 {
				for i := tt.from + 1; i < len(got); i++ {
					if d := got[i] - got[i-1]; d != tt.gap {
						t.Fatalf("gap %d→%d is %v, want %v", i-1, i, d, tt.gap)
					}
				}
			}
			var total time.Duration
			for _, st := range tt.stages {
				total += st.Duration
			}
			if got[0] <= 0 || got[len(got)-1] > total {
				t.Errorf("arrivals from %v to %v, outside (0, %v]", got[0], got[len(got)-1], total)
			}
		})
	}
}

// TestScheduleIsTheIntegral checks the closed form against the definition
// on a plan with every kind of stage: at each arrival's offset the area
// under the rate is its index + 1.
func TestScheduleIsTheIntegral(t *testing.T) {
	stages := []Stage{
		{Duration: 3 * time.Second, Target: 300}, // ramp up
		{Duration: 2 * time.Second, Target: 300}, // hold
		{Duration: time.Second, Target: 50},      // ramp down
		{Duration: time.Second, Target: 0},       // to nothing
		{Duration: time.Second, Target: 0},       // pause
		{Duration: 500 * time.Millisecond, Target: 1000},
	}
	area := func(at time.Duration) float64 {
		var a, prev float64
		var base time.Duration
		for _, st := range stages {
			d := min(at-base, st.Duration).Seconds()
			if d <= 0 {
				break
			}
			r := prev + (st.Target-prev)*d/st.Duration.Seconds()
			a += (prev + r) / 2 * d
			base += st.Duration
			prev = st.Target
		}
		return a
	}
	got := Schedule(stages)
	if want := int(450 + 600 + 175 + 25 + 0 + 250); len(got) != want {
		t.Fatalf("%d arrivals, want %d", len(got), want)
	}
	for i, at := range got {
		if a := area(at); math.Abs(a-float64(i+1)) > 1e-3 {
			t.Fatalf("arrival %d at %v: area %.6f, want %d", i, at, a, i+1)
		}
	}
}

// A held stage's rate is its target from its start: after a ramp to 10/s,
// a stage held at 40/s for 1 s is 40 arrivals 25 ms apart, not a ramp from
// 10 (25 arrivals); a held stage at 0 is a pause, whatever came before.
func TestScheduleHeldStages(t *testing.T) {
	const ms = time.Millisecond
	got := Schedule([]Stage{{Duration: time.Second, Target: 10}, {Duration: time.Second, Target: 40, Hold: true}, {Duration: time.Second, Target: 0, Hold: true}, {Duration: time.Second, Target: 4, Hold: true}})
	var held, paused, last []time.Duration
	for _, at := range got {
		switch {
		case at <= time.Second:
		case at <= 2*time.Second:
			held = append(held, at)
		case at <= 3*time.Second:
			paused = append(paused, at)
		default:
			last = append(last, at)
		}
	}
	if len(held) != 40 || len(paused) != 0 || len(last) != 4 {
		t.Fatalf("%d, %d, %d arrivals in the held, paused and last seconds; want 40, 0, 4", len(held), len(paused), len(last))
	}
	for i := 1; i < len(held); i++ {
		if d := held[i] - held[i-1]; d < 25*ms-time.Microsecond || d > 25*ms+time.Microsecond {
			t.Fatalf("held arrivals %d and %d are %s apart, want 25ms", i-1, i, d)
		}
	}
	if n := arrivals([]Stage{{Duration: time.Second, Target: 10}, {Duration: time.Second, Target: 40, Hold: true}}); n != 45 {
		t.Errorf("arrivals %v, want 45 (5 over the ramp, 40 held)", n)
	}
}

// PerSecond is the plan's rate integrated over each second: Schedule's
// arrivals in every second are within one of it, and the seconds add up
// to the whole plan.
func TestPerSecondIsTheScheduleSecondBySecond(t *testing.T) {
	for _, c := range []struct {
		name   string
		stages []Stage
		want   []float64 // nil: only the agreement with Schedule
	}{
		{"held", []Stage{{Duration: 3 * time.Second, Target: 40, Hold: true}}, []float64{40, 40, 40}},
		{"ramp", []Stage{{Duration: 2 * time.Second, Target: 100}}, []float64{25, 75}},
		{"pause then hold", []Stage{{Duration: 1500 * time.Millisecond}, {Duration: time.Second, Target: 10, Hold: true}}, []float64{0, 5, 5}},
		{"a replay's buckets", []Stage{
			{Duration: 400 * time.Millisecond, Target: 37.5, Hold: true}, {Duration: 1300 * time.Millisecond, Target: 180, Hold: true},
			{Duration: 2900 * time.Millisecond, Target: 61, Hold: true}, {Duration: 700 * time.Millisecond, Target: 300},
		}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			var total time.Duration
			for _, st := range c.stages {
				total += st.Duration
			}
			n := int((total + time.Second - 1) / time.Second)
			got := PerSecond(c.stages, n)
			for i, w := range c.want {
				if math.Abs(got[i]-w) > 1e-9 {
					t.Errorf("second %d: %g, want %g", i, got[i], w)
				}
			}
			count := make([]int, n)
			for _, at := range Schedule(c.stages) {
				count[min(int(at/time.Second), n-1)]++
			}
			sum := 0.0
			for i := range n {
				sum += got[i]
				if math.Abs(float64(count[i])-got[i]) >= 1+1e-9 {
					t.Errorf("second %d: %d arrivals scheduled, %g planned", i, count[i], got[i])
				}
			}
			if math.Abs(sum-arrivals(c.stages)) >= 1 {
				t.Errorf("the seconds add up to %g, the plan has %g arrivals", sum, arrivals(c.stages))
			}
		})
	}
}
