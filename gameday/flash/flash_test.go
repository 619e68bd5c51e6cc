package flash_test

import (
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/flash"
	"github.com/gameday-dev/gameday/gameday/load"
)

const ms = time.Millisecond

// buyer is a shopper who arrived at index i and bought at finished, after one
// attempt sent at its arrival.
func buyer(i int, finished time.Duration) flash.Shopper {
	at := time.Duration(i) * ms
	return flash.Shopper{
		Index: i, Scheduled: at, Started: at, Finished: finished, Outcome: load.OutcomeConfirmed,
		Attempts: []flash.Attempt{{At: at, Took: finished - at, Code: 200, Status: "confirmed"}},
	}
}

// buyersFinishing makes buyers 0..n-1, buyer i finishing at finished[i].
func buyersFinishing(finished ...time.Duration) []flash.Shopper {
	out := make([]flash.Shopper, len(finished))
	for i, f := range finished {
		out[i] = buyer(i, f)
	}
	return out
}

func TestFairnessRankCorrelation(t *testing.T) {
	for _, tc := range []struct {
		name     string
		finished []time.Duration // buyer i's purchase time
		want     float64
	}{
		// Bought in arrival order: perfectly fair.
		{"in order", []time.Duration{10 * ms, 20 * ms, 30 * ms, 40 * ms, 50 * ms}, 1},
		// Bought in reverse order.
		{"reversed", []time.Duration{50 * ms, 40 * ms, 30 * ms, 20 * ms, 10 * ms}, -1},
		// Purchase ranks 2 1 4 3 5: sum of squared rank differences 4, so
		// 1 - 6·4/(5·24) = 0.8.
		{"two swaps", []time.Duration{20 * ms, 10 * ms, 40 * ms, 30 * ms, 50 * ms}, 0.8},
		// The first two bought at the same instant: purchase ranks 1.5 1.5
		// 3 4 against 1 2 3 4, a Pearson correlation of 4.5/sqrt(5·4.5),
		// which is 3/sqrt(10).
		{"tie", []time.Duration{10 * ms, 10 * ms, 20 * ms, 30 * ms}, 3 / math.Sqrt(10)},
		// One buyer: no order to speak of.
		{"one buyer", []time.Duration{10 * ms}, 0},
		// No buyer at all.
		{"no buyer", nil, 0},
		// Everyone bought at the same instant: the order is undefined.
		{"all tied", []time.Duration{10 * ms, 10 * ms, 10 * ms}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := flash.Compute(buyersFinishing(tc.finished...), 0, 0)
			if math.Abs(f.FairnessRankCorrelation-tc.want) > 1e-12 {
				t.Errorf("fairness_rank_correlation = %v, want %v", f.FairnessRankCorrelation, tc.want)
			}
		})
	}
}

func TestFairnessIgnoresNonBuyers(t *testing.T) {
	// Buyers 0, 2 and 4 bought in reverse order; the shoppers between them
	// left early, and would make the order look fair if they were counted.
	ss := []flash.Shopper{
		buyer(0, 300*ms),
		{Index: 1, Scheduled: ms, Started: ms, Finished: 2 * ms, Outcome: load.OutcomeDeclined},
		buyer(2, 200*ms),
		{Index: 3, Scheduled: 3 * ms, Started: 3 * ms, Finished: 4 * ms, Outcome: load.OutcomeTooLate},
		buyer(4, 100*ms),
	}
	if got := flash.Compute(ss, 0, 0).FairnessRankCorrelation; got != -1 {
		t.Errorf("fairness_rank_correlation = %v, want -1", got)
	}
}

func TestEarlyHalfBought(t *testing.T) {
	started := func(i int, outcome string) flash.Shopper {
		at := time.Duration(i) * time.Second
		return flash.Shopper{Index: i, Scheduled: at, Started: at, Finished: at + ms, Outcome: outcome}
	}
	for _, tc := range []struct {
		name string
		ss   []flash.Shopper
		want float64
	}{
		// Five started: the early half is the first three (the middle one
		// belongs to it), of whom two bought. The late buyers do not count.
		{"odd", []flash.Shopper{
			started(0, load.OutcomeConfirmed), started(1, load.OutcomeGaveUp), started(2, load.OutcomeConfirmed),
			started(3, load.OutcomeConfirmed), started(4, load.OutcomeConfirmed),
		}, 2.0 / 3},
		// Four started: the first two, one bought.
		{"even", []flash.Shopper{
			started(0, load.OutcomeDeclined), started(1, load.OutcomeConfirmed),
			started(2, load.OutcomeConfirmed), started(3, load.OutcomeConfirmed),
		}, 0.5},
		// A dropped arrival never started: the early half of the three
		// started ones is the first two, both bought.
		{"dropped not counted", []flash.Shopper{
			{Index: 0, Outcome: load.OutcomeDropped},
			started(1, load.OutcomeConfirmed), started(2, load.OutcomeConfirmed), started(3, load.OutcomeTooLate),
		}, 1},
		// One started shopper is its own early half.
		{"one", []flash.Shopper{started(0, load.OutcomeConfirmed)}, 1},
		{"none", nil, 0},
		// Records out of arrival order: the early half is by arrival, not
		// by position in the slice.
		{"unordered", []flash.Shopper{
			started(3, load.OutcomeConfirmed), started(2, load.OutcomeConfirmed),
			started(1, load.OutcomeGaveUp), started(0, load.OutcomeGaveUp),
		}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := flash.Compute(tc.ss, 0, 0).EarlyHalfBought; math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("early_half_bought = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestOutcomeCounts(t *testing.T) {
	cut := flash.Attempt{At: 0, Took: 11 * time.Second, Err: true}
	wait := flash.Attempt{Code: 503, Status: "unavailable", Reason: flash.ReasonWaitingRoom}
	busy := flash.Attempt{Code: 503, Status: "unavailable", Reason: "timeout"}
	ss := []flash.Shopper{
		// Cut by its own deadline with a request in flight: a timeout.
		{Index: 0, Outcome: load.OutcomeGaveUp, Attempts: []flash.Attempt{wait, cut}},
		// Told to wait, and the wait would pass its deadline: gave up waiting.
		{Index: 1, Outcome: load.OutcomeGaveUp, Attempts: []flash.Attempt{wait, wait}},
		// Out of retries: also gave up waiting.
		{Index: 2, Outcome: load.OutcomeUnavailable, Attempts: []flash.Attempt{busy}},
		// Gave up before its first request (an aborted run): not a timeout.
		{Index: 3, Outcome: load.OutcomeGaveUp},
		// Refused at the deadline, and charged anyway.
		{Index: 4, Outcome: load.OutcomeTooLate, Attempts: []flash.Attempt{{Code: 410, Status: "too_late"}}, Charged: true},
		// Cut, and charged after it left.
		{Index: 5, Outcome: load.OutcomeGaveUp, Attempts: []flash.Attempt{cut}, Charged: true},
		// A buyer is charged: that is not charged after leaving.
		{Index: 6, Outcome: load.OutcomeConfirmed, Attempts: []flash.Attempt{{Code: 200, Status: "confirmed"}}, Charged: true},
		{Index: 7, Outcome: load.OutcomeDeclined, Attempts: []flash.Attempt{{Code: 402, Status: "declined"}}},
		// Dropped: a shopper of the run, but never started.
		{Index: 8, Outcome: load.OutcomeDropped},
		// Never reached (aborted run): not counted at all, even its answers.
		{Index: 9, Attempts: []flash.Attempt{wait}},
	}
	got := flash.Compute(ss, 7, 3)
	want := flash.Figures{
		Shoppers: 9, Confirmed: 1, Timeouts: 2, TooLate: 1, GaveUpWaiting: 3, Declined: 1,
		ChargedAfterLeaving: 2, MaxInProgress: 7, WaitingRoomAnswers: 3, Oversold: 3,
	}
	// Only the counts are under test here.
	got.SuccessP95MS, got.PurchaseMedianMS, got.WaitP95MS, got.TurnedAwayP95MS = 0, 0, 0, 0
	got.FairnessRankCorrelation, got.EarlyHalfBought = 0, 0
	if got != want {
		t.Errorf("Compute:\n got %+v\nwant %+v", got, want)
	}
}

func TestTimes(t *testing.T) {
	// Twenty buyers whose confirming attempt took 1..20 ms after waiting
	// 100 ms between attempts: the nearest-rank p95 of the confirming
	// attempts is the 19th value (19 ms); the 503s before are not counted.
	// The first ten were confirmed with a 201, as a described system may.
	var ss []flash.Shopper
	for i := range 20 {
		took := time.Duration(i+1) * ms
		code := 200
		if i < 10 {
			code = 201
		}
		start := time.Duration(i) * time.Second
		ss = append(ss, flash.Shopper{
			Index: i, Scheduled: start, Started: start, Finished: start + 100*ms + took,
			Outcome: load.OutcomeConfirmed,
			Attempts: []flash.Attempt{
				{At: start, Took: 50 * ms, Code: 503, Status: "unavailable", Reason: flash.ReasonWaitingRoom},
				{At: start + 100*ms, Took: took, Code: code, Status: "confirmed"},
			},
		})
	}
	// A shopper that waited 5 s and left: in the wait p95, not in the
	// purchase median.
	ss = append(ss, flash.Shopper{Index: 20, Scheduled: 20 * time.Second, Started: 20 * time.Second, Finished: 25 * time.Second, Outcome: load.OutcomeGaveUp})
	// Turned away: told too_late after 1..19 s; with the one who left
	// after 5 s, the p95 of 20 is the 19th, 18 s. A declined shopper was
	// not turned away.
	for i := range 19 {
		at := time.Duration(30+i) * time.Second
		ss = append(ss, flash.Shopper{Index: 21 + i, Scheduled: at, Started: at, Finished: at + time.Duration(i+1)*time.Second, Outcome: load.OutcomeTooLate})
	}
	ss = append(ss, flash.Shopper{Index: 40, Scheduled: time.Minute, Started: time.Minute, Finished: 2 * time.Minute, Outcome: load.OutcomeDeclined})
	in := slices.Clone(ss)

	f := flash.Compute(ss, 0, 0)
	// Purchases took 101..120 ms: the median of 20 is the 10th, 110 ms.
	// Waits are those, 5 s, 1..19 s and 60 s: the p95 of 41 is the 39th,
	// 18 s.
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"success_p95_ms", f.SuccessP95MS, 19},
		{"purchase_median_ms", f.PurchaseMedianMS, 110},
		{"wait_p95_ms", f.WaitP95MS, 18000},
		{"turned_away_p95_ms", f.TurnedAwayP95MS, 18000},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if !reflect.DeepEqual(ss, in) {
		t.Error("Compute changed the records")
	}
}

func TestEmpty(t *testing.T) {
	if got := flash.Compute(nil, 0, 0); got != (flash.Figures{}) {
		t.Errorf("Compute(nil) = %+v, want zero figures", got)
	}
}

// TestNames checks that every figure is named once, with the JSON name of a
// Figures field, and that Value reads that field.
func TestNames(t *testing.T) {
	// Distinct values in every field, so that a Value reading the wrong
	// field is caught.
	var f flash.Figures
	v := reflect.ValueOf(&f).Elem()
	for i := range v.NumField() {
		switch fv := v.Field(i); fv.Kind() {
		case reflect.Int:
			fv.SetInt(int64(i + 1))
		case reflect.Float64:
			fv.SetFloat(float64(i+1) + 0.5)
		default:
			t.Fatalf("field %s: unexpected kind %s", v.Type().Field(i).Name, fv.Kind())
		}
	}
	raw, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	var byKey map[string]float64
	if err := json.Unmarshal(raw, &byKey); err != nil {
		t.Fatal(err)
	}
	names := flash.Names()
	if len(names) != len(byKey) {
		t.Errorf("Names has %d figures, Figures has %d fields", len(names), len(byKey))
	}
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n.Key] {
			t.Errorf("figure %q named twice", n.Key)
		}
		seen[n.Key] = true
		if n.Unit == "" || n.Meaning == "" {
			t.Errorf("figure %q: unit %q, meaning %q: both are needed", n.Key, n.Unit, n.Meaning)
		}
		want, ok := byKey[n.Key]
		if !ok {
			t.Errorf("figure %q is no JSON field of Figures", n.Key)
			continue
		}
		if got := f.Value(n.Key); got != want {
			t.Errorf("Value(%q) = %v, want %v", n.Key, got, want)
		}
	}
	if got := f.Value("no_such_figure"); !math.IsNaN(got) {
		t.Errorf("Value of an unknown key = %v, want NaN", got)
	}
}
