package record

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/load"
)

// attempts.csv numbers a shopper's requests across the purchase's steps
// and says each one's step, so that the requests of a two-step purchase
// can be told apart.
func TestAttemptsFileNamesEachRequestsStep(t *testing.T) {
	dir := t.TempDir()
	r := &load.Report{Shoppers: []*load.Shopper{{Index: 0, ID: "r-0", Outcome: "confirmed", Attempts: []load.Attempt{
		{Step: 0, Code: 201, Status: "next"},
		{Step: 1, Code: 503, Status: "unavailable", RetryAfter: time.Second},
		{Step: 1, Code: 200, Status: "confirmed"},
	}}}}
	if err := writeAttempts(dir, r, []string{"place", "pay"}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, AttemptsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 || !slices.Equal(rows[0], attemptsHeader) {
		t.Fatalf("rows %q", rows)
	}
	col := func(name string) int { return slices.Index(attemptsHeader, name) }
	for i, want := range [][4]string{{"1", "1", "place", "0"}, {"2", "2", "pay", "1000"}, {"3", "2", "pay", "0"}} {
		row := rows[i+1]
		if got := [4]string{row[col("attempt")], row[col("step")], row[col("step_name")], row[col("retry_after_ms")]}; got != want {
			t.Errorf("request %d: attempt, step, step_name, retry_after_ms %q, want %q", i+1, got, want)
		}
	}
}
