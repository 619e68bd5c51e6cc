package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gameday-dev/gameday/gameday/system"
)

// init --system writes a starter system file that validates as written,
// and never overwrites one.
func TestInitWritesStarterSystem(t *testing.T) {
	file := filepath.Join(t.TempDir(), "gameday.yaml")
	var stdout, stderr bytes.Buffer
	if err := initCmd([]string{"--system", file}, &stdout, &stderr); err != nil {
		t.Fatalf("init --system: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "wrote "+file) || !strings.Contains(stdout.String(), "gameday validate --system "+file) {
		t.Errorf("stdout: %s", stdout.String())
	}
	if _, err := system.LoadFile(file, nil); err != nil {
		t.Fatalf("the starter does not validate: %v", err)
	}
	// The drill its last comment shows validates against it, as written.
	starter, _ := os.ReadFile(file)
	_, example, ok := strings.Cut(string(starter), "#   name: postgres-down\n")
	if !ok {
		t.Fatal("the starter shows no drill")
	}
	var drill strings.Builder
	drill.WriteString("name: postgres-down\n")
	for _, line := range strings.Split(example, "\n") {
		if rest, ok := strings.CutPrefix(line, "#   "); ok {
			drill.WriteString(rest + "\n")
		}
	}
	drillFile := filepath.Join(filepath.Dir(file), "drills", "postgres-down.yaml")
	if err := os.Mkdir(filepath.Dir(drillFile), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, drillFile, drill.String())
	stdout.Reset()
	if err := validateCmd([]string{drillFile}, &stdout, &stderr); err != nil || !strings.Contains(stdout.String(), "ok  postgres-down") {
		t.Fatalf("the starter's drill: %v\n%s%s\n%s", err, stdout.String(), stderr.String(), drill.String())
	}
	if err := os.WriteFile(file, []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code := run([]string{"init", "--system", file}, &stdout, &stderr); code != exitUsage {
		t.Errorf("init over an existing file: exit %d, want %d", code, exitUsage)
	}
	if b, _ := os.ReadFile(file); string(b) != "mine\n" {
		t.Errorf("the existing file changed: %q", b)
	}
}

// run --system refuses a bad system file (file:line, exit 2, before
// anything starts), and a system with an environment gameday starts.
func TestRunSystemErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "gameday.yaml")
	writeFile(t, bad, "name: shop\nbase_url: http://127.0.0.1:1\nsku: s\npurchase:\n  steps:\n    - url: /buy\n      body: '{{.Cart}}'\n      answers: [{status: 201, outcome: confirmed}]\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--system", bad, "baseline"}, bad + ":7: purchase.steps[0].body: template: .Cart: no such value"},
		{[]string{"run", "--system", "../../examples/pyshop/gameday.yaml", "--env", "containers", "baseline"}, "-system drills a system as it runs"},
		{[]string{"run", "--env", "external", "baseline"}, "needs a system file (-system FILE)"},
		// Flags after the scenarios are flags, not scenarios' names.
		{[]string{"run", "baseline", "-time-scale", "0"}, "-rate-scale and -time-scale must be above 0"},
		{[]string{"run", "baseline", "-env", "external", "payment-latency"}, "needs a system file (-system FILE)"},
		{[]string{"run", "--system", "../../examples/pyshop/gameday.yaml", "--env", "external", "--checkout-url", "http://127.0.0.1:9", "--toxiproxy", "127.0.0.1:8", "baseline"}, "-system ../../examples/pyshop/gameday.yaml and -toxiproxy 127.0.0.1:8: a system file drills the system it describes"},
		{[]string{"drill", "--system", "../../examples/pyshop/gameday.yaml", "--payment-url", "http://127.0.0.1:9"}, "and -payment-url http://127.0.0.1:9"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(c.args, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, stderr.String(), exitUsage, c.want)
		}
	}
}
