package breakers_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/breakers"
	"github.com/sony/gobreaker/v2"
)

func TestNewNormalisesSettings(t *testing.T) {
	defaults := breakers.Settings{
		Name:                "dependency",
		MaxConcurrent:       64,
		Timeout:             time.Second,
		ProbeTimeout:        250 * time.Millisecond,
		ConsecutiveFailures: 5,
		OpenFor:             5 * time.Second,
		HalfOpenProbes:      1,
		MaxTransitions:      1024,
	}
	with := func(f func(*breakers.Settings)) breakers.Settings {
		s := defaults
		f(&s)
		return s
	}
	tests := []struct {
		name string
		in   breakers.Settings
		want breakers.Settings
	}{
		// The zero value gets every documented default.
		{"zero", breakers.Settings{}, defaults},
		// ProbeTimeout follows Timeout: a quarter of it.
		{"probe from timeout", breakers.Settings{Timeout: 2 * time.Second},
			with(func(s *breakers.Settings) { s.Timeout, s.ProbeTimeout = 2*time.Second, 500*time.Millisecond })},
		// ... but at least a millisecond.
		{"probe floor", breakers.Settings{Timeout: 2 * time.Millisecond},
			with(func(s *breakers.Settings) { s.Timeout, s.ProbeTimeout = 2*time.Millisecond, time.Millisecond })},
		// Negative durations and transition bound mean the default; a
		// negative bulkhead means unlimited and is kept; a negative Interval
		// means never, stored as 0.
		{"negatives", breakers.Settings{
			MaxConcurrent: -1, Timeout: -1, ProbeTimeout: -1, OpenFor: -1, Interval: -1, MaxTransitions: -1,
		}, with(func(s *breakers.Settings) { s.MaxConcurrent = -1 })},
		// Explicit values are kept as given.
		{"explicit", breakers.Settings{
			Name: "payment", MaxConcurrent: 8, Timeout: 300 * time.Millisecond, ProbeTimeout: time.Second,
			ConsecutiveFailures: 3, OpenFor: 2 * time.Second, HalfOpenProbes: 2, Interval: time.Minute, MaxTransitions: 10,
		}, breakers.Settings{
			Name: "payment", MaxConcurrent: 8, Timeout: 300 * time.Millisecond, ProbeTimeout: time.Second,
			ConsecutiveFailures: 3, OpenFor: 2 * time.Second, HalfOpenProbes: 2, Interval: time.Minute, MaxTransitions: 10,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := breakers.New(tt.in)
			got := g.Settings()
			if got.IsFailure == nil || got.Now == nil {
				t.Fatalf("IsFailure or Now left nil")
			}
			if !got.IsFailure(errDown) {
				t.Errorf("default IsFailure(%v) = false, want true", errDown)
			}
			got.IsFailure, got.Now = nil, nil
			if !reflect.DeepEqual(got, tt.want) { // funcs cleared above; nil funcs compare equal
				t.Errorf("Settings() =\n%+v\nwant\n%+v", got, tt.want)
			}
			if g.Name() != tt.want.Name {
				t.Errorf("Name() = %q, want %q", g.Name(), tt.want.Name)
			}
			if g.State() != breakers.StateClosed || g.InFlight() != 0 || g.TransitionCount() != 0 {
				t.Errorf("new guard: state %v, in flight %d, %d transitions", g.State(), g.InFlight(), g.TransitionCount())
			}
		})
	}
}

func TestStateText(t *testing.T) {
	tests := []struct {
		state breakers.State
		text  string
		gb    gobreaker.State
	}{
		{breakers.StateClosed, "closed", gobreaker.StateClosed},        // the zero value
		{breakers.StateHalfOpen, "half-open", gobreaker.StateHalfOpen}, // probing
		{breakers.StateOpen, "open", gobreaker.StateOpen},              // refusing
	}
	for _, tt := range tests {
		if got := tt.state.String(); got != tt.text {
			t.Errorf("String() = %q, want %q", got, tt.text)
		}
		// The package converts gobreaker's states by value.
		if int(tt.state) != int(tt.gb) || tt.gb.String() != tt.text {
			t.Errorf("%v does not match gobreaker's %v", tt.state, tt.gb)
		}
		b, err := json.Marshal(tt.state)
		if err != nil || string(b) != `"`+tt.text+`"` {
			t.Errorf("json.Marshal(%v) = %s, %v", tt.state, b, err)
		}
		var back breakers.State
		if err := json.Unmarshal(b, &back); err != nil || back != tt.state {
			t.Errorf("json.Unmarshal(%s) = %v, %v", b, back, err)
		}
	}
	if got := breakers.State(7).String(); got != "State(7)" {
		t.Errorf("String() of unknown = %q", got)
	}
	if _, err := json.Marshal(breakers.State(7)); err == nil {
		t.Error("json.Marshal of unknown state: no error")
	}
	var s breakers.State
	if err := json.Unmarshal([]byte(`"ajar"`), &s); err == nil {
		t.Error("json.Unmarshal of unknown state: no error")
	}
}

func TestTransitionJSON(t *testing.T) {
	tr := breakers.Transition{
		From: breakers.StateClosed, To: breakers.StateOpen,
		At: time.Date(2025, 11, 28, 9, 0, 0, 0, time.UTC),
	}
	b, err := json.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"from":"closed","to":"open","at":"2025-11-28T09:00:00Z"}`; string(b) != want {
		t.Errorf("JSON = %s, want %s", b, want)
	}
	var back breakers.Transition
	if err := json.Unmarshal(b, &back); err != nil || back != tr {
		t.Errorf("round trip = %+v, %v", back, err)
	}
}
