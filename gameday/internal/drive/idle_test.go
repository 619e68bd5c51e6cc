package drive

import (
	"slices"
	"strings"
	"testing"

	"github.com/gameday-dev/gameday/gameday/runrecord"
)

// A request-aware fault counts as having acted only when its hits say so:
// one that acted on nothing, and one whose hits could not be read back
// (whether it acted is not known), make a drill that held up to them
// prove nothing of them. A fault that never went in, and one that is not
// request-aware, are not asked.
func TestAFaultWhoseHitsAreUnknownDidNotAct(t *testing.T) {
	faults := []runrecord.FaultRecord{
		{Name: "acted", Target: "db", Kind: "lost_reply", Hits: &runrecord.RequestHits{Matched: 3, Hit: 1, Lost: 1}},
		{Name: "idle", Target: "db", Kind: "lost_reply", Hits: &runrecord.RequestHits{}},
		{Name: "unread", Target: "pay", Kind: "http_error", HitsError: "read what unread did from the Toxiproxy at 127.0.0.1:1: no toxic"},
		{Name: "never-read", Target: "pay", Kind: "http_latency"},
		{Name: "not-in", Target: "db", Kind: "lost_reply", Error: "inject: refused"},
		{Name: "slow", Target: "db", Kind: "latency"},
	}
	var names []string
	for _, s := range idleFaults(faults) {
		name, _, _ := strings.Cut(s, " ")
		names = append(names, name)
	}
	if !slices.Equal(names, []string{"idle", "unread", "never-read"}) {
		t.Errorf("idle faults %q, want idle, unread, never-read", idleFaults(faults))
	}
}
