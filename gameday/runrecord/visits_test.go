package runrecord

import "testing"

// The visits are said journey by journey, in order, each one's outcomes
// most frequent first.
func TestVisitsText(t *testing.T) {
	r := &Record{Visits: map[string]map[string]int{
		"cart":   {"unavailable": 2, "ok": 398, "error": 2},
		"browse": {"ok": 1120},
	}}
	if got, want := r.VisitsText(), "browse ok 1120; cart ok 398, error 2, unavailable 2"; got != want {
		t.Fatalf("%q, want %q", got, want)
	}
	if got := (&Record{}).VisitsText(); got != "" {
		t.Fatalf("no visits: %q", got)
	}
}
