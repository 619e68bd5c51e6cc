package admission

import (
	"strings"
	"testing"
	"time"
)

func TestModes(t *testing.T) {
	tests := []struct {
		name                                       string
		want                                       Mode
		deadline, detached, room, fair, parseError bool
	}{
		{"", ModeNone, true, false, false, false, false},                    // today's behaviour
		{"none", ModeNone, true, false, false, false, false},                // its spelled-out name
		{"queue", ModeQueue, false, true, false, false, false},              // no protection at all
		{"deadline", ModeDeadline, true, false, false, false, false},        // honours the deadline only
		{"lottery", ModeLottery, false, true, true, false, false},           // random waiting room
		{"fair", ModeFair, false, true, true, true, false},                  // ordered waiting room
		{"fair-deadline", ModeFairDeadline, true, false, true, true, false}, // ordered, and the deadline
		{"paced", ModePaced, true, false, true, true, false},                // ordered, paced, and the deadline
		{"Fair", ModeNone, false, false, false, false, true},                // names are exact, lower case
		{"fifo", ModeNone, false, false, false, false, true},                // unknown
		{" fair", ModeNone, false, false, false, false, true},               // no spaces
		{"fair_deadline", ModeNone, false, false, false, false, true},       // the dash counts
		{"queue\x00", ModeNone, false, false, false, false, true},           // no trailing bytes
	}
	for _, tt := range tests {
		m, err := ParseMode(tt.name)
		if (err != nil) != tt.parseError || m != tt.want {
			t.Errorf("ParseMode(%q) = %q, %v; want %q (error %v)", tt.name, m, err, tt.want, tt.parseError)
			continue
		}
		if tt.parseError {
			continue
		}
		if m.HonoursDeadline() != tt.deadline || m.DetachedCharge() != tt.detached || m.WaitingRoom() != tt.room || m.Fair() != tt.fair {
			t.Errorf("%s: deadline %v detached %v room %v fair %v", m, m.HonoursDeadline(), m.DetachedCharge(), m.WaitingRoom(), m.Fair())
		}
		// A mode either honours the deadline or detaches the charge.
		if m.HonoursDeadline() == m.DetachedCharge() {
			t.Errorf("%s: honours the deadline %v and detaches the charge %v", m, m.HonoursDeadline(), m.DetachedCharge())
		}
	}
	// "none" unparsed is still ModeNone to the predicates.
	if m := Mode("none"); !m.HonoursDeadline() || m.DetachedCharge() || m.WaitingRoom() || m.String() != "none" {
		t.Errorf("Mode(\"none\") is not taken as ModeNone")
	}
	if got := Modes(); len(got) != 7 || got[0] != ModeNone {
		t.Errorf("Modes() = %q", got)
	}
	for _, m := range Modes() {
		if back, err := ParseMode(m.String()); err != nil || back != m {
			t.Errorf("ParseMode(%q.String()) = %q, %v", m, back, err)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	short := Key{ID: "k", Secret: []byte("too short")}
	tests := []struct {
		name string
		cfg  Config
		want string // "" for valid; else a fragment naming the field
	}{
		{"none needs nothing", Config{}, ""},
		{"queue needs nothing", Config{Mode: ModeQueue}, ""},
		{"lottery with N", Config{Mode: ModeLottery, InProgress: 8}, ""},
		{"fair with N and a key", Config{Mode: ModeFair, InProgress: 8, Keys: []Key{keyA}}, ""},
		{"rotation: two keys", Config{Mode: ModeFairDeadline, InProgress: 8, Keys: []Key{keyB, keyA}}, ""},
		{"unknown mode", Config{Mode: "fifo"}, "admission.mode"},
		{"lottery without N", Config{Mode: ModeLottery}, "admission.in_progress"},
		{"fair without N", Config{Mode: ModeFair, Keys: []Key{keyA}}, "admission.in_progress"},
		{"negative N", Config{InProgress: -1}, "admission.in_progress"},
		{"fair without a key", Config{Mode: ModeFair, InProgress: 8}, "admission.keys"},
		{"short secret", Config{Mode: ModeFair, InProgress: 8, Keys: []Key{short}}, "admission.keys[0].secret"},
		{"short secret outside fair", Config{Keys: []Key{short}}, "admission.keys[0].secret"},
		{"key id with a dot", Config{Mode: ModeFair, InProgress: 8, Keys: []Key{{ID: "a.b", Secret: keyA.Secret}}}, "admission.keys[0].id"},
		{"empty key id", Config{Mode: ModeFair, InProgress: 8, Keys: []Key{{Secret: keyA.Secret}}}, "admission.keys[0].id"},
		{"long key id", Config{Mode: ModeFair, InProgress: 8, Keys: []Key{{ID: strings.Repeat("k", 33), Secret: keyA.Secret}}}, "admission.keys[0].id"},
		{"key id twice", Config{Mode: ModeFair, InProgress: 8, Keys: []Key{keyA, {ID: keyA.ID, Secret: keyB.Secret}}}, "admission.keys[1].id"},
		{"negative retry after", Config{RetryAfter: -time.Second}, "admission.retry_after"},
		{"negative token ttl", Config{TokenTTL: -time.Second}, "admission.token_ttl"},
		{"negative tick", Config{Tick: -time.Second}, "admission.tick"},
		{"negative gone after", Config{GoneAfter: -time.Second}, "admission.gone_after"},
	}
	for _, tt := range tests {
		err := tt.cfg.Validate()
		_, nerr := New(tt.cfg, nil)
		switch {
		case tt.want == "" && (err != nil || nerr != nil):
			t.Errorf("%s: %v / %v, want valid", tt.name, err, nerr)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || nerr == nil):
			t.Errorf("%s: %v / %v, want an error naming %s", tt.name, err, nerr, tt.want)
		case err != nil && strings.Contains(err.Error(), "too short"):
			t.Errorf("%s: the error shows the secret: %v", tt.name, err)
		}
	}
}

func TestDefaults(t *testing.T) {
	r, err := New(Config{Mode: ModeFair, InProgress: 4, Keys: []Key{keyA}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := r.Config()
	if c.RetryAfter != time.Second || c.TokenTTL != 10*time.Minute || c.Tick != 50*time.Millisecond || c.GoneAfter != 1550*time.Millisecond {
		t.Errorf("defaults: %+v", c)
	}
	// GoneAfter follows the longest retry wait (1.5 × RetryAfter) and the
	// tick.
	r, _ = New(Config{Mode: ModeFair, InProgress: 4, Keys: []Key{keyA}, RetryAfter: 3 * time.Second, Tick: 100 * time.Millisecond}, nil)
	if c := r.Config(); c.GoneAfter != 4600*time.Millisecond {
		t.Errorf("gone after %v, want 1.5 × retry after + tick", c.GoneAfter)
	}
	r, _ = New(Config{Mode: ModeFair, InProgress: 4, Keys: []Key{keyA}, GoneAfter: 5 * time.Second}, nil)
	if c := r.Config(); c.GoneAfter != 5*time.Second {
		t.Errorf("gone after %v, want the 5s configured", c.GoneAfter)
	}
	if r, _ := New(Config{Mode: "none"}, nil); r.Config().Mode != ModeNone {
		t.Errorf("mode none became %q", r.Config().Mode)
	}
}
