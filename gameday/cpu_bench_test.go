package gameday_test

import (
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday"
	"github.com/gameday-dev/gameday/gameday/env"
	"github.com/gameday-dev/gameday/internal/testenv"
	"github.com/gameday-dev/gameday/scenarios"
)

// BenchmarkDrillCPU runs a whole drill — the runner (load generator,
// embedded Toxiproxy, breaker probe), the checkout, the payment stand-in
// and two redis-servers on this machine — and reports what it cost in CPU:
// cores (all processes' user + system time over the drill's wall time)
// and each process's user and system seconds and its read and write
// system calls per shopper, printed by name.
//
//	go test -run '^$' -bench DrillCPU -benchtime 1x ./gameday/
//
// GAMEDAY_BENCH_SCENARIO names the drill (default drop-reserve, 8,250
// shoppers in 35 s).
func BenchmarkDrillCPU(b *testing.B) {
	sc := lookup(b, benchScenario())
	for range b.N {
		m := drillCPU(b, sc, nil)
		b.ReportMetric(m.cores, "cores")
		b.ReportMetric(m.user.Seconds(), "user-s")
		b.ReportMetric(m.sys.Seconds(), "sys-s")
		b.ReportMetric(float64(m.shoppers), "shoppers")
		b.ReportMetric(m.wall.Seconds(), "wall-s")
		b.Logf("%s", m.report)
	}
}

// BenchmarkProxyCost runs the same drill in turns with the
// checkout's dependencies behind the embedded Toxiproxy, as every drill
// has them, and straight to them (env.LocalOptions.Unproxied), and
// reports the median cores of each: what the proxies cost, and what the
// rest of the stack costs without them. -benchtime Nx is N turns of two
// drills.
//
//	go test -run '^$' -bench ProxyCost -benchtime 3x -v ./gameday/
func BenchmarkProxyCost(b *testing.B) {
	sc := lookup(b, benchScenario())
	var with, without []float64
	for i := range b.N {
		m := drillCPU(b, sc, nil)
		with = append(with, m.cores)
		b.Logf("turn %d, proxied: %s", i+1, m.report)
		m = drillCPU(b, sc, env.LocalOptions{Binary: binary, Unproxied: true})
		without = append(without, m.cores)
		b.Logf("turn %d, unproxied: %s", i+1, m.report)
	}
	b.ReportMetric(median(with), "proxied-cores")
	b.ReportMetric(median(without), "unproxied-cores")
}

// median is the middle of xs (the mean of the two middle ones for an even
// count); xs is sorted in place.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	return (xs[(len(xs)-1)/2] + xs[len(xs)/2]) / 2
}

// benchScenario is the drill GAMEDAY_BENCH_SCENARIO names (a catalogue
// name or a file), drop-reserve by default.
func benchScenario() string {
	if name := os.Getenv("GAMEDAY_BENCH_SCENARIO"); name != "" {
		return name
	}
	return "drop-reserve"
}

// drillCost is what one drill cost the machine.
type drillCost struct {
	cores     float64 // all processes' user + system time over wall time
	user, sys time.Duration
	wall      time.Duration
	shoppers  int
	report    string // process by process, for the log
}

// drillCPU runs sc once at full time scale in environment e (nil: the
// runner's default, the local stack behind the embedded Toxiproxy) and
// measures what every process spent.
func drillCPU(b *testing.B, sc *scenarios.Scenario, e env.Starter) drillCost {
	b.Helper()
	o := options(b)
	o.TimeScale = 1
	o.PredictRuns = -1
	o.Environment = e
	self0, kids0 := testenv.Usage()
	r0, w0 := testenv.SyscallsIO()
	// Once a second: the watch reads every process's /proc/PID/stat,
	// and its cost is the runner's (at 100 ms, 0.03 of a core: a
	// quarter of what a drill without shoppers costs in all). The
	// cores figure is getrusage's; the watch only names the children.
	watch := testenv.WatchChildren(time.Second)
	began := time.Now()
	rec, _, err := gameday.Run(context.Background(), sc, o)
	wall := time.Since(began)
	procs := watch.Stop()
	self1, kids1 := testenv.Usage()
	r1, w1 := testenv.SyscallsIO()
	if err != nil || rec.Verdict != gameday.VerdictPass {
		b.Fatalf("%s: %v %s %s", sc.Name, err, rec.Verdict, rec.Reason)
	}
	runner := procCPUDelta(self0, self1)
	children := procCPUDelta(kids0, kids1)
	m := drillCost{
		user: runner.User + children.User, sys: runner.Sys + children.Sys,
		wall: wall, shoppers: rec.Load.Scheduled,
	}
	m.cores = (m.user + m.sys).Seconds() / wall.Seconds()
	slices.SortFunc(procs, func(a, c testenv.ProcCPU) int { return int((c.User + c.Sys) - (a.User + a.Sys)) })
	var lines []string
	n := float64(rec.Load.Scheduled)
	lines = append(lines, fmt.Sprintf("%-44s user %6.2fs  sys %6.2fs  reads %5.1f writes %5.1f a shopper", "runner (generator, Toxiproxy, probe)", runner.User.Seconds(), runner.Sys.Seconds(), float64(r1-r0)/n, float64(w1-w0)/n))
	for _, p := range procs {
		lines = append(lines, fmt.Sprintf("%-44s user %6.2fs  sys %6.2fs  reads %5.1f writes %5.1f a shopper", shortName(p.Name), p.User.Seconds(), p.Sys.Seconds(), float64(p.Reads)/n, float64(p.Writes)/n))
	}
	lines = append(lines, fmt.Sprintf("%-44s user %6.2fs  sys %6.2fs  (getrusage of the ended children)", "children, in all", children.User.Seconds(), children.Sys.Seconds()))
	m.report = fmt.Sprintf("%s: %d shoppers over %.1fs of drill, %.2f cores in all\n%s", sc.Name, rec.Load.Scheduled, wall.Seconds(), m.cores, strings.Join(lines, "\n"))
	return m
}

// procCPUDelta is b's CPU time minus a's.
func procCPUDelta(a, b testenv.ProcCPU) testenv.ProcCPU {
	return testenv.ProcCPU{Name: b.Name, User: b.User - a.User, Sys: b.Sys - a.Sys}
}

// shortName names a child by its command: "gameday serve checkout",
// "redis-server 127.0.0.1:PORT".
func shortName(cmd string) string {
	f := strings.Fields(cmd)
	if len(f) == 0 {
		return "?"
	}
	base := f[0][strings.LastIndexByte(f[0], '/')+1:]
	switch {
	case base == "gameday" && len(f) >= 3:
		return "gameday " + f[1] + " " + f[2]
	case strings.HasPrefix(base, "redis-server"):
		for i, a := range f {
			if a == "--port" && i+1 < len(f) {
				return "redis-server :" + f[i+1]
			}
		}
	}
	if len(cmd) > 44 {
		return cmd[:44]
	}
	return cmd
}

// BenchmarkStackThroughput drives testdata/throughput.yaml (payments of
// 1-5 ms, no limits, 10 s at the rate) through the whole local stack at
// 1,000, 2,000 and 3,000 arrivals a second, and reports whether it
// passed, the confirmed p95, the share refused or in error (and in its
// log the refusals by the reason the checkout gave), the drops and
// the CPU the machine spent (all processes' cores, and milliseconds of CPU
// a shopper). Each rate runs twice, side by side: proxied (the checkout's
// dependencies behind the embedded Toxiproxy, as in every drill) and
// unproxied (straight to them, env.LocalOptions.Unproxied), which says how
// much of the knee is the proxies'.
//
//	go test -run '^$' -bench StackThroughput -benchtime 1x ./gameday/
func BenchmarkStackThroughput(b *testing.B) {
	sc, err := scenarios.LoadFile("testdata/throughput.yaml")
	if err != nil {
		b.Fatal(err)
	}
	for _, scale := range []float64{1, 2, 3} {
		b.Run(fmt.Sprintf("rate=%.0f", 1000*scale), func(b *testing.B) {
			b.Run("proxied", func(b *testing.B) { stackThroughput(b, sc, scale, nil) })
			b.Run("unproxied", func(b *testing.B) {
				stackThroughput(b, sc, scale, env.LocalOptions{Binary: binary, Unproxied: true})
			})
		})
	}
}

func stackThroughput(b *testing.B, sc *scenarios.Scenario, scale float64, e env.Starter) {
	for range b.N {
		o := options(b)
		o.TimeScale, o.RateScale, o.PredictRuns = 1, scale, -1
		o.Environment = e
		self0, kids0 := testenv.Usage()
		began := time.Now()
		rec, dir, err := gameday.Run(context.Background(), sc, o)
		wall := time.Since(began)
		self1, kids1 := testenv.Usage()
		if err != nil {
			b.Fatal(err)
		}
		runner, children := procCPUDelta(self0, self1), procCPUDelta(kids0, kids1)
		why, err := refusalReasons(filepath.Join(dir, gameday.AttemptsFile))
		if err != nil {
			b.Fatal(err)
		}
		pass := 0.0
		if rec.Verdict == gameday.VerdictPass {
			pass = 1
		}
		refused := 0
		for o, n := range rec.Outcomes {
			if o != "confirmed" && o != "declined" {
				refused += n
			}
		}
		var p95 float64
		if rec.Flash != nil {
			p95 = rec.Flash.Observed.SuccessP95MS
		}
		b.ReportMetric(pass, "pass")
		b.ReportMetric(p95, "confirmed-p95-ms")
		b.ReportMetric(100*float64(refused)/float64(max(rec.Load.Scheduled, 1)), "refused-%")
		b.ReportMetric(float64(rec.Load.Dropped), "dropped")
		b.ReportMetric(float64(rec.Load.Scheduled), "shoppers")
		cpu := runner.User + runner.Sys + children.User + children.Sys
		b.ReportMetric(cpu.Seconds()/wall.Seconds(), "cores")
		// Over the shoppers rather than the wall: a run whose refusals
		// left reservations held waits for their leases before it reads
		// the books, and that idle wait would dilute the cores.
		b.ReportMetric(float64(cpu.Microseconds())/1000/float64(max(rec.Load.Scheduled, 1)), "cpu-ms/shopper")
		b.Logf("rate %.0f/s: %s (%s); outcomes %v; refused attempts by reason %v; load %+v", 1000*scale, rec.Verdict, rec.Reason, rec.Outcomes, why, rec.Load)
	}
}

// refusalReasons counts the attempts of a run's attempts.csv that were
// answered neither confirmed nor declined, by the reason the checkout gave
// (bulkhead_full, breaker_open, a timeout's dependency) or else the error
// or the status, so that a rate that fails says which limit it met. (The
// throughput scenario makes one attempt a shopper and never sells out.)
func refusalReasons(path string) (map[string]int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s: %w", path, err)
	case len(rows) == 0:
		return nil, fmt.Errorf("%s: empty, want a header row", path)
	}
	col := func(name string) int { return slices.Index(rows[0], name) }
	status, reason, errc := col("status"), col("reason"), col("error")
	if status < 0 || reason < 0 || errc < 0 {
		return nil, fmt.Errorf("%s: want status, reason and error columns, got %v", path, rows[0])
	}
	why := map[string]int{}
	for _, r := range rows[1:] {
		if r[status] == "confirmed" || r[status] == "declined" {
			continue
		}
		w := r[reason]
		if w == "" {
			w = r[errc]
		}
		if w == "" {
			w = r[status]
		}
		why[w]++
	}
	return why, nil
}
