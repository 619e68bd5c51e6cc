package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gameday-dev/gameday/gameday"
	"github.com/gameday-dev/gameday/gameday/explore"
	"github.com/gameday-dev/gameday/gameday/runrecord"
	gdsystem "github.com/gameday-dev/gameday/gameday/system"
	"github.com/gameday-dev/gameday/gameday/toxi"
	"github.com/gameday-dev/gameday/scenarios"
)

// Bad input to gameday explore is refused before anything is prepared:
// exit 2, naming the flag, the file and the line; -resume needs the
// journal of an earlier search.
func TestExploreRefusesBadInput(t *testing.T) {
	system := filepath.Join("..", "..", "examples", "ticketshop", "gameday.yaml")
	out := t.TempDir()
	for _, c := range []struct {
		name    string
		journal string // written to -out/trials.jsonl first, when not ""
		args    []string
		want    string
	}{
		{"confirm", "", []string{"-confirm", "0"}, "-confirm 0: want at least 1"},
		{"needed", "", []string{"-replays", "2", "-needed", "3"}, "-needed 3 of -replays 2"},
		{"budget", "", []string{"-budget", "soon"}, `-budget "soon"`},
		{"family", "", []string{"-families", "latency,earthquake"}, `no fault family "earthquake"`},
		{"no journal", "", []string{"-resume"}, "-resume: open " + filepath.Join(out, "trials.jsonl")},
		{"bad journal", "{\"verdict\":\"PASS\"}\n", []string{"-resume"}, filepath.Join(out, "trials.jsonl") + ":1: a trial needs its schedule and verdict"},
		// An earlier search's journal is not replaced unasked.
		{"earlier search", "{}\n{}\n", nil, filepath.Join(out, "trials.jsonl") + " holds the 2 trials of an earlier search: go on with it (-resume), or start afresh and replace it (-fresh)"},
		{"resume and fresh", "", []string{"-resume", "-fresh"}, "-resume and -fresh"},
		// ticketshop's file declares no process handle.
		{"process family without a handle", "", []string{"-families", "latency,kill"}, "-families: no dependency of ticketshop has a process handle that can kill"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.journal != "" {
				if err := os.WriteFile(filepath.Join(out, "trials.jsonl"), []byte(c.journal), 0o644); err != nil {
					t.Fatal(err)
				}
				defer os.Remove(filepath.Join(out, "trials.jsonl"))
			}
			var stdout, stderr bytes.Buffer
			err := exploreCmd(append([]string{"-system", system, "-out", out, "-quiet"}, c.args...), &stdout, &stderr)
			if code := matrixExit(err); code != exitUsage || err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("exit %d (%v), want 2 naming %q\n%s", code, err, c.want, stderr.String())
			}
			// Nothing was written: no log, no report.
			if _, err := os.Stat(filepath.Join(out, "log.jsonl")); err == nil {
				t.Errorf("a refused search wrote its log")
			}
			if got, _ := os.ReadFile(filepath.Join(out, "trials.jsonl")); c.journal != "" && string(got) != c.journal {
				t.Errorf("a refused search changed the journal there: %q, was %q", got, c.journal)
			}
		})
	}
}

// A system whose Toxiproxy is a stock one (no capabilities route) or a
// gameday one that serves only some request-aware toxics: a search of
// every family leaves out those it cannot serve, and says which; one that
// names them with -families is refused before anything is prepared.
func TestExploreOnAToxiproxyThatCannotServeEveryFamily(t *testing.T) {
	stock := httptest.NewServer(http.NotFoundHandler())
	defer stock.Close()
	older := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != toxi.CapabilitiesPath {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, `{"toxics":["latency","down","lost_reply"],"request_aware":["lost_reply"],"relayed":[]}`)
	}))
	defer older.Close()
	system := func(t *testing.T, toxiproxy string) string {
		src, err := os.ReadFile(filepath.Join("..", "..", "examples", "ticketshop", "gameday.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(t.TempDir(), "gameday.yaml")
		if toxiproxy != "" {
			src = append([]byte("toxiproxy: "+toxiproxy+"\n"), src...)
		}
		if err := os.WriteFile(file, src, 0o644); err != nil {
			t.Fatal(err)
		}
		return file
	}
	var tcp, aware []string
	for _, f := range explore.Families {
		if f.RequestAware {
			aware = append(aware, f.Name)
		} else {
			tcp = append(tcp, f.Name)
		}
	}
	for _, c := range []struct {
		name, toxiproxy string
		kept, dropped   []string
	}{
		{"gameday's own", "", explore.FamilyNames(), nil},
		{"stock", stock.URL, tcp, aware},
		{"older gameday", older.URL, append(slices.Clone(tcp), "lost_reply"), slices.DeleteFunc(slices.Clone(aware), func(f string) bool { return f == "lost_reply" })},
	} {
		t.Run(c.name, func(t *testing.T) {
			sys, err := gdsystem.LoadFile(system(t, c.toxiproxy), nil)
			if err != nil {
				t.Fatal(err)
			}
			kept, dropped, err := servedFamilies(context.Background(), sys, explore.FamilyNames(), false)
			if err != nil || !slices.Equal(slices.Sorted(slices.Values(kept)), slices.Sorted(slices.Values(c.kept))) || !slices.Equal(dropped, c.dropped) {
				t.Errorf("kept %v, dropped %v, %v; want kept %v, dropped %v", kept, dropped, err, c.kept, c.dropped)
			}
		})
	}

	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	err := exploreCmd([]string{"-system", system(t, stock.URL), "-out", out, "-quiet", "-families", "latency,lost_reply"}, &stdout, &stderr)
	if code := matrixExit(err); code != exitUsage || err == nil || !strings.Contains(err.Error(), "-families: the Toxiproxy at "+stock.URL+" does not serve lost_reply") {
		t.Fatalf("exit %d (%v), want 2 naming lost_reply\n%s", code, err, stderr.String())
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("a refused search wrote %d files", len(entries))
	}
}

// Process families are drawn where a dependency's handle can carry them
// out (kill and restart need a way to kill and to start, pause a way to
// stop and to go on), the HTTP families where the dependency speaks plain
// HTTP or does not say. A system without handles leaves the process
// families out of a search of every family (and so draws what it drew
// before they were known); a family named with -families that can act on
// no dependency is refused.
func TestExploreFamiliesFollowTheSystemFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "gameday.yaml")
	src := `name: handled
base_url: http://127.0.0.1:1
sku: s
purchase: {steps: [{url: /buy, answers: [{status: 200, outcome: confirmed}]}]}
dependencies:
  db:
    listen: 127.0.0.1:15432
    upstream: 127.0.0.1:5432
    protocol: postgres
    process: {command: {pause: [pkill, -STOP, postgres], resume: [pkill, -CONT, postgres]}}
  redis:
    listen: 127.0.0.1:16379
    upstream: 127.0.0.1:6379
    protocol: redis
    process: {pid_file: redis.pid, start: [redis-server, redis.conf]}
  gateway:
    listen: 127.0.0.1:18081
    upstream: 127.0.0.1:8081
    protocol: http
  provider:
    listen: 127.0.0.1:18443
    upstream: 127.0.0.1:8443
    protocol: https
`
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	sys, err := gdsystem.LoadFile(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	targets := []string{"db", "gateway", "provider", "redis"}
	kept, dropped, on, err := drawable(sys, targets, explore.FamilyNames(), false)
	want := map[string][]string{"kill": {"redis"}, "restart": {"redis"}, "pause": {"db", "redis"},
		"http_error": {"gateway"}, "http_latency": {"gateway"}, "http_lost_response": {"gateway"},
		"cache_flush": {"redis"}, "cache_expire": {"redis"}, "cache_limit": {"redis"}}
	if err != nil || len(dropped) != 0 || !slices.Equal(kept, explore.FamilyNames()) || fmt.Sprint(on) != fmt.Sprint(want) {
		t.Errorf("kept %v, dropped %v, on %v, %v; want every family, on %v", kept, dropped, on, err, want)
	}

	// ticketshop declares no process handle, and its books are read from
	// its Redis: a memory limit may act there, a flush never.
	plain, err := gdsystem.LoadFile(filepath.Join("..", "..", "examples", "ticketshop", "gameday.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	kept, dropped, on, err = drawable(plain, []string{"gateway", "redis"}, explore.FamilyNames(), false)
	if err != nil || !slices.Equal(dropped, []string{"kill", "pause", "restart", "cache_flush", "cache_expire"}) || slices.Contains(kept, "kill") ||
		len(kept) != len(explore.Families)-5 || len(on["kill"]) != 0 || fmt.Sprint(on["cache_limit"]) != "[redis]" {
		t.Errorf("without handles: kept %v, dropped %v, on %v, %v", kept, dropped, on, err)
	}
	if _, _, _, err := drawable(plain, []string{"gateway", "redis"}, []string{"latency", "pause"}, true); err == nil || !strings.Contains(err.Error(), "can pause") {
		t.Errorf("-families latency,pause without a handle: %v", err)
	}
	if _, _, _, err := drawable(plain, []string{"gateway", "redis"}, []string{"cache_flush"}, true); err == nil || !strings.Contains(err.Error(), "keys are never cleared where the books are read") {
		t.Errorf("-families cache_flush where the books are: %v", err)
	}
	// Nothing speaks plain HTTP: the HTTP families are refused by name.
	if _, _, _, err := drawable(sys, []string{"db", "provider"}, []string{"latency", "http_error"}, true); err == nil || !strings.Contains(err.Error(), "speaks plain HTTP, which http_error read") {
		t.Errorf("-families latency,http_error on no HTTP dependency: %v", err)
	}
}

// A trial's faults that did nothing are named to explore, whose coverage
// does not count them: a request-aware fault that acted on no request,
// and one never put in place. A toxic in place, and a request-aware one
// that acted, did something.
func TestExploreIdleFaults(t *testing.T) {
	sc := &scenarios.Scenario{Faults: []scenarios.Fault{
		{Name: "f0-db-latency"}, {Name: "f1-db-lost-reply"}, {Name: "f2-gateway-http-error"}, {Name: "f3-db-down"},
	}}
	rec := &runrecord.Record{Faults: []runrecord.FaultRecord{
		{Name: "f0-db-latency", Kind: "latency"},
		{Name: "f1-db-lost-reply", Kind: "lost_reply", Hits: &runrecord.RequestHits{Matched: 40, Hit: 3}},
		{Name: "f2-gateway-http-error", Kind: "http_error", Hits: &runrecord.RequestHits{NotHTTP: 12}},
	}}
	if got, want := idleFaults(sc, rec), []string{"f2-gateway-http-error", "f3-db-down"}; !slices.Equal(got, want) {
		t.Errorf("idle %v, want %v", got, want)
	}
}

// A process alone (a queue worker, proxy: none) carries the process
// families and nothing else; a scenario that puts a network fault on it
// is refused, naming its line.
func TestExploreProcessAlone(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "gameday.yaml")
	src := `name: queued
base_url: http://127.0.0.1:1
sku: s
purchase: {steps: [{url: /buy, answers: [{status: 200, outcome: confirmed}, {status: 202, outcome: retry_later}]}]}
dependencies:
  db:
    listen: 127.0.0.1:15432
    upstream: 127.0.0.1:5432
  worker:
    proxy: none
    process: {pid_file: worker.pid, start: [sh, -c, "sleep 60 & echo $! > worker.pid"]}
`
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	sys, err := gdsystem.LoadFile(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	kept, _, on, err := drawable(sys, []string{"db", "worker"}, explore.FamilyNames(), false)
	if err != nil || fmt.Sprint(on["kill"]) != "[worker]" || fmt.Sprint(on["latency"]) != "[db]" || fmt.Sprint(on["lost_reply"]) != "[db]" || !slices.Contains(kept, "latency") {
		t.Errorf("kept %v, on %v, %v", kept, on, err)
	}
	if got := defaultPatience(sys); got != sys.Books.SettleWithin.D() {
		t.Errorf("a polled purchase's default patience: %s, want books.settle_within %s", got, sys.Books.SettleWithin.D())
	}
	sc, err := scenarios.Parse(filepath.Join(dir, "bad.yaml"), []byte("name: bad\nsystem: gameday.yaml\nmatrix: {dependency: worker, failure: latency}\nstock: 1\nload: {stages: [{duration: 1s, target: 1}]}\nfaults:\n  - {name: slow, target: worker, toxic: {type: latency, attributes: {latency: 100ms}}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := gameday.CheckScenario(sc, sys); err == nil || !strings.Contains(err.Error(), "bad.yaml:7: faults[0].target: worker is a process alone") {
		t.Errorf("a latency on a process alone: %v", err)
	}
}
