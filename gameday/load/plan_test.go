package load

import (
	"errors"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// validPlan is a small plan that passes Validate; tests change one thing.
func validPlan() Plan {
	return Plan{
		Stages:       []Stage{{Duration: time.Second, Target: 100}, {Duration: time.Second, Target: 100}},
		Patience:     2 * time.Second,
		MaxRetries:   3,
		RetryJitter:  0.5,
		MaxShoppers:  50,
		SessionShare: 0.5,
		Seed:         7,
		IDPrefix:     "run1",
	}
}

func TestPlanValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Plan)
		fields []string // the fields the error names; none: valid
	}{
		// The base plan is valid.
		{"valid", func(*Plan) {}, nil},
		// Zero values that are documented as meaning something are valid.
		{"documented zeros", func(p *Plan) { p.MaxRetries, p.RetryJitter, p.SessionShare, p.Seed, p.IDPrefix = 0, 0, 0, 0, "" }, nil},
		// A pause and a stage of rate 0 are valid stages.
		{"stage of 0", func(p *Plan) { p.Stages = append(p.Stages, Stage{Duration: time.Second}) }, nil},
		// No stage: nothing to run.
		{"no stages", func(p *Plan) { p.Stages = nil }, []string{"stages"}},
		// A stage needs a positive duration.
		{"zero duration", func(p *Plan) { p.Stages[1].Duration = 0 }, []string{"stages[1].duration"}},
		{"negative duration", func(p *Plan) { p.Stages[0].Duration = -time.Second }, []string{"stages[0].duration"}},
		// Rates are finite and not negative.
		{"negative target", func(p *Plan) { p.Stages[0].Target = -1 }, []string{"stages[0].target"}},
		{"NaN target", func(p *Plan) { p.Stages[1].Target = math.NaN() }, []string{"stages[1].target"}},
		{"infinite target", func(p *Plan) { p.Stages[1].Target = math.Inf(1) }, []string{"stages[1].target"}},
		// More arrivals than ArrivalLimit would not fit in memory.
		{"too many arrivals", func(p *Plan) { p.Stages = []Stage{{Duration: time.Hour, Target: 2000}} }, []string{"stages"}},
		// Patience is required: a shopper without one never leaves.
		{"no patience", func(p *Plan) { p.Patience = 0 }, []string{"patience"}},
		{"negative retries", func(p *Plan) { p.MaxRetries = -1 }, []string{"max_retries"}},
		{"too many retries", func(p *Plan) { p.MaxRetries = RetryLimit + 1 }, []string{"max_retries"}},
		{"jitter above 1", func(p *Plan) { p.RetryJitter = 1.5 }, []string{"retry_jitter"}},
		{"negative jitter", func(p *Plan) { p.RetryJitter = -0.1 }, []string{"retry_jitter"}},
		{"NaN jitter", func(p *Plan) { p.RetryJitter = math.NaN() }, []string{"retry_jitter"}},
		// The pool must exist and be bounded.
		{"no pool", func(p *Plan) { p.MaxShoppers = 0 }, []string{"max_shoppers"}},
		{"huge pool", func(p *Plan) { p.MaxShoppers = PoolLimit + 1 }, []string{"max_shoppers"}},
		{"share above 1", func(p *Plan) { p.SessionShare = 2 }, []string{"session_share"}},
		{"long prefix", func(p *Plan) { p.IDPrefix = strings.Repeat("p", 101) }, []string{"id_prefix"}},
		// Every problem is reported at once, not the first only.
		{"several", func(p *Plan) { p.Stages[0].Target = -1; p.Patience = 0; p.MaxShoppers = 0 }, []string{"stages[0].target", "patience", "max_shoppers"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := validPlan()
			tt.change(&p)
			err := p.Validate()
			if len(tt.fields) == 0 {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate passed, want errors on %v", tt.fields)
			}
			var got []string
			for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
				var fe *FieldError
				if !errors.As(e, &fe) {
					t.Fatalf("%v is not a *FieldError", e)
				}
				got = append(got, fe.Field)
			}
			if !reflect.DeepEqual(got, tt.fields) {
				t.Errorf("errors on %v, want %v (%v)", got, tt.fields, err)
			}
		})
	}
}

// TestSameSeedSameChoices: the schedule and every shopper's choices come
// from the plan alone; another seed changes the choices, not the schedule.
func TestSameSeedSameChoices(t *testing.T) {
	p := validPlan()
	a, b := Shoppers(p), Shoppers(p)
	if len(a) != 150 {
		t.Fatalf("%d shoppers, want 150", len(a))
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same plan, different choices")
	}
	if !reflect.DeepEqual(Schedule(p.Stages), Schedule(validPlan().Stages)) {
		t.Fatal("same stages, different schedules")
	}
	sessions := 0
	for i, c := range a {
		if c.Session != "" {
			sessions++
		}
		next := c
		for k := range p.MaxRetries {
			j := next.NextJitter()
			if j < 1-p.RetryJitter || j > 1+p.RetryJitter {
				t.Fatalf("shopper %d: jitter %v outside [0.5, 1.5]", i, j)
			}
			if c.Jitter(k) != j {
				t.Fatalf("shopper %d: Jitter(%d) = %v, the %d-th NextJitter %v", i, k, c.Jitter(k), k+1, j)
			}
		}
		idx := strconv.Itoa(i)
		if c.ID != "run1-"+idx || c.Name != "run1-shopper-"+idx || (c.Session != "" && c.Session != "run1-session-"+idx) {
			t.Fatalf("shopper %d: id %q, name %q, session %q", i, c.ID, c.Name, c.Session)
		}
	}
	// Half of 150 have a session, give or take what a fair coin does.
	if sessions < 50 || sessions > 100 {
		t.Errorf("%d of 150 shoppers have a session with share 0.5", sessions)
	}

	other := p
	other.Seed++
	c := Shoppers(other)
	sameSessions, sameJitter := true, true
	for i := range a {
		sameSessions = sameSessions && (a[i].Session == "") == (c[i].Session == "")
		for k := range p.MaxRetries {
			sameJitter = sameJitter && a[i].Jitter(k) == c[i].Jitter(k)
		}
	}
	if sameSessions || sameJitter {
		t.Errorf("another seed, same choices: sessions %v, jitter %v", sameSessions, sameJitter)
	}
}

// TestChoicesDoNotDependOnTheRest: a shopper's choices depend on the seed
// and its index only, so adding stages or retries does not reshuffle the
// shoppers that were already there.
func TestChoicesDoNotDependOnTheRest(t *testing.T) {
	p := validPlan()
	longer := p
	longer.Stages = append(append([]Stage(nil), p.Stages...), Stage{Duration: time.Second, Target: 100})
	a, b := Shoppers(p), Shoppers(longer)
	if !reflect.DeepEqual(a, b[:len(a)]) {
		t.Fatal("a longer plan changed the first shoppers' choices")
	}
}
