package gameday

import "testing"

// A created_at that is an infinity or NaN is not a time: read as Unix
// milliseconds it was a date no charge was made on.
func TestParseTimeRefusesNonFinite(t *testing.T) {
	for _, s := range []string{"Inf", "+Inf", "1e999", "NaN", "-Inf"} {
		if at, ok := parseTime(s); ok {
			t.Errorf("parseTime(%q) = %v, want no time", s, at)
		}
	}
	if at, ok := parseTime("1764579600123"); !ok || at.UnixMilli() != 1764579600123 {
		t.Errorf("Unix milliseconds: %v, %v", at, ok)
	}
}
