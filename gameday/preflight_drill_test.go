package gameday_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday"
	"github.com/gameday-dev/gameday/gameday/env"
)

// A drill does not start on top of a fault it did not add: a toxic left
// on a proxy it uses (by hand, by another tool) refuses it before any load
// is sent, naming the toxic, and nothing is changed; through the command,
// exit 2.
func TestDrillRefusesAProxyWithAFaultItDidNotAdd(t *testing.T) {
	l := startService(t)
	if _, err := l.Toxiproxy().AddToxic(context.Background(), "payment", toxiFor("left-by-hand")); err != nil {
		t.Fatal(err)
	}
	o := options(t)
	o.Environment = external(l)
	rec := run(t, context.Background(), lookup(t, "payment-latency"), o)
	if rec.Verdict != gameday.VerdictError || !strings.Contains(rec.Reason, "left-by-hand") || rec.Load.Started != 0 {
		t.Fatalf("verdict %s (%s), %d started: want an error naming the toxic, nothing sent", rec.Verdict, rec.Reason, rec.Load.Started)
	}
	if got := faultsOn(t, l); len(got) != 1 || got[0] != "payment/left-by-hand" {
		t.Errorf("on the Toxiproxy: %v, want the toxic left as it was", got)
	}
	ext := external(l)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "run", "-quiet", "-env", "external", "-journal", filepath.Join(t.TempDir(), "j.json"), "-runs-dir", t.TempDir(),
		"-toxiproxy", ext.Toxiproxy, "-checkout-url", ext.CheckoutURL, "-payment-url", ext.PaymentURL,
		"-proxy", "payment=payment", "-proxy", "inventory=inventory", "-proxy", "sessions=sessions", "payment-latency")
	cmd.Env = append(cmd.Environ(), env.AdminTokenVar+"="+ext.AdminToken)
	out, err := cmd.CombinedOutput()
	if code := exitCode(err); code != 2 || !strings.Contains(string(out), "left-by-hand") {
		t.Errorf("exit %d, want 2 naming the toxic:\n%s", code, out)
	}
}
