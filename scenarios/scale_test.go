package scenarios

import (
	"github.com/gameday-dev/gameday/internal/strictyaml"

	"fmt"
	"maps"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// flatten lists every leaf of v by field path (yaml names), following
// pointers, slices and maps, so that two scenarios can be compared field
// by field. Unexported fields are left out.
func flatten(v reflect.Value, path string, out map[string]any) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			out[path] = nil
			return
		}
		flatten(v.Elem(), path, out)
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			flatten(v.Field(i), strictyaml.JoinPath(path, name), out)
		}
	case reflect.Slice:
		out[path+".len"] = v.Len()
		for i := range v.Len() {
			flatten(v.Index(i), fmt.Sprintf("%s[%d]", path, i), out)
		}
	case reflect.Map:
		out[path+".len"] = v.Len()
		for _, k := range v.MapKeys() {
			flatten(v.MapIndex(k), strictyaml.JoinPath(path, k.String()), out)
		}
	default:
		out[path] = v.Interface()
	}
}

func leaves(s *Scenario) map[string]any {
	out := map[string]any{}
	flatten(reflect.ValueOf(s).Elem(), "", out)
	return out
}

func ms(d float64) Duration { return Duration(d * float64(time.Millisecond)) }

// Scaled(1.5, 0.2) changes exactly the fields its comment names, and the
// original is untouched.
func TestScaled(t *testing.T) {
	s, err := LoadFile("testdata/good/full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	before := leaves(s)
	got := s.Scaled(1.5, 0.2)

	if after := leaves(s); !maps.EqualFunc(before, after, func(a, b any) bool { return reflect.DeepEqual(a, b) }) {
		t.Fatal("Scaled changed the original")
	}
	want := map[string]any{
		// Arrival rates × 1.5, and the pool with them.
		"load.stages[0].target": 30.0,
		"load.stages[1].target": 60.0,
		"load.stages[2].target": 0.0,
		"load.max_shoppers":     750,
		// The timeline × 0.2.
		"load.stages[0].duration":     ms(1000),
		"load.stages[1].duration":     ms(4000),
		"load.stages[2].duration":     ms(1000),
		"load.patience":               ms(1600),
		"checkout.retry_after":        ms(100),
		"checkout.lease_ttl":          ms(4000),
		"checkout.payment.open_for":   ms(800),
		"checkout.inventory.open_for": ms(400),
		"checkout.sessions.open_for":  ms(200),
		"faults[0].at":                ms(2000),
		"faults[0].for":               ms(1000),
		"faults[1].at":                ms(4000),
		"faults[1].for":               ms(400),
		"faults[2].at":                ms(3200),
		"faults[2].for":               ms(200),
		// A cache fault's every and ttl are its intensity, as a
		// toxic's latency is: kept.
		"faults[3].at":                ms(4800),
		"faults[3].for":               ms(400),
		"abort.for":                   ms(2400),
		"stock":                       int64(201), // 1001 × 0.2, rounded up
		"expect[4].degraded.at_least": 3,          // 10 × 1.5 × 0.2
		// A shop's own sale is part of the timeline and the arrivals,
		// its stock as the scenario's; the spans a blast radius names
		// are the timeline's.
		"shops[0].stages[0].duration":        ms(2000),
		"shops[0].stages[1].duration":        ms(1000),
		"shops[0].stages[1].target":          45.0,
		"shops[0].stock":                     int64(60),
		"expect[8].blast_radius.from":        ms(2000),
		"expect[8].blast_radius.to":          ms(3000),
		"expect[8].blast_radius.baseline_to": ms(2000),
		"moves[0].at":                        ms(2400),
	}
	after := leaves(got)
	if !slices.Equal(slices.Sorted(maps.Keys(after)), slices.Sorted(maps.Keys(before))) {
		t.Fatalf("fields differ:\n%v\n%v", slices.Sorted(maps.Keys(after)), slices.Sorted(maps.Keys(before)))
	}
	for path, orig := range before {
		w, scaled := want[path]
		if !scaled {
			w = orig
		}
		if !reflect.DeepEqual(after[path], w) {
			t.Errorf("%s = %v, want %v (was %v)", path, after[path], w, orig)
		}
	}
	for path := range want {
		if _, ok := before[path]; !ok {
			t.Errorf("want names %s, which the scenario does not have", path)
		}
	}
	if err := got.Validate(); err != nil {
		t.Errorf("scaled scenario does not validate: %v", err)
	}
	if got.TotalDuration() != 6*time.Second {
		t.Errorf("scaled total %v, want 6s", got.TotalDuration())
	}

	// Scaled's result shares nothing with the original.
	checkNoAliasing(t, reflect.ValueOf(s), reflect.ValueOf(got), "")
}

// Every catalogue scenario stays valid at the scales a user would try, and
// at awkward ones that round.
func TestScaledCatalogueStaysValid(t *testing.T) {
	all, err := Catalogue()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range all {
		for _, sc := range [][2]float64{{1, 1}, {1.5, 0.2}, {0.1, 0.05}, {3, 1.0 / 3}, {1, 0.0007}, {2, 4}} {
			if err := s.Scaled(sc[0], sc[1]).Validate(); err != nil {
				t.Errorf("%s scaled by %v: %v", s.Name, sc, err)
			}
		}
	}
}

func TestScaledRefusesBadScales(t *testing.T) {
	s, err := LoadFile("testdata/good/tiny.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range [][2]float64{{0, 1}, {1, 0}, {-1, 1}, {1, math.NaN()}, {math.Inf(1), 1}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Scaled(%v, %v) did not panic", sc[0], sc[1])
				}
			}()
			s.Scaled(sc[0], sc[1])
		}()
	}
}

// checkNoAliasing fails when a and b share a pointer, slice backing array
// or map anywhere (unexported fields included: lines is documented as
// shared, read-only).
func checkNoAliasing(t *testing.T, a, b reflect.Value, path string) {
	t.Helper()
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return
		}
		if a.Pointer() == b.Pointer() {
			t.Errorf("%s: pointer shared", path)
			return
		}
		checkNoAliasing(t, a.Elem(), b.Elem(), path)
	case reflect.Struct:
		for i := range a.NumField() {
			f := a.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			checkNoAliasing(t, a.Field(i), b.Field(i), path+"."+f.Name)
		}
	case reflect.Slice:
		if a.Len() == 0 || b.Len() == 0 {
			return
		}
		if a.Pointer() == b.Pointer() {
			t.Errorf("%s: slice shared", path)
			return
		}
		for i := range min(a.Len(), b.Len()) {
			checkNoAliasing(t, a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
	case reflect.Map:
		if a.IsNil() || b.IsNil() {
			return
		}
		if a.Pointer() == b.Pointer() {
			t.Errorf("%s: map shared", path)
		}
	}
}

func TestCloneSharesNothing(t *testing.T) {
	s, err := LoadFile("testdata/good/full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := s.Clone()
	if !reflect.DeepEqual(leaves(s), leaves(c)) {
		t.Error("Clone differs from the original")
	}
	checkNoAliasing(t, reflect.ValueOf(s), reflect.ValueOf(c), "")
	// Every pointer, slice and map of full.yaml is set, so the check above
	// saw them all: make sure it stays so when fields are added.
	// (A field counts as set when it is set in some list element.)
	index := regexp.MustCompile(`\[\d+\]`)
	var nils, set []string
	for path, v := range leaves(s) {
		p := index.ReplaceAllString(path, "[]")
		if v == nil {
			nils = append(nils, p)
		} else {
			set = append(set, p)
		}
	}
	for _, p := range nils {
		if strings.HasPrefix(p, "environment.breaker_metric") {
			continue // external environments only: TestCloneExternal
		}
		if strings.HasPrefix(p, "load.replay") {
			continue // instead of stages: TestCloneReplay
		}
		if !slices.ContainsFunc(set, func(q string) bool { return strings.HasPrefix(q, p+".") || q == p }) {
			t.Errorf("full.yaml never sets %s: set it so Clone is tested on it", p)
		}
	}
}

func TestShopperPool(t *testing.T) {
	for _, c := range []struct {
		load Load
		want int
	}{
		{Load{MaxShoppers: 7}, 7},
		{Load{Stages: []Stage{{Target: 30}}, Patience: Duration(8 * time.Second)}, 480},
		{Load{Stages: []Stage{{Target: 1}}}, 100},                                          // at least 100
		{Load{Stages: []Stage{{Target: 10}, {Target: 50}, {Target: 0}}}, 1000},             // 2 × 50/s × 10s (default patience)
		{Load{Stages: []Stage{{Target: 1e300}}, Patience: Duration(time.Hour)}, 1_000_000}, // bounded
	} {
		if got := c.load.ShopperPool(); got != c.want {
			t.Errorf("%+v: ShopperPool() = %d, want %d", c.load, got, c.want)
		}
	}
}

// The fields only an external environment may set are cloned too.
func TestCloneExternal(t *testing.T) {
	one := 1.0
	s := &Scenario{Environment: Environment{Kind: "external", Proxies: map[string]string{"payment": "p"},
		BreakerMetric: &BreakerMetric{URL: "http://127.0.0.1:1/metrics", Closed: &one, HalfOpen: &one, Open: &one}}}
	c := s.Clone()
	checkNoAliasing(t, reflect.ValueOf(s), reflect.ValueOf(c), "")
	if !reflect.DeepEqual(s.Environment, c.Environment) {
		t.Error("Clone differs from the original")
	}
}

// A replay's clone shares nothing with it: its journeys and what reading
// it found are the clone's own.
func TestCloneReplay(t *testing.T) {
	s := &Scenario{Load: Load{Replay: &Replay{File: "r.csv", Format: "access_log", Journeys: map[string]string{"purchase": "POST /checkout"},
		Read: ReplayRead{Arrivals: map[string]float64{"purchase": 3}}}}}
	c := s.Clone()
	checkNoAliasing(t, reflect.ValueOf(s), reflect.ValueOf(c), "")
	if !reflect.DeepEqual(s.Load.Replay, c.Load.Replay) {
		t.Error("Clone differs from the original")
	}
}

// A scenario's YAML is what it says only while nothing changed it: a
// clone is the same scenario, a scaled one or one with a fault added in
// code is not, and has no Source.
func TestSourceOnlyWhileUnchanged(t *testing.T) {
	sc, err := Lookup("payment-latency")
	if err != nil {
		t.Fatal(err)
	}
	if sc.Source() == nil || sc.Clone().Source() == nil {
		t.Fatal("a parsed scenario, or its clone, has no source")
	}
	if sc.Scaled(1, 0.5).Source() != nil {
		t.Error("a scaled scenario still gives the YAML it was parsed from")
	}
	c := sc.Clone()
	c.Faults = append(c.Faults, Fault{Name: "more", Target: "payment", Down: true})
	if c.Source() != nil || sc.Source() == nil {
		t.Error("a fault added in code: the clone still gives its YAML, or the original lost it")
	}
	if (&Scenario{Name: "code"}).Source() != nil {
		t.Error("a scenario built in code has a source")
	}
}
