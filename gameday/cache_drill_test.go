package gameday_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gameday-dev/gameday/gameday"
	"github.com/gameday-dev/gameday/scenarios"
)

// The cache drills pass on the reference checkout, and fail with its
// defences switched off: the catalogue's load breaks its promise without
// coalescing, the product page's without serving stale, the buyers' when
// a checkout cannot do without its sessions. Each cache fault says what
// it did to the data.
func TestCacheDrillsNoticeTheFallbacksOff(t *testing.T) {
	off := false
	for _, tc := range []struct {
		scenario string
		coalesce *bool
		stale    *bool
		noGuest  bool
		// broken are the promises a run with a defence off must break,
		// by the start of their text; none: the run passes.
		broken []string
	}{
		{scenario: "product-cache-flush"},
		{scenario: "product-cache-flush", coalesce: &off, broken: []string{"origin_requests a second"}},
		{scenario: "product-cache-flush", stale: &off, broken: []string{"at least 99% of visitors in journey browse", "p95 of requests in journey browse"}},
		{scenario: "product-hot-keys"},
		{scenario: "product-hot-keys", coalesce: &off, broken: []string{"origin_requests a second"}},
		{scenario: "sessions-memory-limit"},
		{scenario: "sessions-memory-limit", noGuest: true, broken: []string{"at least 8 answers during the fault are marked degraded", // 20 at the tests' time scale
			"at least 90% of shoppers arriving during the fault", "at most 1% of shoppers arriving over the whole run", "p95 of confirmed answers"}},
	} {
		sc := lookup(t, tc.scenario)
		name := tc.scenario
		switch {
		case tc.coalesce != nil || tc.stale != nil:
			sc = sc.Clone()
			sc.Checkout.Product = scenarios.ProductPage{Coalesce: tc.coalesce, ServeStale: tc.stale}
			name += map[bool]string{true: "-no-coalesce", false: "-no-stale"}[tc.coalesce != nil]
		case tc.noGuest:
			sc = sc.Clone()
			sc.Checkout.GuestFallback = &off
			name += "-no-guest"
		}
		sc.Name = name
		t.Run(name, func(t *testing.T) {
			rec := run(t, context.Background(), sc, options(t))
			want := gameday.VerdictPass
			if len(tc.broken) > 0 {
				want = gameday.VerdictFail
			}
			if rec.Verdict != want {
				t.Fatalf("verdict %s (%s), want %s\n%+v", rec.Verdict, rec.Reason, want, rec.Expectations)
			}
			var broke []string
			for _, e := range rec.Expectations {
				if !e.Held && !e.NotChecked {
					broke = append(broke, e.Promise)
				}
			}
			if len(broke) != len(tc.broken) {
				t.Errorf("broken promises %q; want those starting %q", broke, tc.broken)
			}
			for i, b := range broke {
				if i < len(tc.broken) && !strings.HasPrefix(b, tc.broken[i]) {
					t.Errorf("broken promise %q; want one starting %q", b, tc.broken[i])
				}
			}
			// The books balance, whatever the page and the sessions did.
			for _, inv := range rec.InvariantChecks {
				if !inv.Held || inv.Unjudged != "" {
					t.Errorf("invariant %s: %s (%s)", inv.Invariant, inv.Observed, inv.Unjudged)
				}
			}
			cacheFaults := 0
			for _, f := range rec.Faults {
				if !strings.HasPrefix(f.Kind, "cache-") {
					continue
				}
				cacheFaults++
				if f.Cache == nil || f.Cache.Idle() != "" || f.Error != "" || (f.Kind == scenarios.KindCacheLimit && f.Cache.Refused == 0) {
					t.Errorf("fault %s: %+v, error %q; want the keys it cleared, or the writes it refused", f.Name, f.Cache, f.Error)
				}
				// A round at its start and every second after (the drill's
				// time scale shortens the fault, not the cache's clock).
				if secs := int((f.EndMS - f.StartMS) / 1000); f.Kind == scenarios.KindCacheExpire && f.Cache.Rounds < secs {
					t.Errorf("fault %s ran %d rounds in %d s at 1 s", f.Name, f.Cache.Rounds, secs)
				}
			}
			if cacheFaults != 1 {
				t.Errorf("%d cache faults recorded", cacheFaults)
			}
		})
	}
}
