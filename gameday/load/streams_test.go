package load

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"time"
)

// storePlan is a flash sale's purchases with a steady stream of browsing,
// carts and purchases on top; a fifth of the carts end in a purchase.
func storePlan(rate float64, d time.Duration) Plan {
	return Plan{
		Stages:      []Stage{{Duration: d, Target: 0, Hold: true}},
		Patience:    5 * time.Second,
		MaxShoppers: 10_000,
		Seed:        7,
		Journeys:    []Journey{{Name: "browse"}, {Name: "cart", Buy: 0.2, BuyAfter: time.Second}},
		Streams: []Stream{{
			Name: "steady", Stages: []Stage{{Duration: d, Target: rate, Hold: true}},
			Mix:      []Share{{Journey: "browse", Weight: 70}, {Journey: "cart", Weight: 25}, {Journey: "", Weight: 5}},
			Patience: 3 * time.Second, MaxRetries: 2,
		}},
	}
}

func TestAStreamsArrivalsFollowItsMix(t *testing.T) {
	p := storePlan(1000, 20*time.Second)
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	as := p.Arrivals()
	count := map[string]int{}
	for i, a := range as {
		if i > 0 && a.At < as[i-1].At {
			t.Fatalf("arrival %d at %s before arrival %d at %s", i, a.At, i-1, as[i-1].At)
		}
		if a.Stream != 1 {
			t.Fatalf("arrival %d from stream %d, want 1", i, a.Stream)
		}
		count[a.Journey]++
	}
	visits := count["browse"] + count["cart"]
	streamArrivals := 20_000
	// The purchases are the mix's 5 % and the carts' fifth.
	direct := streamArrivals - visits
	funnel := count[""] - direct
	for _, c := range []struct {
		what      string
		got, want float64
	}{
		{"browse share", float64(count["browse"]) / float64(streamArrivals), 0.70},
		{"cart share", float64(count["cart"]) / float64(streamArrivals), 0.25},
		{"purchase share", float64(direct) / float64(streamArrivals), 0.05},
		{"carts that buy", float64(funnel) / float64(count["cart"]), 0.20},
	} {
		if math.Abs(c.got-c.want) > 0.015 {
			t.Errorf("%s: %.3f, want %.2f ± 0.015", c.what, c.got, c.want)
		}
	}
	// Same plan, same arrivals.
	again := p.Arrivals()
	for i := range as {
		if as[i] != again[i] {
			t.Fatalf("arrival %d: %+v, then %+v", i, as[i], again[i])
		}
	}
}

func TestAFunnelsPurchaseArrivesAfterTheJourney(t *testing.T) {
	p := storePlan(50, 2*time.Second)
	p.Streams[0].Mix = []Share{{Journey: "cart", Weight: 1}}
	p.Journeys[1].Buy = 1
	as := p.Arrivals()
	var carts, buys []time.Duration
	for _, a := range as {
		if a.Journey == "cart" {
			carts = append(carts, a.At)
		} else {
			buys = append(buys, a.At)
		}
	}
	if len(carts) != 100 || len(buys) != 100 {
		t.Fatalf("%d carts and %d purchases, want 100 of each", len(carts), len(buys))
	}
	for i := range carts {
		if buys[i] != carts[i]+time.Second {
			t.Fatalf("purchase %d at %s, want its cart's arrival %s + 1s", i, buys[i], carts[i])
		}
	}
	// Each purchase names its visit, which is the cart a second before
	// it; the purchase is made by the visitor who filled the cart.
	for i, a := range as {
		if a.Journey != "" {
			continue
		}
		v := as[a.Visitor-1]
		if a.Visitor == 0 || v.Journey != "cart" || v.At != a.At-time.Second {
			t.Fatalf("purchase %d names visit %d (%+v)", i, a.Visitor-1, v)
		}
	}
	tgt := TargetFunc(func(ctx context.Context, c *Call) (Answer, error) {
		if c.Journey == "" {
			return Answer{Code: 200, Means: MeansConfirmed}, nil
		}
		return Answer{Code: 200, Means: MeansOK}, nil
	})
	rep, err := Run(context.Background(), p, tgt, Options{})
	if err != nil {
		t.Fatal(err)
	}
	byIndex := map[int]*Shopper{}
	for _, v := range rep.Visits {
		byIndex[v.Index] = v
	}
	for _, s := range rep.Shoppers {
		v := byIndex[s.Visitor-1]
		if v == nil || s.Name != v.Name || s.Session != v.Session || s.ID == v.ID {
			t.Fatalf("purchase %d (%s, %s) and its visitor %+v", s.Index, s.ID, s.Name, v)
		}
	}
}

func TestAStreamsVisitorsRunTheirJourneyAndThink(t *testing.T) {
	p := storePlan(40, time.Second)
	p.Stages = []Stage{{Duration: 2 * time.Second, Target: 0, Hold: true}}
	p.Streams[0].Mix = []Share{{Journey: "browse", Weight: 1}, {Journey: "", Weight: 1}}
	var mu sync.Mutex
	journeys := map[string]int{}
	tgt := TargetFunc(func(ctx context.Context, c *Call) (Answer, error) {
		mu.Lock()
		journeys[c.Journey]++
		mu.Unlock()
		if c.Journey == "" {
			return Answer{Code: 200, Means: MeansConfirmed}, nil
		}
		if c.Step == 0 {
			return Answer{Code: 200, Means: MeansNext, Think: 200 * time.Millisecond}, nil
		}
		return Answer{Code: 200, Means: MeansOK}, nil
	})
	rep, err := Run(context.Background(), p, tgt, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Shoppers)+len(rep.Visits) != rep.Scheduled || len(rep.Visits) == 0 || len(rep.Shoppers) == 0 {
		t.Fatalf("%d purchases and %d visits of %d arrivals", len(rep.Shoppers), len(rep.Visits), rep.Scheduled)
	}
	for _, s := range rep.Shoppers {
		if s.Journey != "" || s.Outcome != OutcomeConfirmed || len(s.Attempts) != 1 {
			t.Fatalf("purchase %+v", s)
		}
		if s.Deadline-s.Scheduled != 3*time.Second {
			t.Fatalf("purchase %d's patience %s, want the stream's 3s", s.Index, s.Deadline-s.Scheduled)
		}
	}
	for _, s := range rep.Visits {
		if s.Journey != "browse" || s.Outcome != OutcomeOK || len(s.Attempts) != 2 {
			t.Fatalf("visit %+v", s)
		}
		if gap := s.Attempts[1].At - (s.Attempts[0].At + s.Attempts[0].Took); gap < 200*time.Millisecond {
			t.Fatalf("visit %d read its page %s, want the step's think of 200ms", s.Index, gap)
		}
	}
	if journeys["browse"] != 2*len(rep.Visits) || journeys[""] != len(rep.Shoppers) {
		t.Fatalf("requests by journey %v for %d visits and %d purchases", journeys, len(rep.Visits), len(rep.Shoppers))
	}
	// A worker's report merged, and one completed, split alike.
	m, err := Merge(rep)
	if err != nil || len(m.Shoppers) != len(rep.Shoppers) || len(m.Visits) != len(rep.Visits) {
		t.Fatalf("merged: %v, %d purchases and %d visits", err, len(m.Shoppers), len(m.Visits))
	}
	c, err := Complete(p, rep.Start, rep.Visits)
	if err != nil || len(c.Shoppers) != len(rep.Shoppers) || len(c.Visits) != len(rep.Visits) || c.Shoppers[0].Outcome != "" {
		t.Fatalf("completed from the visits alone: %v", err)
	}
}

func TestAThinkPastTheDeadlineGivesUp(t *testing.T) {
	p := storePlan(10, time.Second)
	p.Streams[0].Mix = []Share{{Journey: "browse", Weight: 1}}
	p.Streams[0].Patience = 100 * time.Millisecond
	tgt := TargetFunc(func(ctx context.Context, c *Call) (Answer, error) {
		return Answer{Code: 200, Means: MeansNext, Think: time.Second}, nil
	})
	rep, err := Run(context.Background(), p, tgt, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range rep.Visits {
		if s.Outcome != OutcomeGaveUp || len(s.Attempts) != 1 {
			t.Fatalf("visit %d: %s after %d requests, want gave_up after one", s.Index, s.Outcome, len(s.Attempts))
		}
	}
}

func TestBadStreamsAreRefused(t *testing.T) {
	p := storePlan(10, time.Second)
	p.Streams = append(p.Streams, Stream{Name: "steady", Mix: []Share{{Journey: "shelf", Weight: 0}}, MaxRetries: -1})
	p.Journeys = append(p.Journeys, Journey{Name: "browse", Buy: 2})
	err := p.Validate()
	var fe *FieldError
	if !errors.As(err, &fe) {
		t.Fatalf("got %v, want field errors", err)
	}
	for _, want := range []string{
		"journeys[2].name", "journeys[2].buy", "streams[1].name", "streams[1].stages", "streams[1].mix[0].journey",
		"streams[1].mix[0].weight", "streams[1].patience", "streams[1].max_retries",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("no error names %s:\n%v", want, err)
		}
	}
}
