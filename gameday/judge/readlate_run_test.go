package judge

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/runrecord"
	"github.com/gameday-dev/gameday/scenarios"
)

// The class (3e): a shopper whose confirmation the system sent in
// time, read after its deadline because the runner stalled, is recorded
// as gave up, and its charge read as a charge after leaving: a wrong
// failure. The charge is left uncounted, and the verdict says so
// (inconclusive: what the shopper would have seen is unknown), only where
// the stall of the machine that timed the shopper covers the moment it
// left and the charge came before its deadline. A charge after the
// deadline, a stall elsewhere in the run, no stall, or only the system's
// own stall leave it counted: the run fails. Judged again from the kept
// observations, the judgement is the same.
func TestChargeReadLateInAStall(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	// r-1 arrived at 0.2 s with 10 s of patience: its deadline is 10.2 s.
	// Its request was answered (the system charged it at 10 s and wrote
	// its order), but the runner took no answer: it recorded the shopper
	// as gave up at 10.3 s.
	readLate := Shopper{ID: "r-1", Scheduled: 200 * ms, Outcome: GaveUp, LeftAt: at(10200 * ms), Finished: 10300 * ms,
		Attempts: []Attempt{{At: 200 * ms, Latency: 10100 * ms, Status: "error"}}}
	confirmed := Shopper{ID: "r-2", Scheduled: 300 * ms, Outcome: Confirmed, Told: "confirmed", LeftAt: at(10300 * ms), Finished: 400 * ms,
		Attempts: []Attempt{{At: 300 * ms, Latency: 100 * ms, Status: "confirmed"}}}
	// r-3 gave up at 4 s, with no stall near, and was charged.
	gaveUp := Shopper{ID: "r-3", Scheduled: 2 * time.Second, Outcome: GaveUp, LeftAt: at(4 * time.Second), Finished: 4 * time.Second,
		Attempts: []Attempt{{At: 2 * time.Second, Latency: 2 * time.Second, Status: "error"}}}
	for _, c := range []struct {
		name     string
		chargeAt time.Duration // r-1's charge
		st       Starvation
		others   bool // r-3 in the sale too
		excused  bool
	}{
		{"the runner stalled as it left", 10 * time.Second, Starvation{Runner: stall(10*time.Second, 10300*ms)}, false, true},
		{"no stall", 10 * time.Second, Starvation{}, false, false},
		{"a stall elsewhere in the run", 10 * time.Second, Starvation{Runner: stall(3*time.Second, 3300*ms)}, false, false},
		{"charged after its deadline", 10250 * ms, Starvation{Runner: stall(10*time.Second, 10300*ms)}, false, false},
		{"another charged after leaving, no stall near", 10 * time.Second, Starvation{Runner: stall(10*time.Second, 10300*ms)}, true, false},
		{"only the system stalled", 10 * time.Second, Starvation{System: []Stall{{From: 10 * time.Second, To: 10300 * ms, Waited: 300 * ms}}}, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := &Facts{OrdersKnown: true, OrderCharges: true, ChargesKnown: true,
				Orders: []Order{{CheckoutID: "r-1", Charge: "c1", Units: 1}, {CheckoutID: "r-2", Charge: "c2", Units: 1}},
				Charges: []Charge{{CheckoutID: "r-1", ID: "c1", Status: "approved", At: at(c.chargeAt)},
					{CheckoutID: "r-2", ID: "c2", Status: "approved", At: at(350 * ms)}}}
			shoppers := []Shopper{readLate, confirmed}
			if c.others {
				shoppers = append(shoppers, gaveUp)
				f.Orders = append(f.Orders, Order{CheckoutID: "r-3", Charge: "c3", Units: 1})
				f.Charges = append(f.Charges, Charge{CheckoutID: "r-3", ID: "c3", Status: "approved", At: at(3 * time.Second)})
			}
			o := &Observations{Version: ObservationsVersion, System: "shop", SystemFile: "shop.yaml", End: 20 * time.Second,
				Faults: FaultTimes{}, Shoppers: shoppers, Breakers: map[string][]Transition{},
				Books: []Books{{Name: "shop", File: "shop.yaml", Facts: f}}, Starvation: c.st,
				Host: "the runner's 10 ms timer stalled up to 300 ms"}
			sc := &scenarios.Scenario{Name: "read-late"}
			j := Run(sc, o)
			want := runrecord.VerdictFail
			if c.excused {
				want = runrecord.VerdictInconclusive
			}
			if j.Verdict != want {
				t.Fatalf("verdict %s (%s), want %s", j.Verdict, j.Reason, want)
			}
			if !c.excused {
				if !strings.Contains(j.Reason, "charged after leaving") {
					t.Errorf("reason %q", j.Reason)
				}
				return
			}
			if j.Invariants.ChargedAfterLeaving != 0 || !strings.Contains(j.Reason, "r-1") || len(j.Starved) != 1 || !strings.Contains(j.Starved[0], "r-1") {
				t.Errorf("charged after leaving %d; reason %q; starved %q: want r-1's charge uncounted and named",
					j.Invariants.ChargedAfterLeaving, j.Reason, j.Starved)
			}
			// Judged again from what the run kept: the same judgement.
			path := filepath.Join(t.TempDir(), ObservationsFile)
			if err := WriteObservations(path, o); err != nil {
				t.Fatal(err)
			}
			back, err := ReadObservations(path)
			if err != nil {
				t.Fatal(err)
			}
			a, _ := json.Marshal(j)
			b, _ := json.Marshal(Run(sc, back))
			if string(a) != string(b) {
				t.Errorf("judged again:\n%s\nwas:\n%s", b, a)
			}
		})
	}
}
