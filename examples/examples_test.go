// The two example systems, drilled for real through their system files:
// pyshop (Python, stock in Redis, orders in PostgreSQL) and ticketshop (a
// two-step purchase, other codes, a breaker it does not expose). Each runs
// against a real redis-server, a real PostgreSQL and the payment stand-in,
// all on loopback, started here; the drills pass and fail for the reasons
// their files give.
package examples_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/checkout/payment"
	"github.com/gameday-dev/gameday/gameday"
	"github.com/gameday-dev/gameday/gameday/faults"
	"github.com/gameday-dev/gameday/gameday/system"
	"github.com/gameday-dev/gameday/internal/testenv"
	"github.com/gameday-dev/gameday/scenarios"
)

// gateway starts the payment stand-in as the shops' payment gateway.
func gateway(t *testing.T) string {
	t.Helper()
	pay, err := payment.NewServer(payment.Config{MinLatency: 20 * time.Millisecond, MaxLatency: 60 * time.Millisecond, Seed: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(pay)
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// serve starts a shop and waits until it answers /healthz; it is stopped
// when the test ends, or before by the function it returns.
func serve(t *testing.T, url string, name string, args ...string) (stop func()) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	var log strings.Builder
	done := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
		}
		close(done)
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				_ = cmd.Process.Kill()
			}
			_ = cmd.Wait()
			if t.Failed() {
				t.Logf("%s said:\n%s", filepath.Base(name), log.String())
			}
		})
	}
	t.Cleanup(stop)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if resp, err := http.Get(url + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return stop
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not answering at %s within 20s", name, url)
		}
	}
}

// pyshop starts the Python shop in mode (and with the flags more), with
// its own Redis, PostgreSQL and gateway, and returns its system file's
// variables.
func pyshop(t *testing.T, mode string, more ...string) map[string]string {
	t.Helper()
	if err := exec.Command("/usr/bin/python3", "-c", "import psycopg2, redis").Run(); err != nil {
		t.Fatalf("Debian's python3 with psycopg2 and redis is needed; the README's test command installs them (%v)", err)
	}
	rs := testenv.Redis(t)
	pg := testenv.PostgresServer(t)
	v := map[string]string{
		"PYSHOP_URL": "http://" + testenv.FreeAddr(t), "PYSHOP_PG": pg.DSN,
		"PG_ADDR": pg.Addr, "PG_PROXY": testenv.FreeAddr(t),
		"REDIS_ADDR": rs.Addr(), "REDIS_PROXY": testenv.FreeAddr(t),
		"GATEWAY_ADDR": gateway(t), "GATEWAY_PROXY": testenv.FreeAddr(t),
	}
	args := []string{"pyshop/shop.py", "--listen", strings.TrimPrefix(v["PYSHOP_URL"], "http://"),
		"--redis", "redis://" + v["REDIS_PROXY"], "--pg", "postgres://gameday@" + v["PG_PROXY"] + "/postgres?sslmode=disable",
		"--gateway", "http://" + v["GATEWAY_PROXY"], "--mode", mode, "--init-db", pg.DSN}
	serve(t, v["PYSHOP_URL"], "/usr/bin/python3", append(args, more...)...)
	return v
}

// ticketshop starts the Go ticket shop with its own Redis and gateway.
func ticketshop(t *testing.T, breaker bool, more ...string) map[string]string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "ticketshop")
	if err := testenv.GoBuild(bin, "./ticketshop"); err != nil {
		t.Fatal(err)
	}
	rs := testenv.Redis(t)
	v := map[string]string{
		"TICKETSHOP_URL": "http://" + testenv.FreeAddr(t), "REDIS_ADDR": rs.Addr(), "REDIS_PROXY": testenv.FreeAddr(t),
		"GATEWAY_ADDR": gateway(t), "GATEWAY_PROXY": testenv.FreeAddr(t),
	}
	args := []string{"-listen", strings.TrimPrefix(v["TICKETSHOP_URL"], "http://"),
		"-redis", v["REDIS_PROXY"], "-gateway", "http://" + v["GATEWAY_PROXY"], "-breaker=" + strconv.FormatBool(breaker)}
	serve(t, v["TICKETSHOP_URL"], bin, append(args, more...)...)
	return v
}

// drill runs a scenario of an example against the system its file
// describes, with the variables its harness chose.
func drill(t *testing.T, systemFile, scenario string, vars map[string]string) *gameday.Record {
	t.Helper()
	sys, err := system.LoadFile(systemFile, vars)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenarios.LoadFile(scenario)
	if err != nil {
		t.Fatal(err)
	}
	rec, dir, err := gameday.Run(context.Background(), sc, gameday.Options{
		System: sys, RunsDir: t.TempDir(), Journal: faults.OpenJournal(filepath.Join(t.TempDir(), "j.json")),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %s %s\n%s", sc.Name, rec.Verdict, rec.Reason, summary(rec))
	testenv.KeepRun(t, dir)
	// What the run observed, judged again, gives its judgement, byte
	// for byte (gameday judge).
	r, err := gameday.Rejudge(dir, "")
	if err == nil {
		err = r.Unchanged()
	}
	if err != nil {
		t.Errorf("judge the run again: %v", err)
	}
	return rec
}

func summary(r *gameday.Record) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  outcomes %v\n", r.Outcomes)
	for _, e := range append(append([]gameday.ExpectationResult{}, r.Expectations...), r.InvariantChecks...) {
		fmt.Fprintf(&b, "  %v %s — %s\n", e.Held, e.Promise, e.Observed)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "  note: %s\n", n)
	}
	return b.String()
}

func invariant(r *gameday.Record, name string) gameday.ExpectationResult {
	for _, c := range r.InvariantChecks {
		if c.Invariant == name {
			return c
		}
	}
	return gameday.ExpectationResult{}
}

func TestPyshop(t *testing.T) {
	// Safe, no fault: it keeps its promises, and every oracle is checked
	// but the two that hold the shop's own count of units sold to its
	// orders: pyshop keeps no such count.
	t.Run("baseline", func(t *testing.T) {
		rec := drill(t, "pyshop/gameday.yaml", "pyshop/drills/baseline.yaml", pyshop(t, "safe"))
		if rec.Verdict != gameday.VerdictPass {
			t.Fatalf("verdict %s: %s", rec.Verdict, rec.Reason)
		}
		unkept := map[string]bool{"sold_without_order": true, "orders_beyond_sold": true}
		for _, c := range rec.InvariantChecks {
			if c.NotChecked != unkept[c.Invariant] {
				t.Errorf("%s: not checked %v (needs %s)", c.Invariant, c.NotChecked, c.Needs)
			}
		}
		if rec.Outcomes["confirmed"] == 0 || rec.System != "pyshop" {
			t.Errorf("outcomes %v, system %q", rec.Outcomes, rec.System)
		}
	})
	// A cent short: the gateway is asked for int(19.99 * 100) cents,
	// 1998, for an order of 19.99. Every sale is a wrong amount, and the
	// drill fails for it, though every shopper was served.
	t.Run("a cent short", func(t *testing.T) {
		rec := drill(t, "pyshop/gameday.yaml", "pyshop/drills/baseline.yaml", pyshop(t, "safe", "--to-cents", "truncate"))
		want := int64(rec.Outcomes["confirmed"])
		if rec.Verdict != gameday.VerdictFail || want == 0 || rec.Invariants.WrongAmounts != want || !strings.Contains(rec.Reason, "wrong amounts") {
			t.Fatalf("verdict %s (%s), wrong amounts %d of %d confirmed: want every sale caught", rec.Verdict, rec.Reason, rec.Invariants.WrongAmounts, want)
		}
	})
	// Naive: the crowd oversells it, and the drill says so (exit 1).
	t.Run("naive oversells", func(t *testing.T) {
		rec := drill(t, "pyshop/gameday.yaml", "pyshop/drills/oversell.yaml", pyshop(t, "naive"))
		if rec.Verdict != gameday.VerdictFail || rec.Invariants.Oversold == 0 || !strings.Contains(rec.Reason, "oversold") {
			t.Fatalf("verdict %s (%s), oversold %d: want a failure for overselling", rec.Verdict, rec.Reason, rec.Invariants.Oversold)
		}
	})
	// Safe, same crowd: nothing oversold.
	t.Run("safe does not oversell", func(t *testing.T) {
		rec := drill(t, "pyshop/gameday.yaml", "pyshop/drills/oversell.yaml", pyshop(t, "safe"))
		if rec.Verdict != gameday.VerdictPass || rec.Invariants.Oversold != 0 {
			t.Fatalf("verdict %s (%s), oversold %d", rec.Verdict, rec.Reason, rec.Invariants.Oversold)
		}
	})
	// The PostgreSQL link reset mid-sale: safe mode answers 503 for
	// purchases whose order was committed, and the drill catches it.
	t.Run("postgres reset, safe", func(t *testing.T) {
		rec := drill(t, "pyshop/gameday.yaml", "pyshop/drills/postgres-reset.yaml", pyshop(t, "safe"))
		t.Logf("orders told failed: %d", rec.Invariants.OrdersToldFailed)
		if rec.Verdict != gameday.VerdictFail || rec.Invariants.OrdersToldFailed == 0 || !strings.Contains(rec.Reason, "orders told failed") {
			t.Fatalf("verdict %s (%s), orders told failed %d: want it caught", rec.Verdict, rec.Reason, rec.Invariants.OrdersToldFailed)
		}
	})
	// Careful mode asks again before answering: nobody is told a
	// committed purchase failed.
	t.Run("postgres reset, careful", func(t *testing.T) {
		rec := drill(t, "pyshop/gameday.yaml", "pyshop/drills/postgres-reset.yaml", pyshop(t, "careful"))
		if c := invariant(rec, "orders_told_failed"); !c.Held || c.NotChecked {
			t.Fatalf("careful mode: %+v (verdict %s: %s)", c, rec.Verdict, rec.Reason)
		}
		if rec.Verdict != gameday.VerdictPass {
			t.Fatalf("verdict %s: %s", rec.Verdict, rec.Reason)
		}
		// Every pending purchase was settled by its resolver: no unit
		// left held, no charge left without an order.
		for _, n := range rec.Notes {
			if strings.Contains(n, "did not settle") {
				t.Errorf("note: %s", n)
			}
		}
	})
	// The reply of a committed INSERT lost (lost_reply, every fifth): a
	// shop that compensates gives the unit back and voids the charge of
	// an order that stands, and the books catch it; careful mode asks
	// again and passes the same drill.
	t.Run("insert reply lost, compensating", func(t *testing.T) {
		rec := drill(t, "pyshop/gameday.yaml", "pyshop/drills/insert-reply-lost.yaml", pyshop(t, "compensating"))
		lostReplies(t, rec)
		if rec.Verdict != gameday.VerdictFail || rec.Invariants.UnitsCreated == 0 || !strings.Contains(rec.Reason, "units created") {
			t.Fatalf("verdict %s (%s), units created %d: want the units given back for orders that stand caught", rec.Verdict, rec.Reason, rec.Invariants.UnitsCreated)
		}
	})
	t.Run("insert reply lost, careful", func(t *testing.T) {
		rec := drill(t, "pyshop/gameday.yaml", "pyshop/drills/insert-reply-lost.yaml", pyshop(t, "careful"))
		lostReplies(t, rec)
		if rec.Verdict != gameday.VerdictPass {
			t.Fatalf("verdict %s: %s", rec.Verdict, rec.Reason)
		}
	})
}

// lostReplies fails the test unless the drill's lost_reply fault lost
// some replies: a drill whose fault hit nothing proves nothing.
func lostReplies(t *testing.T, rec *gameday.Record) {
	t.Helper()
	for _, f := range rec.Faults {
		if f.Hits != nil && f.Hits.Lost > 0 {
			t.Logf("%s: %d of %d matching requests lost their reply; first %q", f.Name, f.Hits.Lost, f.Hits.Matched, f.Hits.First)
			return
		}
	}
	t.Fatalf("no reply was lost: faults %+v", rec.Faults)
}

func TestTicketshop(t *testing.T) {
	// Its breaker opens and closes, seen from outside only.
	t.Run("breaker", func(t *testing.T) {
		rec := drill(t, "ticketshop/gameday.yaml", "ticketshop/drills/gateway-slow.yaml", ticketshop(t, true))
		if rec.Verdict != gameday.VerdictPass {
			t.Fatalf("verdict %s: %s", rec.Verdict, rec.Reason)
		}
		if len(rec.Breakers) != 0 {
			t.Errorf("breakers read from a shop that exposes none: %+v", rec.Breakers)
		}
	})
	// A hold kept for a retry when the breaker refuses its payment: the
	// shoppers who do not retry strand their tickets, neither sold nor
	// for sale once the books are final, and the drill fails for it
	// (every other invariant holds: nothing is lost, the hold is counted).
	t.Run("holds never given back", func(t *testing.T) {
		rec := drill(t, "ticketshop/gameday.yaml", "ticketshop/drills/gateway-slow.yaml", ticketshop(t, true, "-give-back=false"))
		if rec.Verdict != gameday.VerdictFail || rec.Invariants.StrandedUnits == 0 || !strings.Contains(rec.Reason, "stranded units") {
			t.Fatalf("verdict %s (%s), stranded units %d: want the kept holds caught", rec.Verdict, rec.Reason, rec.Invariants.StrandedUnits)
		}
		if rec.Invariants.LostUnits != 0 || rec.Invariants.UnitsCreated != 0 {
			t.Errorf("stranded holds counted as lost or created units too: %+v", rec.Invariants)
		}
	})
	// The wrong price deployed: every ticket records what it was charged,
	// so orders and charges agree, and only the sale's price (books.price)
	// shows every sale charged wrongly.
	t.Run("wrong price on both sides", func(t *testing.T) {
		rec := drill(t, "ticketshop/gameday.yaml", "ticketshop/drills/gateway-slow.yaml", ticketshop(t, true, "-price-cents", "5500"))
		want := int64(rec.Outcomes["confirmed"])
		// At least every confirmed sale: a shopper who left after the
		// charge was approved may have an order too.
		if rec.Verdict != gameday.VerdictFail || want == 0 || rec.Invariants.WrongAmounts < want {
			t.Fatalf("verdict %s (%s), wrong amounts %d of %d confirmed: want every sale caught", rec.Verdict, rec.Reason, rec.Invariants.WrongAmounts, want)
		}
		if !slices.ContainsFunc(rec.Notes, func(n string) bool { return strings.Contains(n, "took 5500 for an order of 1 at 4500 (books.price)") }) {
			t.Errorf("notes %q: want the first wrong amount against the price", rec.Notes)
		}
	})
	// A charge made and its answer lost: voided and paid again under the
	// hold's next key, the buyer pays once and the drill passes; sent again
	// at once under a key made for the call, the first charge stands too,
	// and the drill fails on the buyers charged twice.
	t.Run("charge answer lost", func(t *testing.T) {
		rec := drill(t, "ticketshop/gameday.yaml", "ticketshop/drills/charge-answer-lost.yaml", ticketshop(t, true))
		if rec.Verdict != gameday.VerdictPass {
			t.Fatalf("verdict %s: %s", rec.Verdict, rec.Reason)
		}
		if h := rec.Faults[0].Hits; h == nil || h.Hit == 0 {
			t.Fatalf("hits %+v: want answers lost", h)
		}
	})
	t.Run("charge sent again under a new key", func(t *testing.T) {
		rec := drill(t, "ticketshop/gameday.yaml", "ticketshop/drills/charge-answer-lost.yaml", ticketshop(t, true, "-fresh-key-retry"))
		if rec.Verdict != gameday.VerdictFail || rec.Invariants.DoubleCharges == 0 || !strings.Contains(rec.Reason, "double charges") {
			t.Fatalf("verdict %s (%s), double charges %d: want the buyers charged twice caught", rec.Verdict, rec.Reason, rec.Invariants.DoubleCharges)
		}
		if h := rec.Faults[0].Hits; h == nil || rec.Invariants.DoubleCharges > h.Hit {
			t.Errorf("double charges %d, answers lost %+v: at most one per answer lost", rec.Invariants.DoubleCharges, h)
		}
	})
	// A hold made and its answer lost (a lost_reply aimed at the hold
	// script's kind): the buyer's retry finds it by its reference and the
	// drill passes; retried at once without that key, a second ticket is
	// taken and the first is lost (lost_units).
	t.Run("hold answer lost", func(t *testing.T) {
		rec := drill(t, "ticketshop/gameday.yaml", "ticketshop/drills/hold-answer-lost.yaml", ticketshop(t, true))
		if rec.Verdict != gameday.VerdictPass {
			t.Fatalf("verdict %s: %s", rec.Verdict, rec.Reason)
		}
		lostReplies(t, rec)
		if k := rec.Faults[0].Hits.Kinds; len(k) != 1 || k["EVALSHA ca159073"] == 0 {
			t.Errorf("kinds hit %v: want the hold script's alone", k)
		}
	})
	t.Run("hold retried without its key", func(t *testing.T) {
		rec := drill(t, "ticketshop/gameday.yaml", "ticketshop/drills/hold-answer-lost.yaml", ticketshop(t, true, "-unkeyed-hold-retry"))
		if rec.Verdict != gameday.VerdictFail || rec.Invariants.LostUnits == 0 {
			t.Fatalf("verdict %s (%s), lost units %d: want the tickets taken twice caught", rec.Verdict, rec.Reason, rec.Invariants.LostUnits)
		}
		if h := rec.Faults[0].Hits; h == nil || rec.Invariants.LostUnits > h.Lost {
			t.Errorf("lost units %d, answers lost %+v: at most one per answer lost", rec.Invariants.LostUnits, h)
		}
	})
	// A sale recorded and its answer lost: the charge stands and the
	// buyer's retry finds the ticket; undone instead (-void-on-sell-error),
	// the ticket stays sold with its charge voided.
	t.Run("sale answer lost", func(t *testing.T) {
		rec := drill(t, "ticketshop/gameday.yaml", "ticketshop/drills/sale-answer-lost.yaml", ticketshop(t, true))
		if rec.Verdict != gameday.VerdictPass {
			t.Fatalf("verdict %s: %s", rec.Verdict, rec.Reason)
		}
		lostReplies(t, rec)
	})
	t.Run("sale undone after its answer was lost", func(t *testing.T) {
		rec := drill(t, "ticketshop/gameday.yaml", "ticketshop/drills/sale-answer-lost.yaml", ticketshop(t, true, "-void-on-sell-error"))
		if rec.Verdict != gameday.VerdictFail || rec.Invariants.OrdersWithoutCharge == 0 {
			t.Fatalf("verdict %s (%s), orders without charge %d: want the tickets whose charge was voided caught", rec.Verdict, rec.Reason, rec.Invariants.OrdersWithoutCharge)
		}
	})
	// Charges slower than a hold lasts: a shop whose holds last until
	// paid passes; one whose holds expire first (-hold-ttl, shorter than
	// a charge can take) sells each such ticket to its buyer after it
	// went back on sale, and the books catch the units created.
	t.Run("charges slower than holds last", func(t *testing.T) {
		rec := drill(t, "ticketshop/gameday.yaml", "ticketshop/drills/charge-slower-than-hold.yaml", ticketshop(t, true, "-pay-timeout", "2s"))
		if rec.Verdict != gameday.VerdictPass {
			t.Fatalf("verdict %s: %s", rec.Verdict, rec.Reason)
		}
		if h := rec.Faults[0].Hits; h == nil || h.Hit == 0 {
			t.Fatalf("hits %+v: want charges delayed", h)
		}
	})
	t.Run("holds expire while their charge is in flight", func(t *testing.T) {
		rec := drill(t, "ticketshop/gameday.yaml", "ticketshop/drills/charge-slower-than-hold.yaml", ticketshop(t, true, "-pay-timeout", "2s", "-hold-ttl", "500ms"))
		if rec.Verdict != gameday.VerdictFail || rec.Invariants.UnitsCreated == 0 || !strings.Contains(rec.Reason, "units created") {
			t.Fatalf("verdict %s (%s), units created %d: want the tickets sold after their hold expired caught", rec.Verdict, rec.Reason, rec.Invariants.UnitsCreated)
		}
		// At most one per charge the fault held (matched: delayed, or
		// released when the fault went).
		if h := rec.Faults[0].Hits; h == nil || rec.Invariants.UnitsCreated > h.Matched {
			t.Errorf("units created %d, charges delayed %+v: at most one per charge held", rec.Invariants.UnitsCreated, h)
		}
	})
	// Without one, every buyer waits for the gateway: the black-box
	// promise fails, for that reason. Run as a user runs it: the gameday
	// command with nothing but the system file (its variables from the
	// environment), exit 1.
	t.Run("no breaker", func(t *testing.T) {
		vars := ticketshop(t, false)
		bin := filepath.Join(t.TempDir(), "gameday")
		if err := testenv.GoBuild(bin, "../cmd/gameday"); err != nil {
			t.Fatal(err)
		}
		out, code := runCmd(t, bin, "", vars, "run", "-quiet", "-system", "ticketshop/gameday.yaml", "-runs-dir", t.TempDir(),
			"-journal", filepath.Join(t.TempDir(), "j.json"), "ticketshop/drills/gateway-slow.yaml")
		if code != 1 || !strings.Contains(out, "FAIL  ticketshop-gateway-slow") ||
			!strings.Contains(out, "FAIL at least 40% of answers are refusals in under 50ms") {
			t.Fatalf("exit %d, want 1 with the fast refusals failed:\n%s", code, out)
		}
	})
}
