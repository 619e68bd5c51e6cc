package judge

import (
	"strings"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/scenarios"
)

// shopShoppers makes n shoppers of a shop arriving from `from`, one every
// 10ms, each confirmed in lat, or, for every k-th (k > 0), refused.
func shopShoppers(shop string, from time.Duration, n int, lat time.Duration, k int) []Shopper {
	var out []Shopper
	for i := range n {
		at := from + time.Duration(i)*10*time.Millisecond
		s := Shopper{ID: shop + "-" + at.String(), Shop: shop, Scheduled: at, Outcome: Confirmed,
			Attempts: []Attempt{{At: at, Latency: lat, Status: "confirmed"}}}
		if k > 0 && i%k == 0 {
			s.Outcome, s.Attempts[0].Status = Unavailable, "unavailable"
		}
		out = append(out, s)
	}
	return out
}

func TestBlastRadiusComparesTheSelectedShopsWithTheirBaseline(t *testing.T) {
	shops := []scenarios.Shop{{Name: "a", Pod: "pod-1"}, {Name: "b", Pod: "pod-2"}, {Name: "c", Pod: "pod-3"}}
	w := Windows{Faults: []Span{{From: time.Second, Lifted: 2 * time.Second, To: 2 * time.Second}}, End: 3 * time.Second}
	within := 0.1
	promise := &scenarios.BlastRadius{Select: scenarios.Select{Pods: []string{"pod-1", "pod-3"}}, Window: "during", Baseline: "before",
		ConfirmedAtLeast: 0.95, P95Within: &within, P95Slack: scenarios.Duration(time.Millisecond)}
	sc := &scenarios.Scenario{Shops: shops, Expect: []scenarios.Expectation{{BlastRadius: promise}}}
	judge := func(all ...[]Shopper) ExpectationResult {
		var ss []Shopper
		for _, x := range all {
			ss = append(ss, x...)
		}
		return Evaluate(sc, ss, w, nil, nil, nil, nil, nil)[0]
	}

	// Pod 2 is down during the fault; the others see nothing of it.
	steady := [][]Shopper{
		shopShoppers("a", 0, 100, 5*time.Millisecond, 0), shopShoppers("a", time.Second, 100, 5*time.Millisecond, 0),
		shopShoppers("c", 0, 100, 5*time.Millisecond, 0), shopShoppers("c", time.Second, 100, 5*time.Millisecond, 0),
		shopShoppers("b", 0, 100, 5*time.Millisecond, 0), shopShoppers("b", time.Second, 100, 5*time.Millisecond, 1),
	}
	if r := judge(steady...); !r.Held || !strings.Contains(r.Promise, "on pod-1, pod-3") {
		t.Fatalf("pod 2's outage counted against the other pods: %+v", r)
	}

	// A pod that loses a tenth of its confirmations breaks the promise.
	leaky := append(steady[:1:1], shopShoppers("c", 0, 100, 5*time.Millisecond, 0), shopShoppers("c", time.Second, 100, 5*time.Millisecond, 10))
	if r := judge(leaky...); r.Held || !strings.Contains(r.Observed, "90.0% of the baseline's confirmations") {
		t.Fatalf("a pod losing 10%% of its confirmations kept the promise: %+v", r)
	}

	// Slower by more than 10 % and the slack: broken; within: kept.
	slow := [][]Shopper{shopShoppers("a", 0, 100, 10*time.Millisecond, 0), shopShoppers("a", time.Second, 100, 13*time.Millisecond, 0)}
	if r := judge(slow...); r.Held {
		t.Fatalf("a p95 from 10ms to 13ms is within 10%% + 1ms: %+v", r)
	}
	ok := [][]Shopper{shopShoppers("a", 0, 100, 10*time.Millisecond, 0), shopShoppers("a", time.Second, 100, 11900*time.Microsecond, 0)}
	if r := judge(ok...); !r.Held {
		t.Fatalf("a p95 from 10ms to 11.9ms is within 10%% + 1ms: %+v", r)
	}

	// No baseline: not held, and says why.
	if r := judge(shopShoppers("a", time.Second, 100, 5*time.Millisecond, 0)); r.Held || !strings.Contains(r.Observed, "no confirmation in the baseline") {
		t.Fatalf("a promise with nothing to compare with held: %+v", r)
	}
}

func TestRatioAndLatencyPromisesCanBeNarrowedToShops(t *testing.T) {
	shops := []scenarios.Shop{{Name: "hot", Pod: "pod-1"}, {Name: "calm", Pod: "pod-2"}}
	least := 0.99
	sc := &scenarios.Scenario{Shops: shops, Expect: []scenarios.Expectation{
		{Ratio: &scenarios.RatioBound{Select: scenarios.Select{Shops: []string{"calm"}}, Window: "all", Outcomes: []string{"confirmed"}, AtLeast: &least}},
		{Ratio: &scenarios.RatioBound{Window: "all", Outcomes: []string{"confirmed"}, AtLeast: &least}},
		{Latency: &scenarios.LatencyBound{Select: scenarios.Select{Pods: []string{"pod-2"}}, Window: "all", Percentile: 95, Below: scenarios.Duration(10 * time.Millisecond)}},
	}}
	ss := append(shopShoppers("hot", 0, 100, 50*time.Millisecond, 2), shopShoppers("calm", 0, 100, 5*time.Millisecond, 0)...)
	rs := Evaluate(sc, ss, Windows{End: 2 * time.Second}, nil, nil, nil, nil, nil)
	if !rs[0].Held || rs[1].Held || !rs[2].Held {
		t.Fatalf("the calm shop's promises must hold and the whole sale's not: %+v", rs)
	}
	if !strings.Contains(rs[0].Promise, "of shop calm") || !strings.Contains(rs[2].Promise, "on pod-2") {
		t.Fatalf("the promises do not say whose shoppers they judge: %q, %q", rs[0].Promise, rs[2].Promise)
	}
}
