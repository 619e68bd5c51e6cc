package hostmon

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/runrecord"
)

// The monitor keeps every stall of StarvedStall or more as a span, from
// when its tick was due to when it ran, joining stalls that meet; smaller
// ones are only in the figures.
func TestMonitorKeepsStarvedSpans(t *testing.T) {
	t0 := time.Unix(1000, 0)
	m := &Monitor{start: t0}
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	m.tick(at(50), 2*time.Millisecond)
	m.tick(at(1200), 150*time.Millisecond)  // [1050, 1200)
	m.tick(at(1290), 100*time.Millisecond)  // [1190, 1290): meets the one before
	m.tick(at(2500), 99*time.Millisecond)   // just under the bar
	m.tick(at(4000), 1000*time.Millisecond) // [3000, 4000)
	spans, cut := m.Spans()
	want := []runrecord.StallSpan{{FromMS: 1050, ToMS: 1290}, {FromMS: 3000, ToMS: 4000}}
	if !slices.Equal(spans, want) || cut != 0 {
		t.Errorf("spans %v cut %d, want %v", spans, cut, want)
	}
	h := m.Record()
	if h.StallMaxMS != 1000 || len(h.Stalls) != 4 || h.Stalls[0].AtMS != 4000 || !slices.Equal(h.StarvedSpans, want) {
		t.Errorf("record: %+v", h)
	}
}

// Past maxSpans, stalls are counted, not kept: evidence is bounded, and
// what was left out is said.
func TestMonitorBoundsItsSpans(t *testing.T) {
	t0 := time.Unix(1000, 0)
	m := &Monitor{start: t0}
	for i := range maxSpans + 3 {
		m.tick(t0.Add(time.Duration(i+1)*time.Second), StarvedStall)
	}
	spans, cut := m.Spans()
	if len(spans) != maxSpans || cut != 3 {
		t.Errorf("%d spans kept, %d cut; want %d and 3", len(spans), cut, maxSpans)
	}
}

// The CPU pressure is read once a tenth of a second, from a file kept
// open (a tick within the tenth already read reads nothing), and what it
// grew by over the run is the run's pressure.
func TestHostMonitorPressure(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu")
	write := func(total int) {
		t.Helper()
		if err := os.WriteFile(path, []byte(fmt.Sprintf("some avg10=0.00 avg60=0.00 avg300=0.00 total=%d\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", total)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(1_000_000)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	t0 := time.Unix(1000, 0)
	m := &Monitor{start: t0, now: func() time.Time { return t0.Add(time.Second) }, psi: true, psiF: f, psiFD: int(f.Fd()), psi0: 1_000_000, psiLast: 1_000_000, psiAt: t0}
	tick := func(at time.Duration) { m.tick(t0.Add(at), 0) }
	write(1_050_000) // 50 ms of pressure in the first tenth
	tick(10 * time.Millisecond)
	tick(90 * time.Millisecond) // still the first tenth: not read
	tick(105 * time.Millisecond)
	write(1_110_000) // then 60 ms over the next three tenths (a stalled runner)
	tick(410 * time.Millisecond)
	write(1_110_000) // and none
	tick(510 * time.Millisecond)
	if h := m.Record(); h.CPUPressurePct == nil || *h.CPUPressurePct != 21.6 {
		t.Errorf("record: %v %%, want 21.6 (110 ms over the 510 ms read)", h.CPUPressurePct)
	}
}
