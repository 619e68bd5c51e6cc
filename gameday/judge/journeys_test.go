package judge

import (
	"strings"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/runrecord"
	"github.com/gameday-dev/gameday/scenarios"
)

// visitors makes n visits of a journey arriving from `from`, one every
// 10ms, two pages each answered in lat; every k-th (k > 0) is refused on
// its second page.
func visitors(journey string, from time.Duration, n int, lat time.Duration, k int) []Shopper {
	var out []Shopper
	for i := range n {
		at := from + time.Duration(i)*10*time.Millisecond
		s := Shopper{ID: journey + "-" + at.String(), Journey: journey, Scheduled: at, Outcome: OK,
			Attempts: []Attempt{{At: at, Latency: lat, Status: "next"}, {At: at + time.Second, Latency: lat, Status: "ok"}}}
		if k > 0 && i%k == 0 {
			s.Outcome, s.Attempts[1].Status = Unavailable, "unavailable"
		}
		out = append(out, s)
	}
	return out
}

// The product page's blast radius: its visitors during the checkout's
// burst against the same journey before it. A page that slows or fails
// in the burst breaks it; purchases, however slow, do not count.
func TestBlastRadiusBetweenJourneys(t *testing.T) {
	w := Windows{End: 3 * time.Second}
	within := 0.5
	promise := &scenarios.BlastRadius{Select: scenarios.Select{Journeys: []string{"browse"}}, From: scenarios.Duration(time.Second), To: scenarios.Duration(2 * time.Second),
		BaselineTo: scenarios.Duration(time.Second), ConfirmedAtLeast: 0.95, P95Within: &within, P95Slack: scenarios.Duration(time.Millisecond)}
	sc := &scenarios.Scenario{Expect: []scenarios.Expectation{{BlastRadius: promise}}}
	judge := func(parts ...[]Shopper) ExpectationResult {
		var all []Shopper
		for _, p := range parts {
			all = append(all, p...)
		}
		return Evaluate(sc, all, w, nil, nil, nil, nil, nil)[0]
	}
	before := visitors("browse", 0, 100, 2*time.Millisecond, 0)
	slowBuyers := shopShoppers("", time.Second, 100, 900*time.Millisecond, 2)
	r := judge(before, visitors("browse", time.Second, 100, 2*time.Millisecond, 0), slowBuyers)
	if !r.Held || !strings.Contains(r.Promise, "visitors in journey browse keep at least 95% of their successes (ok)") {
		t.Fatalf("pages as fast in the burst, buyers slow and refused: %+v", r)
	}
	if r = judge(before, visitors("browse", time.Second, 100, 20*time.Millisecond, 0)); r.Held || !strings.Contains(r.Observed, "pages' p95 20ms against 2ms") {
		t.Fatalf("pages ten times as slow in the burst: %+v", r)
	}
	if r = judge(before, visitors("browse", time.Second, 100, 2*time.Millisecond, 5)); r.Held || !strings.Contains(r.Observed, "80.0% of the baseline's successes (ok) kept") {
		t.Fatalf("a fifth of the pages refused in the burst: %+v", r)
	}
	// Another journey's failures are not the product page's.
	if r = judge(before, visitors("browse", time.Second, 100, 2*time.Millisecond, 0), visitors("cart", time.Second, 100, time.Second, 1)); !r.Held {
		t.Fatalf("carts failing beside a healthy page: %+v", r)
	}
}

// Latency and ratio promises read the purchases unless they name
// journeys; named, they read those journeys' visits (purchase: the
// purchases); other promises never read visits.
func TestPromisesNarrowedToJourneys(t *testing.T) {
	w := Windows{End: 3 * time.Second}
	atLeast := 0.99
	lat := func(journeys ...string) scenarios.Expectation {
		return scenarios.Expectation{Latency: &scenarios.LatencyBound{Select: scenarios.Select{Journeys: journeys}, Window: "all", Percentile: 95, Below: scenarios.Duration(50 * time.Millisecond)}}
	}
	ratio := func(outcome string, journeys ...string) scenarios.Expectation {
		return scenarios.Expectation{Ratio: &scenarios.RatioBound{Select: scenarios.Select{Journeys: journeys}, Window: "all", Outcomes: []string{outcome}, AtLeast: &atLeast}}
	}
	sc := &scenarios.Scenario{Expect: []scenarios.Expectation{
		lat(), lat("browse"), lat("cart"), lat("purchase"),
		ratio("confirmed"), ratio("ok", "browse"), ratio("ok", "cart"), ratio("confirmed", "purchase"),
		{Degraded: &scenarios.DegradedSeen{Window: "all", AtLeast: 1}},
	}}
	all := append(shopShoppers("", 0, 100, 10*time.Millisecond, 0), visitors("browse", 0, 100, 5*time.Millisecond, 0)...)
	cart := visitors("cart", 0, 100, 200*time.Millisecond, 2)
	for i := range cart {
		cart[i].Attempts[0].Degraded = true
	}
	all = append(all, cart...)
	got := Evaluate(sc, all, w, nil, nil, nil, nil, nil)
	want := []bool{true, true, false, true, true, true, false, true, false}
	for i, r := range got {
		if r.Held != want[i] {
			t.Errorf("promise %d (%s): held %v, want %v: %s", i, r.Promise, r.Held, want[i], r.Observed)
		}
	}
	if !strings.Contains(got[1].Observed, "over 200 requests") || !strings.Contains(got[5].Observed, "100 of 100") {
		t.Errorf("the browse promises read other visits: %q, %q", got[1].Observed, got[5].Observed)
	}
}

// A visit the load generator dropped fails the run's dropped invariant as
// a dropped purchase does: the store's traffic was not the scenario's,
// however well the pages that were sent did.
func TestADroppedVisitIsADrop(t *testing.T) {
	sc := &scenarios.Scenario{}
	o := &Observations{
		End:      3 * time.Second,
		Shoppers: []Shopper{{ID: "s1-0", Outcome: Confirmed, Attempts: []Attempt{{Status: "confirmed"}}}},
		Visits:   visitors("browse", 0, 10, time.Millisecond, 0),
		Books: []Books{{Name: "shop", Facts: &Facts{OrdersKnown: true, ChargesKnown: true,
			Orders: []Order{{CheckoutID: "s1-0", Units: 1, Charge: "ch0"}}, Charges: []Charge{{CheckoutID: "s1-0", ID: "ch0", Status: "approved"}}}}},
	}
	if j := Run(sc, o); j.Invariants.Dropped != 0 || j.Verdict != runrecord.VerdictPass {
		t.Fatalf("nothing dropped: %s (%s), %+v", j.Verdict, j.Reason, j.Invariants)
	}
	o.Visits[3].Outcome, o.Visits[3].Attempts = Dropped, nil
	if j := Run(sc, o); j.Invariants.Dropped != 1 || j.Verdict != runrecord.VerdictFail {
		t.Fatalf("a visit dropped: %s (%s), %+v", j.Verdict, j.Reason, j.Invariants)
	}
}
