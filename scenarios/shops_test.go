package scenarios

import (
	"strings"
	"testing"
)

const podsScenario = `
name: pods-test
matrix: {dependency: inventory, failure: down-in-one-pod}
stock: 100
environment: {pods: 2}
shops:
  - {name: hot, pod: pod-1, stock: 50, stages: [{duration: 2s, target: 0}, {duration: 2s, target: 40}]}
  - {name: calm, pod: pod-2}
load:
  stages: [{duration: 4s, target: 10}]
faults:
  - {target: pod-2/inventory, at: 1s, for: 2s, down: true}
expect:
  - blast_radius: {pods: [pod-1], confirmed_at_least: 0.95, p95_within: 0.1, p95_slack: 5ms}
  - ratio: {shops: [calm], window: before, outcomes: [confirmed], at_least: 0.9}
`

func TestShopsAndPodsParse(t *testing.T) {
	s, err := Parse("pods.yaml", []byte(podsScenario))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Shops) != 2 || s.Shops[0].Pod != "pod-1" || s.ShopStock(s.Shops[0]) != 50 || s.ShopStock(s.Shops[1]) != 100 {
		t.Fatalf("shops %+v", s.Shops)
	}
	b := s.Expect[0].BlastRadius
	if b.Window != WindowDuring || b.Baseline != WindowBefore {
		t.Fatalf("blast radius windows %q against %q, want during against before", b.Window, b.Baseline)
	}
	if got := s.Expect[1].Ratio.ShopSet(s.Shops); len(got) != 1 || !got["calm"] {
		t.Fatalf("selection %v, want calm", got)
	}
	if s.ShopperPool() <= s.Load.ShopperPool() {
		t.Fatalf("the pool (%d) does not count the hot shop's own peak (the load's alone: %d)", s.ShopperPool(), s.Load.ShopperPool())
	}
	c := s.Scaled(1, 0.5)
	if c.Shops[0].Stages[1].Duration.D().Seconds() != 1 || s.Shops[0].Stages[1].Duration.D().Seconds() != 2 {
		t.Fatal("a shop's stages are not scaled with the timeline, or the scaled copy shares them")
	}
}

func TestBadShopsNameTheirLine(t *testing.T) {
	for _, c := range []struct{ from, to, want string }{
		{"{name: calm, pod: pod-2}", "{name: calm, pod: pod-3}", `pods.yaml:8: shops[1].pod: "pod-3" is not one of pod-1 ... pod-2`},
		{"{name: calm, pod: pod-2}", "{name: hot, pod: pod-2}", `shops[1].name: "hot" is also the name of shops[0]`},
		{"{name: calm, pod: pod-2}", "{name: calm}", `shops[1].pod: required with pods`},
		{"environment: {pods: 2}", "environment: {pods: 9}", `environment.pods: 9 is not between 0 and 8`},
		{"blast_radius: {pods: [pod-1],", "blast_radius: {pods: [pod-7],", `expect[0].blast_radius.pods[0]: "pod-7" is not one of the scenario's pods`},
		{"confirmed_at_least: 0.95", "confirmed_at_least: 0", `expect[0].blast_radius.confirmed_at_least: required`},
		{"ratio: {shops: [calm]", "ratio: {shops: [cold]", `expect[1].ratio.shops[0]: "cold" is not one of the scenario's shops`},
		{"target: 40}]}", "target: 40}, {duration: 1s, target: 1}]}", `shops[0].stages: the shop's stages last 5s, past the end of the load (4s)`},
		{"confirmed_at_least: 0.95,", "baseline: all, confirmed_at_least: 0.95,", `expect[0].blast_radius.baseline: the baseline (0s to 4s) overlaps the part judged (1s to 3s)`},
		{"confirmed_at_least: 0.95,", "window: all, baseline: before, confirmed_at_least: 0.95,", `the baseline (0s to 1s) overlaps the part judged (0s to 4s)`},
		{"confirmed_at_least: 0.95,", "from: 1s, to: 3s, baseline_from: 2s, baseline_to: 4s, confirmed_at_least: 0.95,", `the baseline (2s to 4s) overlaps the part judged (1s to 3s)`},
		{"confirmed_at_least: 0.95,", "baseline_from: 1500ms, baseline_to: 2s, confirmed_at_least: 0.95,", `the baseline (1.5s to 2s) overlaps the part judged (1s to 3s)`},
		{"faults:\n  - {target: pod-2/inventory, at: 1s, for: 2s, down: true}\n", "", `expect[0].blast_radius.baseline: without faults there is no "before": name the baseline by time`},
	} {
		src := strings.Replace(podsScenario, c.from, c.to, 1)
		if src == podsScenario {
			t.Fatalf("%q is not in the scenario", c.from)
		}
		_, err := Parse("pods.yaml", []byte(src))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s -> %s: got %v, want %q", c.from, c.to, err, c.want)
		}
	}
}
