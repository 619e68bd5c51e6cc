package runrecord

import (
	"strings"
	"testing"
)

// A cache fault that did nothing — a flush or expiry that matched no key,
// a memory limit that evicted and refused nothing — cannot be said to
// have acted, and says why; one that did, or one never put in place, is
// not idle.
func TestCacheFaultThatDidNothingIsIdle(t *testing.T) {
	for _, tc := range []struct {
		rec  FaultRecord
		idle string
	}{
		{FaultRecord{Kind: "cache-flush", Cache: &CacheEffect{Pattern: "product:*", Rounds: 1}}, "cleared no key: none matched product:*"},
		{FaultRecord{Kind: "cache-flush", Cache: &CacheEffect{Pattern: "product:*", Rounds: 1, Keys: 3}}, ""},
		{FaultRecord{Kind: "cache-limit", Cache: &CacheEffect{MaxMemory: 2 << 20}}, "evicted no key and refused no write"},
		{FaultRecord{Kind: "cache-limit", Cache: &CacheEffect{MaxMemory: 2 << 20, Refused: 4}}, ""},
		{FaultRecord{Kind: "cache-expire", Error: "no Redis", Cache: &CacheEffect{Pattern: "x"}}, ""},
		{FaultRecord{Kind: "cache-expire", Cache: &CacheEffect{Pattern: "x", Keys: 40, Rounds: 3, Error: "expire x: i/o timeout"}}, "did not do all it was to: expire x: i/o timeout"},
	} {
		got := tc.rec.Idle()
		if (tc.idle == "") != (got == "") || !strings.Contains(got, tc.idle) {
			t.Errorf("%+v %+v: idle %q, want %q", tc.rec, tc.rec.Cache, got, tc.idle)
		}
	}
}
