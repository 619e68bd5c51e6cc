package scenarios_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/load"
	"github.com/gameday-dev/gameday/scenarios"
)

// The catalogue's replay at 150 %: every second of the drill's arrivals
// (the load generator's schedule of the stages the recording became) is
// the recording's arrivals in that second, read here from the CSV on its
// own, times 1.5, within 2 % or one arrival (a fraction of an arrival
// carries to the next second).
func TestReplayFollowsTheRecording(t *testing.T) {
	sc, err := scenarios.Lookup("replay-last-year")
	if err != nil {
		t.Fatal(err)
	}
	const scale = 1.5
	r := sc.Load.Replay
	scaled := sc.Scaled(scale, 1)
	var stages []load.Stage
	for _, st := range scaled.Load.Stages {
		stages = append(stages, load.Stage{Duration: st.Duration.D(), Target: st.Target, Hold: st.Hold})
	}
	got := map[int]float64{}
	for _, at := range load.Schedule(stages) {
		got[int(at/time.Second)]++
	}

	// The recording, per minute, from r.From for r.For, each minute
	// lasting a minute/speedup of the drill.
	f, err := os.Open(filepath.Join("catalog", r.File))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	perMinute := map[int]float64{}
	sc2 := bufio.NewScanner(f)
	for sc2.Scan() {
		cols := strings.Split(sc2.Text(), ",")
		if len(cols) != 2 || strings.HasPrefix(cols[0], "#") || cols[0] == "minute" {
			continue
		}
		m, _ := strconv.Atoi(cols[0])
		n, _ := strconv.ParseFloat(cols[1], 64)
		perMinute[m] = n
	}
	step := time.Minute.Seconds() / r.Speedup
	from, to := int(r.From.D()/time.Minute), int((r.From.D()+r.For.D())/time.Minute)
	want := map[int]float64{}
	total := 0.0
	for m := from; m < to; m++ {
		start := float64(m-from) * step
		for t0 := start; t0 < start+step-1e-9; {
			sec := math.Floor(t0 + 1e-9)
			t1 := math.Min(sec+1, start+step)
			want[int(sec)] += perMinute[m] * scale * (t1 - t0) / step
			t0 = t1
		}
		total += perMinute[m] * scale
	}
	if len(want) < 100 {
		t.Fatalf("the replay spans %d seconds; the catalogue's is two minutes", len(want))
	}
	for sec, w := range want {
		if g := got[sec]; math.Abs(g-w) > math.Max(1, 0.02*w) {
			t.Errorf("second %d: %.0f arrivals, want %.1f (the recording × %g)", sec, g, w, scale)
		}
	}
	for sec := range got {
		if _, ok := want[sec]; !ok {
			t.Errorf("second %d: %.0f arrivals past the recording's part", sec, got[sec])
		}
	}
	if n := float64(len(load.Schedule(stages))); math.Abs(n-total) > 1 {
		t.Errorf("%.0f arrivals in all, want %.1f", n, total)
	}
	if note := r.Note(); !strings.Contains(note, "recordings/last-year.csv") || !strings.Contains(note, "150 times as fast") {
		t.Errorf("note %q", note)
	}
}

// writeReplay writes a scenario whose load replays recording (named name)
// with the replay fields given, in a directory of its own, and parses it.
func writeReplay(t *testing.T, name, recording, fields string) (*scenarios.Scenario, error) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(recording), 0o644); err != nil {
		t.Fatal(err)
	}
	src := "name: r\nmatrix: {dependency: none, failure: replay}\nstock: 100\nload:\n  replay:\n    file: " + name + "\n" + fields + "  patience: 5s\n"
	path := filepath.Join(dir, "r.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return scenarios.LoadFile(path)
}

func arrivalsOf(sc *scenarios.Scenario) float64 {
	n, prev := 0.0, 0.0
	for _, st := range sc.Load.Stages {
		n += st.Arrivals(prev)
		prev = st.Target
	}
	return n
}

// An access log's purchases, by the rule's method and path prefix, in
// buckets of its seconds from its first request; other requests and
// unreadable lines counted, not replayed.
func TestReplayAccessLog(t *testing.T) {
	log := strings.Join([]string{
		`203.0.113.9 - - [28/Nov/2025:20:00:01 +0000] "POST /checkout HTTP/1.1" 201 512 "-" "Mozilla/5.0"`,
		`203.0.113.7 - - [28/Nov/2025:20:00:00 +0000] "GET /products/gala HTTP/1.1" 200 9000 "-" "Mozilla/5.0"`,
		`203.0.113.8 - - [28/Nov/2025:20:00:01 +0000] "POST /checkout?ref=mail HTTP/1.1" 201 512`,
		`203.0.113.8 - - [28/Nov/2025:20:00:03 +0000] "POST /checkout/confirm HTTP/1.1" 201 512`,
		`not a log line`,
		`203.0.113.8 - - [28/Nov/2025:20:00:02 +0000] "GET /checkout HTTP/1.1" 200 512`,
	}, "\n") + "\n"
	sc, err := writeReplay(t, "access.log", log, "    format: access_log\n    journeys: {purchase: \"POST /checkout\"}\n    max_unreadable: 0.2\n")
	if err != nil {
		t.Fatal(err)
	}
	r := sc.Load.Replay.Read
	if r.Lines != 6 || r.Unreadable != 1 || r.FirstUnreadable != 5 || r.Other != 2 || r.Arrivals["purchase"] != 3 {
		t.Errorf("read %+v, want 6 lines, 1 unreadable at line 5, 2 other, 3 purchases", r)
	}
	// Seconds 0 (none: the first request was a page), 1 (two), 2 (none), 3 (one).
	var perSecond []float64
	for _, st := range sc.Load.Stages {
		for range int(st.Duration.D() / time.Second) {
			perSecond = append(perSecond, st.Target)
		}
	}
	if want := []float64{0, 2, 0, 1}; !slices.Equal(perSecond, want) {
		t.Errorf("arrivals a second %v, want %v", perSecond, want)
	}

	// Read through gzip, the same.
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(log))
	zw.Close()
	sc, err = writeReplay(t, "access.log.gz", gz.String(), "    format: access_log\n    journeys: {purchase: \"POST /checkout\"}\n    max_unreadable: 0.2\n")
	if err != nil || sc.Load.Replay.Read.Arrivals["purchase"] != 3 {
		t.Fatalf("gzip: %v", err)
	}
}

// A CSV per second, its part chosen and compressed: from 2 s for 3 s of
// the recording, twice as fast, is the recording's arrivals of seconds 2-4
// over 1.5 s.
func TestReplayCSVPart(t *testing.T) {
	sc, err := writeReplay(t, "r.csv", "second,purchase\n0,10\n1,10\n2,4\n3,6\n# a gap: second 4 had none\n5,9\n", "    format: csv\n    from: 2s\n    for: 3s\n    speedup: 2\n")
	if err != nil {
		t.Fatal(err)
	}
	if n := arrivalsOf(sc); n != 10 {
		t.Errorf("%v arrivals, want 10 (4 + 6 + 0)", n)
	}
	if d := sc.TotalDuration(); d != 1500*time.Millisecond {
		t.Errorf("lasts %s, want 1.5s", d)
	}
	for _, st := range sc.Load.Stages {
		if !st.Hold {
			t.Errorf("stage %+v is not held", st)
		}
	}
}

// Bad input is refused with the file, the line and the field, whether it
// is the scenario's or the recording's.
func TestReplayRefusesBadInput(t *testing.T) {
	for _, c := range []struct {
		name, file, recording, fields, want string
	}{
		{"no format", "r.csv", "second,purchase\n0,1\n", "", "r.yaml:5: load.replay.format: required: csv or access_log"},
		{"journeys for a csv", "r.csv", "second,purchase\n0,1\n", "    format: csv\n    journeys: {purchase: \"POST /x\"}\n", "load.replay.journeys: a CSV names its journeys in its header"},
		{"no rule", "a.log", "", "    format: access_log\n", "load.replay.journeys: required for an access log"},
		{"a journey that is no name", "a.log", "", "    format: access_log\n    journeys: {Browse!: \"GET /\"}\n", "load.replay.journeys.Browse!: \"Browse!\": want purchase or a journey of the system file"},
		{"bad rule", "a.log", "", "    format: access_log\n    journeys: {purchase: \"/checkout\"}\n", `want "METHOD /path"`},
		{"bad speedup", "r.csv", "second,purchase\n0,1\n", "    format: csv\n    speedup: -2\n", "load.replay.speedup: -2: want a finite number above 0"},
		{"bad header", "r.csv", "hour,purchase\n0,1\n", "    format: csv\n", "r.csv:1: the header's first column is \"hour\": want second or minute"},
		{"a journey that is no name in the header", "r.csv", "second,purchase,Browse Page\n0,1,2\n", "    format: csv\n", `r.csv:1: the header's journey "Browse Page": want purchase or a journey`},
		{"falling buckets", "r.csv", "second,purchase\n0,1\n3,1\n2,1\n", "    format: csv\n", "r.csv:4: second 2 comes after 3"},
		{"unreadable rows", "r.csv", "second,purchase\n0,1\n1,x\n2,1\n", "    format: csv\n", "r.csv:3: 1 of 3 lines could not be read (33.33%; load.replay.max_unreadable allows 0.00%): the first is line 3"},
		{"no file", "r.csv", "second,purchase\n0,1\n", "    format: csv\n", "load.replay.file: open"},
		{"not a regular file", "r.csv", "", "    format: csv\n", "load.replay.file: /dev/null is not a regular file"},
		{"past the end", "r.csv", "second,purchase\n0,1\n", "    format: csv\n    from: 10s\n", "load.replay.from: 10s is past the recording's end (1s of it)"},
		{"too long", "r.csv", "minute,purchase\n0,1\n2000,1\n", "    format: csv\n", "r.yaml:5: load.replay.speedup: the replay lasts 33h21m0s, more than 24h0m0s"},
		{"speedup 0", "r.csv", "second,purchase\n0,1\n", "    format: csv\n    speedup: 0\n", "r.yaml:8: load.replay.speedup: 0: want a number above 0"},
		{"buckets too short", "r.csv", "second,purchase\n0,1\n", "    format: csv\n    speedup: 200\n", "load.replay.speedup: 200 compresses a bucket of 1s to less than 10ms"},
		{"a second far past a month", "r.csv", "second,purchase\n0,1\n1732820400000,1\n", "    format: csv\n", "r.csv:3: second 1732820400000 is more than a month into the recording"},
		{"a journey twice", "r.csv", "second,purchase,purchase\n0,1,1\n", "    format: csv\n", "r.csv:1: journey \"purchase\" is named twice in the header"},
		{"no request matched", "a.log", `203.0.113.9 - - [28/Nov/2025:20:00:01 +0000] "GET / HTTP/1.1" 200 5` + "\n", "    format: access_log\n    journeys: {purchase: \"POST /checkout\"}\n", "load.replay.journeys: no request of"},
		{"a log over months", "a.log", `203.0.113.9 - - [28/Nov/2025:20:00:01 +0000] "POST /checkout HTTP/1.1" 201 5` + "\n" + `203.0.113.9 - - [28/Feb/2026:20:00:01 +0000] "POST /checkout HTTP/1.1" 201 5` + "\n", "    format: access_log\n    journeys: {purchase: \"POST /checkout\"}\n", "a.log:2: the log's requests span more than a month"},
		{"nothing in the part", "r.csv", "second,purchase\n0,0\n", "    format: csv\n", "load.replay.file: the part replayed holds no arrival"},
		{"a stream of the replay's name", "r.csv", "second,purchase,browse\n0,1,2\n", "    format: csv\n  streams:\n    - {name: replay-browse, mix: {browse: 100}, stages: [{duration: 1s, target: 1}]}\n", "load.streams: stream replay-browse is the replay's journey browse"},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := c.file
			switch c.name {
			case "no file":
				file = "elsewhere.csv"
			case "not a regular file":
				file = os.DevNull // a device, as a FIFO that would block the parse for ever is
			}
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, c.file), []byte(c.recording), 0o644)
			src := "name: r\nmatrix: {dependency: none, failure: replay}\nstock: 100\nload:\n  replay:\n    file: " + file + "\n" + c.fields
			path := filepath.Join(dir, "r.yaml")
			os.WriteFile(path, []byte(src), 0o644)
			_, err := scenarios.LoadFile(path)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want %q", err, c.want)
			}
		})
	}
	// Stages and a replay: one or the other.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "r.csv"), []byte("second,purchase\n0,1\n"), 0o644)
	src := "name: r\nmatrix: {dependency: none, failure: replay}\nstock: 100\nload:\n  stages: [{duration: 1s, target: 1}]\n  replay: {file: r.csv, format: csv}\n"
	os.WriteFile(filepath.Join(dir, "r.yaml"), []byte(src), 0o644)
	if _, err := scenarios.LoadFile(filepath.Join(dir, "r.yaml")); err == nil || !strings.Contains(err.Error(), "r.yaml:6: load.replay: the load takes its arrivals from stages or from a replay, not both") {
		t.Errorf("both: %v", err)
	}
}

// Judging a run again reads the promises, not the load: a run directory
// keeps no recording, and its scenario is read all the same, the replay
// standing as the run's own load, so that what depends on the load's
// length (a fault's after window) is checked as it was. Where the
// recording is there, it is read.
func TestReplayJudgedWithoutItsRecording(t *testing.T) {
	src := "name: r\nmatrix: {dependency: payment, failure: down}\nstock: 100\nload:\n  replay: {file: r.csv, format: csv}\n" +
		"faults:\n  - {name: out, target: payment, at: 2s, for: 3s, down: true}\nexpect:\n  - ratio: {window: after, outcomes: [confirmed], at_least: 0.9}\n"
	dir := t.TempDir()
	if _, err := scenarios.Parse(filepath.Join(dir, "s.yaml"), []byte(src)); err == nil {
		t.Fatal("Parse read a scenario whose recording is gone")
	}
	sc, err := scenarios.ParseForJudging(filepath.Join(dir, "s.yaml"), []byte(src), 10*time.Second, map[string]float64{"purchase": 200})
	if err != nil || len(sc.Expect) != 1 || len(sc.Load.Stages) != 1 || sc.TotalDuration() != 10*time.Second || arrivalsOf(sc) != 200 {
		t.Fatalf("judging: %v, %+v", err, sc)
	}
	os.WriteFile(filepath.Join(dir, "r.csv"), []byte("second,purchase\n0,3\n11,4\n"), 0o644)
	sc, err = scenarios.ParseForJudging(filepath.Join(dir, "s.yaml"), []byte(src), 10*time.Second, map[string]float64{"purchase": 200})
	if err != nil || sc.TotalDuration() != 12*time.Second || arrivalsOf(sc) != 7 {
		t.Fatalf("judging with the recording there: %v, %+v", err, sc)
	}
	// A replay of journeys, its recording gone: each journey stands as a
	// stream of its visits, so that a promise on it is read.
	os.Remove(filepath.Join(dir, "r.csv"))
	src += "  - latency: {journeys: [browse], window: all, percentile: 95, below: 100ms}\n"
	sc, err = scenarios.ParseForJudging(filepath.Join(dir, "s.yaml"), []byte(src), 10*time.Second, map[string]float64{"purchase": 50, "browse": 300})
	if err != nil || len(sc.Load.Streams) != 1 || sc.Load.Streams[0].Name != "replay-browse" || sc.Load.Streams[0].Stages[0].Target != 30 || arrivalsOf(sc) != 50 {
		t.Fatalf("judging a replay of journeys without its recording: %v, %+v", err, sc)
	}
}

// A recording of several journeys replays each: the purchases as the
// load's stages, every other journey as a stream of its own (replay-NAME,
// all of it that journey), every bucket on the recording's clock; a
// recording with no purchase leaves the load's stages a pause as long.
func TestReplayOfJourneys(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "r.csv"), []byte("second,browse,purchase,cart\n0,70,5,25\n1,140,10,50\n3,0,0,30\n"), 0o644)
	src := "name: r\nmatrix: {dependency: none, failure: replay}\nstock: 100\nload:\n  patience: 7s\n  max_retries: 2\n  replay: {file: r.csv, format: csv, speedup: 2}\n"
	os.WriteFile(filepath.Join(dir, "r.yaml"), []byte(src), 0o644)
	sc, err := scenarios.LoadFile(filepath.Join(dir, "r.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if got := arrivalsOf(sc); got != 15 {
		t.Errorf("%g purchases, want 15", got)
	}
	streams := map[string]scenarios.Stream{}
	for _, st := range sc.Load.Streams {
		streams[st.Name] = st
	}
	for _, c := range []struct {
		name, journey string
		want          float64
	}{{"replay-browse", "browse", 210}, {"replay-cart", "cart", 105}} {
		st, ok := streams[c.name]
		if !ok || st.Mix[c.journey] != 100 || len(st.Mix) != 1 || st.Patience.D() != 7*time.Second || *st.MaxRetries != 2 {
			t.Fatalf("stream %s: %+v", c.name, st)
		}
		if n := arrivalsOf(&scenarios.Scenario{Load: scenarios.Load{Stages: st.Stages}}); n != c.want || st.Duration() != 2*time.Second {
			t.Errorf("%s: %g arrivals over %s, want %g over 2s (4 s of recording, twice as fast)", c.name, n, st.Duration(), c.want)
		}
	}
	if sc.TotalDuration() != 2*time.Second || sc.Load.Replay.Read.Arrivals["cart"] != 105 {
		t.Errorf("load of %s, read %v", sc.TotalDuration(), sc.Load.Replay.Read.Arrivals)
	}
	// An access log: each request for the journey whose rule matches it
	// most closely.
	log := ""
	for i, req := range []string{"GET /products/sku-1", "GET /cart?session=a", "GET /cart/items", "POST /checkout", "GET /", "POST /cart"} {
		log += fmt.Sprintf("203.0.113.%d - - [28/Nov/2025:20:00:0%d +0000] \"%s HTTP/1.1\" 200 5\n", i, i/2, req)
	}
	os.WriteFile(filepath.Join(dir, "a.log"), []byte(log), 0o644)
	os.WriteFile(filepath.Join(dir, "a.yaml"), []byte("name: a\nmatrix: {dependency: none, failure: replay}\nstock: 100\nload:\n  replay:\n    file: a.log\n    format: access_log\n    journeys: {browse: \"GET /\", cart: \"GET /cart\", purchase: \"POST /checkout\"}\n"), 0o644)
	sc, err = scenarios.LoadFile(filepath.Join(dir, "a.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if got := sc.Load.Replay.Read.Arrivals; got["browse"] != 2 || got["cart"] != 2 || got["purchase"] != 1 || sc.Load.Replay.Read.Other != 1 {
		t.Errorf("the log's journeys %v, %d other; want browse 2, cart 2, purchase 1, one other (POST /cart)", got, sc.Load.Replay.Read.Other)
	}

	// No purchase recorded: the load's stages pause for the recording's
	// length, and the journeys are replayed.
	os.WriteFile(filepath.Join(dir, "r.csv"), []byte("second,browse\n0,10\n4,10\n"), 0o644)
	sc, err = scenarios.LoadFile(filepath.Join(dir, "r.yaml"))
	if err != nil || arrivalsOf(sc) != 0 || sc.TotalDuration() != 2500*time.Millisecond || len(sc.Load.Streams) != 1 {
		t.Fatalf("a recording of browsing alone: %v, %+v", err, sc)
	}
}

// A speedup that does not divide a bucket into whole milliseconds does not
// drift: bucket k starts at k × bucket/speedup rounded to the millisecond,
// so a thousand seconds three times as fast last 333.333 s, every arrival
// kept.
func TestReplayDoesNotDrift(t *testing.T) {
	var rec strings.Builder
	rec.WriteString("second,purchase\n")
	for i := range 1000 {
		rec.WriteString(strconv.Itoa(i) + "," + strconv.Itoa(3+i%2) + "\n")
	}
	sc, err := writeReplay(t, "r.csv", rec.String(), "    format: csv\n    speedup: 3\n")
	if err != nil {
		t.Fatal(err)
	}
	if d := sc.TotalDuration(); d != 333333*time.Millisecond {
		t.Errorf("lasts %s, want 5m33.333s", d)
	}
	if n := arrivalsOf(sc); math.Abs(n-3500) > 1e-6 {
		t.Errorf("%v arrivals, want 3500", n)
	}
}
