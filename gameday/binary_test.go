package gameday_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/gameday-dev/gameday/gameday"
	"github.com/gameday-dev/gameday/gameday/env"
	"github.com/gameday-dev/gameday/scenarios"
)

// The local environment starts its children from a gameday executable,
// never blindly from whatever program is running: a team's test suite
// that drills through this package (this test binary, here) and names no
// Binary is told so before anything starts, and nothing is left behind.
func TestTheLocalEnvironmentNeedsTheGamedayExecutable(t *testing.T) {
	if got, err := env.ResolveBinary(binary); err != nil || got != binary {
		t.Fatalf("the gameday executable: %q, %v", got, err)
	}
	for _, c := range []struct{ bin, want string }{
		{"", "Binary is not set, and this process's executable"},
		{"/bin/sh", "Binary /bin/sh is not the gameday executable"},
		{"/no/such/gameday", "Binary /no/such/gameday is not the gameday executable"},
	} {
		if _, err := env.ResolveBinary(c.bin); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "go build -o gameday ./cmd/gameday") {
			t.Errorf("ResolveBinary(%q): %v, want an error saying %q and what to set", c.bin, err, c.want)
		}
	}
	sc, err := scenarios.Lookup("baseline")
	if err != nil {
		t.Fatal(err)
	}
	runs := t.TempDir()
	rec, _, err := gameday.Run(context.Background(), sc, gameday.Options{RunsDir: runs})
	if err == nil && (rec == nil || rec.Verdict != gameday.VerdictError) {
		t.Fatalf("a drill from a program that is not gameday, without Binary: %+v, %v; want it refused", rec, err)
	}
	msg := ""
	if err != nil {
		msg = err.Error()
	} else {
		msg = rec.Reason
	}
	if !strings.Contains(msg, "set Binary") {
		t.Errorf("the refusal says %q; want it to say to set Binary", msg)
	}
	// Nothing was left running: the run's directory holds at most its
	// record, no child's log.
	entries, _ := os.ReadDir(runs)
	for _, e := range entries {
		if logs, _ := os.ReadDir(runs + "/" + e.Name()); len(logs) > 0 {
			for _, l := range logs {
				if strings.HasSuffix(l.Name(), ".log") {
					t.Errorf("%s/%s: a child was started", e.Name(), l.Name())
				}
			}
		}
	}
}
