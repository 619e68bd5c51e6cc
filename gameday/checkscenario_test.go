package gameday_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/gameday-dev/gameday/gameday"
	"github.com/gameday-dev/gameday/gameday/system"
	"github.com/gameday-dev/gameday/scenarios"
)

// A fault is checked against what it would act through, with nothing
// contacted: a command handle that gives no way to pause refuses a pause
// at the fault's line (not halfway through the load), a dependency without
// a handle refuses every process fault, an HTTP toxic on a dependency that
// speaks https (or any protocol but http) is refused; what a handle can
// do, an HTTP toxic where the protocol is http or not said, and lost_reply
// on anything pass.
func TestFaultNeedsWhatItActsThrough(t *testing.T) {
	sys, err := system.Parse("shop.yaml", []byte(`
name: shop
base_url: http://127.0.0.1:1
sku: s
purchase: {steps: [{url: /buy, answers: [{status: 200, outcome: confirmed}]}]}
dependencies:
  cache:
    listen: 127.0.0.1:16379
    upstream: 127.0.0.1:6379
  db:
    listen: 127.0.0.1:15432
    upstream: 127.0.0.1:5432
    process: {command: {kill: [pkill, -KILL, postgres], start: [pg_ctl, start]}}
  queue:
    listen: 127.0.0.1:15672
    upstream: 127.0.0.1:5672
    process: {pid_file: queue.pid, start: [queue-server]}
  provider:
    listen: 127.0.0.1:18443
    upstream: 127.0.0.1:8443
    protocol: https
  stand-in:
    listen: 127.0.0.1:18081
    upstream: 127.0.0.1:8081
    protocol: http
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	parse := func(t *testing.T, faults string) *scenarios.Scenario {
		t.Helper()
		sc, err := scenarios.Parse(filepath.Join(dir, "drill.yaml"), []byte(`name: drill
system: shop.yaml
matrix: {dependency: db, failure: process}
stock: 10
load: {stages: [{duration: 4s, target: 5}], patience: 2s}
faults:
`+faults))
		if err != nil {
			t.Fatal(err)
		}
		return sc
	}
	ok := parse(t, `  - {target: db, at: 1s, for: 1s, process: kill}
  - {target: db, at: 2s, for: 1s, process: restart}
  - {target: queue, at: 1s, for: 1s, process: pause}
  - {target: stand-in, at: 1s, for: 1s, toxic: {type: http_error, attributes: {status: 503}}}
  - {target: cache, at: 1s, for: 1s, toxic: {type: http_latency, attributes: {latency: 100ms}}}
  - {target: provider, at: 1s, for: 1s, toxic: {type: lost_reply}}
`)
	if err := gameday.CheckScenario(ok, sys); err != nil {
		t.Errorf("faults the handles can do: %v", err)
	}
	bad := parse(t, `  - {target: db, at: 1s, for: 1s, process: kill}
  - {target: db, at: 3s, for: 1s, process: pause}
  - {target: cache, at: 1s, for: 1s, process: kill}
  - {target: provider, at: 1s, for: 1s, toxic: {type: http_error, attributes: {status: 503}}}
`)
	err = gameday.CheckScenario(bad, sys)
	for _, want := range []string{
		filepath.Join(dir, "drill.yaml") + ":8: faults[1].process: db's process handle in shop.yaml gives no way to pause it (a command handle needs pause and resume)",
		filepath.Join(dir, "drill.yaml") + ":9: faults[2].target: a process fault on cache needs a process to act on",
		filepath.Join(dir, "drill.yaml") + ":10: faults[3].toxic.type: http_error reads HTTP requests, and provider speaks https (dependencies.provider.protocol in shop.yaml): it would act on none",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v\nwant %q", err, want)
		}
	}
	if err != nil && strings.Contains(err.Error(), "faults[0]") {
		t.Errorf("the kill the handle can do was refused: %v", err)
	}
}
