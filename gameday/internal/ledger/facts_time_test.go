package ledger

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// A created_at that is an infinity or NaN is not a time: read as Unix
// milliseconds it was a date no charge was made on.
func TestParseTimeRefusesNonFinite(t *testing.T) {
	for _, s := range []string{"Inf", "+Inf", "1e999", "NaN", "-Inf"} {
		if at, err := parseTime(s, time.UTC); err == nil {
			t.Errorf("parseTime(%q) = %v, want no time", s, at)
		}
	}
	if at, err := parseTime("1764579600123", nil); err != nil || at.UnixMilli() != 1764579600123 {
		t.Errorf("Unix milliseconds: %v, %v", at, err)
	}
}

// A wall clock without a zone is read in the zone the system file names,
// and refused without one: read as UTC, a shop that writes Berlin's time
// moves every charge an hour, and charged_after_leaving judges on that.
// A time that says its zone needs none.
func TestCreatedAtWithoutAZoneNeedsTheFilesZone(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"2026-12-01 10:00:00", "2026-12-01T10:00:00", "2026-12-01 10:00:00.250"} {
		if at, err := parseTime(s, nil); !errors.Is(err, errNoZone) {
			t.Errorf("parseTime(%q) without a zone = %v, %v; want errNoZone", s, at, err)
		}
		at, err := parseTime(s, berlin)
		if want := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC); err != nil || at.Truncate(time.Second).UTC() != want {
			t.Errorf("parseTime(%q) in Berlin = %v, %v; want %v", s, at, err, want)
		}
	}
	for _, s := range []string{"2026-12-01T09:00:00Z", "2026-12-01 10:00:00+01", "2026-12-01 10:00:00+01:00"} {
		if at, err := parseTime(s, nil); err != nil || !at.Equal(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)) {
			t.Errorf("parseTime(%q) = %v, %v", s, at, err)
		}
	}
	// The books: refused with the file, line and field, before the load
	// (a row of any run will do); read in the zone the file gives.
	charges := `[{"cart": "r0-9", "status": "approved", "created_at": "2026-12-01 10:00:00"}, {"cart": "r1-1", "status": "approved", "created_at": "2026-12-01 10:00:00"}]`
	_, err = readFactsFrom(t, "", `[]`, charges)
	if err == nil || !strings.Contains(err.Error(), `created_at "2026-12-01 10:00:00" has no zone, and shop.yaml:`) || !strings.Contains(err.Error(), "books.charges gives none") {
		t.Errorf("no zone: %v", err)
	}
	f, err := readFactsFrom(t, "zone: Europe/Berlin", `[]`, charges)
	if err != nil || len(f.Charges) != 1 || !f.Charges[0].At.Equal(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)) {
		t.Errorf("zone Europe/Berlin: %+v, %v", f, err)
	}
}
