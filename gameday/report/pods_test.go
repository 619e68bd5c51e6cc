package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/gameday-dev/gameday/gameday/runrecord"
)

// A run of pods shows each pod's traffic and latency side by side, on
// the same scales: the quiet pod's axes reach as high as the busy one's.
func TestPodsSideBySide(t *testing.T) {
	r := readFixture(t, "pass")
	busy, quiet := r.Series, r.Series
	quiet.Arrivals = make([]int, len(busy.Arrivals))
	quiet.Outcomes = map[string][]int{"confirmed": make([]int, len(busy.Arrivals))}
	for i, a := range busy.Arrivals {
		quiet.Arrivals[i] = a / 10
		quiet.Outcomes["confirmed"][i] = a / 10
	}
	r.Pods = []runrecord.Pod{{Name: "pod-1", Shops: []string{"hot"}, Series: busy}, {Name: "pod-2", Shops: []string{"calm"}, Series: quiet}}
	var b bytes.Buffer
	if err := HTML(&b, r); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	i1, i2 := strings.Index(page, `id="chart-pod-1-traffic"`), strings.Index(page, `id="chart-pod-2-traffic"`)
	if !strings.Contains(page, `<h2 id="h-pods">Pod by pod</h2>`) || i1 < 0 || i2 < i1 || !strings.Contains(page, `id="chart-pod-2-latency"`) || !strings.Contains(page, "pod-2 <span class=\"muted\">(calm)</span>") {
		t.Fatal("the report does not show each pod's charts, in order, with its shops")
	}
	// The highest y-axis label of each pod's traffic chart is the same.
	top := func(svg string) string {
		axis := svg[strings.Index(svg, `class="y-axis"`):]
		labels := regexp.MustCompile(`text-anchor="end">([0-9.,]+)<`).FindAllStringSubmatch(axis, -1)
		if len(labels) == 0 {
			t.Fatalf("no axis labels in %.200s", svg)
		}
		return labels[len(labels)-1][1]
	}
	end1, end2 := strings.Index(page[i1:], "</svg>"), strings.Index(page[i2:], "</svg>")
	if a, b := top(page[i1:i1+end1]), top(page[i2:i2+end2]); a != b {
		t.Fatalf("pod-1's traffic axis reaches %s, pod-2's %s: not one scale", a, b)
	}
	// Without pods, no such section.
	r.Pods = nil
	b.Reset()
	if err := HTML(&b, r); err != nil || strings.Contains(b.String(), "h-pods") {
		t.Fatalf("a run without pods shows a pods section (%v)", err)
	}
}
