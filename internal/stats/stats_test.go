package stats

import (
	"testing"
	"time"
)

func TestPercentileIsNearestRank(t *testing.T) {
	ten := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, c := range []struct {
		p    float64
		want int
	}{{50, 5}, {95, 10}, {90, 9}, {10, 1}, {11, 2}, {99, 10}, {100, 10}, {0, 1}, {-5, 1}, {150, 10}} {
		if got := Percentile(ten, c.p); got != c.want {
			t.Errorf("p%g of 1..10 = %d, want %d", c.p, got, c.want)
		}
	}
	upTo100 := make([]int, 100)
	for i := range upTo100 {
		upTo100[i] = i + 1
	}
	for p := 1; p <= 100; p++ {
		if got := Percentile(upTo100, float64(p)); got != p {
			t.Errorf("p%d of 1..100 = %d", p, got)
		}
	}
	if got := Percentile([]float64{2, 4}, 50); got != 2 {
		t.Errorf("median of two: %g, want the lower", got)
	}
	// p99 of 100 values is the 99th, not the greatest.
	hundred := make([]time.Duration, 100)
	hundred[99] = time.Second
	if got := Percentile(hundred, 99); got != 0 {
		t.Errorf("p99 of 99 zeros and a second: %v, want 0", got)
	}
	if got := Percentile([]time.Duration(nil), 95); got != 0 {
		t.Errorf("no values: %v", got)
	}
	in := []time.Duration{3, 1, 2}
	if got := PercentileOf(in, 100); got != 3 || in[0] != 3 {
		t.Errorf("PercentileOf = %v (input now %v): want 3, the input left as it was", got, in)
	}
}

func TestMSRoundsToTheHundredth(t *testing.T) {
	for d, want := range map[time.Duration]float64{
		1234567 * time.Nanosecond: 1.23, 1235001 * time.Nanosecond: 1.24, 0: 0, 2 * time.Second: 2000, 4999 * time.Nanosecond: 0, 5000 * time.Nanosecond: 0.01,
	} {
		if got := MS(d); got != want {
			t.Errorf("MS(%v) = %g, want %g", d, got, want)
		}
	}
}
