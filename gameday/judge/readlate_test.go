package judge

import (
	"strings"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/runrecord"
)

// A shopper's leaving is marked read late only when the stall of the
// machine that timed it covers the moment it left: it gave up at its
// deadline with its last request unanswered (no answer taken), and that
// moment fell in a stall, or within the stall's length after it. Not a
// shopper that left on an answer (told to come back too late), one the
// system told too late, one the load was cut under, one a stall far from
// its leaving, another worker's or the coordinator's stall, or only the
// system's own stall touched.
func TestReadLateMarksOnlyALeavingAStallCovers(t *testing.T) {
	left := 10200 * ms
	base := Shopper{ID: "r-1", Scheduled: 200 * ms, Outcome: GaveUp, Finished: left,
		Attempts: []Attempt{{At: 200 * ms, Latency: 10 * time.Second, Status: "error"}}}
	for _, c := range []struct {
		name   string
		change func(*Shopper)
		st     Starvation
		marked bool
	}{
		{"left in a stall", nil, Starvation{Runner: stall(10*time.Second, 10300*ms)}, true},
		{"left just after one", nil, Starvation{Runner: stall(9800*ms, 10050*ms)}, true},
		{"no stall", nil, Starvation{}, false},
		{"a stall elsewhere in the run", nil, Starvation{Runner: stall(3*time.Second, 3300*ms)}, false},
		{"a stall long before it left", nil, Starvation{Runner: stall(9*time.Second, 9200*ms)}, false}, // its shadow ends at 9.4 s
		{"left on an answer", func(s *Shopper) { s.Told = "unavailable" }, Starvation{Runner: stall(10*time.Second, 10300*ms)}, false},
		{"told too late", func(s *Shopper) { s.Outcome, s.Told = TooLate, "too_late" }, Starvation{Runner: stall(10*time.Second, 10300*ms)}, false},
		{"cut by the runner", func(s *Shopper) { s.Cut = true }, Starvation{Runner: stall(10*time.Second, 10300*ms)}, false},
		{"its worker stalled", func(s *Shopper) { s.Shard = 1 }, Starvation{Shards: [][]Stall{nil, stall(10*time.Second, 10300*ms)}}, true},
		{"another worker stalled", func(s *Shopper) { s.Shard = 1 }, Starvation{Shards: [][]Stall{stall(10*time.Second, 10300*ms), nil}}, false},
		{"the coordinator stalled", func(s *Shopper) { s.Shard = 1 }, Starvation{Runner: stall(10*time.Second, 10300*ms), Shards: [][]Stall{nil, nil}}, false},
		{"only the system stalled", nil, Starvation{System: []Stall{{From: 10 * time.Second, To: 10300 * ms, Waited: 300 * ms}}}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := base
			if c.change != nil {
				c.change(&s)
			}
			in := []Shopper{s, {ID: "r-2", Outcome: Confirmed, Told: "confirmed", Finished: left}}
			out, n := markReadLate(in, c.st)
			if out[0].ReadLate != c.marked || out[1].ReadLate || (n == 1) != c.marked {
				t.Errorf("marked %v (%d marked); want %v", out[0].ReadLate, n, c.marked)
			}
			if in[0].ReadLate {
				t.Error("the observations were changed")
			}
		})
	}
}

// Books right but for charges the stalls kept from being judged are not
// a pass: the verdict is inconclusive and says so; beside an excused
// promise it is inconclusive too, and beside a failure the stalls cannot
// explain the run fails.
func TestReadLateMakesAPassInconclusive(t *testing.T) {
	const line = "charged after leaving: 1 charge made before the shopper's deadline (r-1) not counted"
	broken := []ExpectationResult{{Promise: "p95 stays under 300ms", Observed: "p95 400ms"}}
	for _, c := range []struct {
		name         string
		expectations []ExpectationResult
		starved      []string
		others       int
		want         runrecord.Verdict
	}{
		{"nothing else failed", nil, nil, 0, runrecord.VerdictInconclusive},
		{"a promise the stalls excuse", broken, []string{"p95 stays under 300ms (excused)"}, 0, runrecord.VerdictInconclusive},
		{"a promise they do not", broken, nil, 1, runrecord.VerdictFail},
	} {
		t.Run(c.name, func(t *testing.T) {
			j := Decide(Ending{Expectations: c.expectations, ReadLate: line, Host: "the runner's timer stalled up to 300 ms",
				Starved: func() ([]string, int) { return c.starved, c.others }})
			if j.Verdict != c.want {
				t.Fatalf("verdict %s (%s), want %s", j.Verdict, j.Reason, c.want)
			}
			if !strings.Contains(strings.Join(j.Starved, "; "), line) {
				t.Errorf("starved %q: the charges not counted are not named", j.Starved)
			}
			if c.want == runrecord.VerdictInconclusive && !strings.Contains(j.Reason, line) {
				t.Errorf("reason %q does not say why", j.Reason)
			}
		})
	}
}
