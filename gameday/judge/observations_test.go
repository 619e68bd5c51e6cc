package judge

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/runrecord"
	"github.com/gameday-dev/gameday/scenarios"
)

// What a run observed, written and read back, is judged as it was: the
// same judgement to the byte. Each kind of value that JSON could bend is
// in it: amounts as exact fractions, times with nanoseconds in another
// zone, a metric's NaN and +Inf and its error, a book that could not be
// read, the stalls of each worker.
func TestObservationsRoundTrip(t *testing.T) {
	sc, err := scenarios.Lookup("payment-latency")
	if err != nil {
		t.Fatal(err)
	}
	zone := time.FixedZone("UTC+5:30", 5*3600+1800)
	at := time.Date(2026, 12, 5, 12, 0, 0, 123456789, zone)
	n := func(v int64) *int64 { return &v }
	price := big.NewRat(1999, 100)
	f := &Facts{Initial: n(10), Available: n(7), Sold: n(4), OrdersKnown: true, OrderCharges: true, ChargesKnown: true,
		OrderAmounts: true, ChargeAmounts: true, Price: price, Final: true, Notes: []string{"read once settled"},
		Orders: []Order{{CheckoutID: "r-0", Charge: "c0", Units: 1, Amount: price}, {CheckoutID: "r-1", Charge: "c1", Units: 1, Amount: price}},
		Charges: []Charge{
			{CheckoutID: "r-0", ID: "c0", Status: "approved", At: at, Amount: price},
			{CheckoutID: "r-1", ID: "c1", Status: "approved", At: at.Add(time.Nanosecond), Amount: big.NewRat(1, 3)},
			{CheckoutID: "r-1", ID: "c1b", Status: "approved", At: at.Add(2 * time.Nanosecond), Amount: price},
		}}
	o := &Observations{Version: ObservationsVersion, System: "shop", SystemFile: "shop.yaml", End: 35 * sec,
		Faults:     FaultTimes{"slow-provider": {From: 10 * sec, Lifted: 20 * sec, To: 20*sec + 3*time.Millisecond}},
		Breakers:   map[string][]Transition{"payment": {{State: "open", AtMS: 10400}, {State: "closed", AtMS: 24000}}},
		Metrics:    map[string][]Sample{"q": {{At: sec, V: math.NaN()}, {At: 2 * sec, V: math.Inf(1)}, {At: 3 * sec, Err: errors.New("prometheus: 503"), NoValue: true}}},
		Books:      []Books{{Name: "shop", File: "shop.yaml", Facts: f}, {Shop: "b", Pod: "pod-1", Away: true, Name: "shop b", File: "shop.yaml"}},
		Ending:     Ended{Left: "toxiproxy: 500", Idle: []string{"lost on payment saw 0"}},
		Starvation: Starvation{Runner: []Stall{{From: sec, To: sec + 150*time.Millisecond}}, Shards: [][]Stall{nil, {{From: 2 * sec, To: 3 * sec}}}},
		Host:       "the runner's 10 ms timer stalled up to 150 ms",
	}
	for i := range 40 {
		s := Shopper{ID: fmt.Sprintf("r-%d", i), Shard: i % 2, Scheduled: time.Duration(i) * 800 * time.Millisecond, Outcome: Confirmed,
			Told: "confirmed", LeftAt: at.Add(time.Duration(i) * time.Second), ToldPending: at.Add(time.Duration(i) * time.Millisecond)}
		s.Attempts = []Attempt{{At: s.Scheduled, Latency: 90*time.Millisecond + time.Duration(i), Status: "confirmed", Degraded: i%3 == 0}}
		s.Finished = s.Scheduled + s.Attempts[0].Latency
		o.Shoppers = append(o.Shoppers, s)
	}
	path := filepath.Join(t.TempDir(), ObservationsFile)
	if err := WriteObservations(path, o); err != nil {
		t.Fatal(err)
	}
	back, err := ReadObservations(path)
	if err != nil {
		t.Fatal(err)
	}
	if s := back.Metrics["q"]; !math.IsNaN(s[0].V) || !math.IsInf(s[1].V, 1) || s[2].Err == nil || s[2].Err.Error() != "prometheus: 503" || !s[2].NoValue {
		t.Errorf("metric samples read back as %+v", s)
	}
	if c := back.Books[0].Facts.Charges[1]; c.Amount.Cmp(big.NewRat(1, 3)) != 0 || !c.At.Equal(at.Add(time.Nanosecond)) {
		t.Errorf("charge read back as %+v", c)
	}
	if back.Books[1].Facts != nil || len(back.Starvation.Shards) != 2 {
		t.Errorf("books %+v, starvation %+v", back.Books[1], back.Starvation)
	}
	want, got := encode(t, Run(sc, o)), encode(t, Run(sc, back))
	if want != got {
		t.Fatalf("judged from the file:\n%s\njudged as observed:\n%s", got, want)
	}
	// The judgement is one a drill could reach: the second charge of r-1
	// is a double charge, shown but not judged, since the books were read
	// with a fault still in place (the removal answered 500): an error.
	if j := Run(sc, back); j.Verdict != runrecord.VerdictError || j.Invariants.DoubleCharges != 1 || !strings.Contains(j.Reason, "showed double charges") {
		t.Errorf("verdict %s (%s), invariants %+v", j.Verdict, j.Reason, j.Invariants)
	}
}

func encode(t *testing.T, j Judged) string {
	t.Helper()
	b, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A version this gameday does not know is refused, named; so is a file
// that is not gzip.
func TestReadObservationsRefuses(t *testing.T) {
	dir := t.TempDir()
	later := filepath.Join(dir, "later.json.gz")
	if err := WriteObservations(later, &Observations{Version: ObservationsVersion + 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadObservations(later); err == nil || !strings.Contains(err.Error(), "version 2, but this gameday reads version 1") {
		t.Errorf("later version: %v", err)
	}
	plain := filepath.Join(dir, "plain.json")
	if err := runrecord.WriteFileAtomic(plain, []byte(`{"version": 1}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadObservations(plain); err == nil || !strings.Contains(err.Error(), "plain.json") {
		t.Errorf("not gzip: %v", err)
	}
}
