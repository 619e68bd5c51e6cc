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

// A cache fault is checked against the system, with nothing contacted: on
// a dependency that does not speak Redis, and a flush or an expiry of a
// dependency the books are read from (said, or found from a Redis store
// the books read at its upstream) without clears_books, it is refused at
// its line; a memory limit there, a flush that says it means it, and a
// flush of a plain cache pass. A counter promise names a counter of the
// system.
func TestCacheFaultsAgainstTheSystem(t *testing.T) {
	sys, err := system.Parse("shop.yaml", []byte(`
name: shop
base_url: http://127.0.0.1:1
sku: s
purchase: {steps: [{url: /buy, answers: [{status: 200, outcome: confirmed}]}]}
dependencies:
  cache: {listen: 127.0.0.1:16379, upstream: 127.0.0.1:6379, protocol: redis}
  ledger: {listen: 127.0.0.1:16380, upstream: 127.0.0.1:6380, protocol: redis}
  stock: {listen: 127.0.0.1:16381, upstream: 127.0.0.1:6381, protocol: redis, books: true}
  db: {listen: 127.0.0.1:15432, upstream: 127.0.0.1:5432, protocol: postgres}
stores:
  ledger: {redis: "redis://127.0.0.1:6380/0"}
  origin: {http: "http://127.0.0.1:8092"}
counters:
  origin_requests: {store: origin, http: {path: /stats}, json: requests}
books:
  stock:
    available: {store: ledger, redis: [GET, "stock:{{.SKU}}"]}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	check := func(faults, expect string) error {
		t.Helper()
		sc, err := scenarios.Parse(filepath.Join(dir, "drill.yaml"), []byte(`name: drill
system: shop.yaml
matrix: {dependency: cache, failure: cache}
stock: 10
load: {stages: [{duration: 4s, target: 5}], patience: 2s}
faults:
`+faults+expect))
		if err != nil {
			t.Fatal(err)
		}
		return gameday.CheckScenario(sc, sys)
	}
	for _, tc := range []struct {
		name, faults, expect, want string
	}{
		{"flush of a cache", "  - {target: cache, at: 1s, cache: {flush: \"page:*\"}}\n", "", ""},
		{"not redis", "  - {target: db, at: 1s, cache: {flush: \"*\"}}\n", "",
			":7: faults[0].cache: a cache fault acts through Redis's own commands, and db speaks postgres"},
		{"the books, said", "  - {target: stock, at: 1s, cache: {expire: \"*\"}}\n", "",
			":7: faults[0].cache: stock holds the books (shop.yaml): a cache-expire of its keys clears what the verdict is judged on"},
		{"the books, found", "  - {target: ledger, at: 1s, cache: {flush: \"*\"}}\n", "",
			":7: faults[0].cache: ledger holds the books"},
		{"the books, meant", "  - {target: ledger, at: 1s, cache: {flush: \"*\", clears_books: true}}\n", "", ""},
		{"a memory limit on the books", "  - {target: stock, at: 1s, cache: {maxmemory: 95%, policy: noeviction}}\n", "", ""},
		{"a memory limit that may evict the books", "  - {target: stock, at: 1s, cache: {maxmemory: 95%}}\n", "",
			":7: faults[0].cache.policy: stock holds the books (shop.yaml): a memory limit there evicts what the verdict is judged on unless its policy is noeviction"},
		{"a counter", "  - {target: cache, at: 1s, for: 2s, cache: {flush: \"*\"}}\n", "expect:\n  - metric: {counter: origin_requests, below: 10}\n", ""},
		{"no such counter", "  - {target: cache, at: 1s, for: 2s, cache: {flush: \"*\"}}\n", "expect:\n  - metric: {counter: origin_rps, below: 10}\n",
			`:9: expect[0].metric.counter: shop.yaml names no counter "origin_rps" (counters: origin_requests)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := check(tc.faults, tc.expect)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "drill.yaml")+tc.want)):
				t.Errorf("got %v\nwant %s%s", err, filepath.Join(dir, "drill.yaml"), tc.want)
			}
		})
	}
}
