package scenarios

import (
	"strings"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/internal/fileerr"
)

const storeDay = `name: store
matrix: {dependency: none, failure: store-day}
stock: 100
load:
  stages:
    - {duration: 10s, target: 0}
    - {duration: 10s, target: 50}
  patience: 8s
  max_retries: 2
  streams:
    - name: steady
      mix: {browse: 70, cart: 25, purchase: 5}
      stages: [{duration: 20s, target: 40, hold: true}]
expect:
  - latency: {journeys: [browse], percentile: 95, below: 100ms}
  - blast_radius: {journeys: [browse], from: 10s, to: 20s, baseline_from: 0s, baseline_to: 10s, confirmed_at_least: 0.99}
`

func TestStreamsParse(t *testing.T) {
	sc, err := Parse("store.yaml", []byte(storeDay))
	if err != nil {
		t.Fatal(err)
	}
	st := sc.Load.Streams[0]
	if st.Patience.D() != 8*time.Second || st.MaxRetries == nil || *st.MaxRetries != 2 {
		t.Fatalf("the stream's patience %s and retries %v, want the load's 8s and 2", st.Patience.D(), st.MaxRetries)
	}
	if got := strings.Join(sc.Load.Journeys(), ","); got != "browse,cart" {
		t.Fatalf("journeys %s", got)
	}
	if st.Recorded {
		t.Fatal("a stream of the scenario's own is recorded")
	}
	// recorded: true, as explore writes a replay's streams: no funnel.
	rec, err := Parse("store.yaml", []byte(strings.Replace(storeDay, "    - name: steady\n", "    - name: steady\n      recorded: true\n", 1)))
	if err != nil || !rec.Load.Streams[0].Recorded {
		t.Fatalf("recorded: %v", err)
	}
	// A rehearsal at 150 % in half the time scales the streams too.
	c := sc.Scaled(1.5, 0.5)
	cs := c.Load.Streams[0]
	if cs.Stages[0].Target != 60 || cs.Stages[0].Duration.D() != 10*time.Second || cs.Patience.D() != 4*time.Second {
		t.Fatalf("scaled stream %+v", cs)
	}
	if sc.Load.Streams[0].Stages[0].Target != 40 || &c.Load.Streams[0].Mix == &sc.Load.Streams[0].Mix {
		t.Fatal("scaling changed the original")
	}
	c.Load.Streams[0].Mix["browse"] = 1
	if sc.Load.Streams[0].Mix["browse"] != 70 {
		t.Fatal("the copy shares its mix with the original")
	}
}

func TestBadStreams(t *testing.T) {
	cases := []struct {
		name, old, new string
		line           int
		field, msg     string
	}{
		{"weights", "purchase: 5}", "purchase: 15}", 12, "load.streams[0].mix", "the percentages add up to 110, not 100"},
		{"zero weight", "purchase: 5}", "purchase: 0, shelf: 5}", 12, "load.streams[0].mix.purchase", "0: want a percentage above 0"},
		{"longer than the load", "duration: 20s, target: 40", "duration: 30s, target: 40", 13, "load.streams[0].stages", "the stream lasts 30s, longer than the load's stages (20s)"},
		{"no arrivals", "target: 40, hold", "target: 0, hold", 13, "load.streams[0].stages", "every target is 0"},
		{"no mix", "      mix: {browse: 70, cart: 25, purchase: 5}\n", "", 11, "load.streams[0].mix", "required"},
		{"unnamed", "    - name: steady\n      mix", "    - mix", 11, "load.streams[0].name", "required"},
		{"unknown journey in a promise", "journeys: [browse], percentile", "journeys: [checkout], percentile", 15, "expect[0].latency.journeys[0]", `"checkout" is no journey of the load's streams (purchase, browse, cart)`},
		// An outcome the selection can never have would let at_most
		// hold for ever.
		{"a purchase's outcome over a journey", "  - latency: {journeys: [browse], percentile: 95, below: 100ms}\n", "  - ratio: {journeys: [browse], outcomes: [confirmed], at_most: 0.01}\n", 15, "expect[0].ratio.outcomes[0]", `"confirmed" is not one of ok, unavailable, error, gave_up`},
		{"a visit's outcome over purchases", "  - latency: {journeys: [browse], percentile: 95, below: 100ms}\n", "  - ratio: {outcomes: [ok], at_least: 0.5}\n", 15, "expect[0].ratio.outcomes[0]", `"ok" is not one of confirmed`},
		{"whole purchases of a journey", "journeys: [browse], percentile", "journeys: [browse], of: purchases, percentile", 15, "expect[0].latency.of", "a journey's requests are measured one by one"},
		{"retries", "      stages: [{duration: 20s", "      max_retries: 101\n      stages: [{duration: 20s", 13, "load.streams[0].max_retries", "101 is not between 0 and 100"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(storeDay, c.old) {
				t.Fatalf("no %q", c.old)
			}
			_, err := Parse("store.yaml", []byte(strings.Replace(storeDay, c.old, c.new, 1)))
			for _, e := range fileerr.All(err) {
				if e.Line == c.line && e.Field == c.field && strings.Contains(e.Msg, c.msg) && e.File == "store.yaml" {
					return
				}
			}
			t.Errorf("got %v\nwant line %d, field %s, message with %q", err, c.line, c.field, c.msg)
		})
	}
}
