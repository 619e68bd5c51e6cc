package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/gameday-dev/gameday/gameday"
	"github.com/gameday-dev/gameday/gameday/env"
	"github.com/gameday-dev/gameday/gameday/env/docker"
	"github.com/gameday-dev/gameday/gameday/faults"
	"github.com/gameday-dev/gameday/gameday/fleet"
	"github.com/gameday-dev/gameday/gameday/predict"
	"github.com/gameday-dev/gameday/gameday/system"
	"github.com/gameday-dev/gameday/scenarios"
)

// exitError carries a drill's exit code (1 or 3) up to main.
type exitError struct {
	code int
	msg  string
}

func (e exitError) Error() string { return e.msg }

// proxyFlag collects -proxy DEPENDENCY=NAME.
type proxyFlag map[string]string

func (p proxyFlag) String() string { return fmt.Sprint(map[string]string(p)) }
func (p proxyFlag) Set(v string) error {
	dep, name, ok := strings.Cut(v, "=")
	if !ok || dep == "" || name == "" {
		return fmt.Errorf("want DEPENDENCY=PROXY, got %q", v)
	}
	p[dep] = name
	return nil
}

// runFlags are the flags "run" and "drill" share.
type runFlags struct {
	o          gameday.Options
	envKind    *string
	composeEnv *string
	ext        env.ExternalOptions
	proxies    proxyFlag
	quiet      *bool
	journal    *string
	embedded   *bool
	metricURL  *string
	commit     *string
	system     *string
	shards     *int
	workers    *string
	listen     *string
}

func addRunFlags(fs *flag.FlagSet) *runFlags {
	r := &runFlags{proxies: proxyFlag{}}
	r.envKind = fs.String("env", "", "environment: local (start everything here as processes), containers (start everything as containers, testcontainers-go), compose (drill the project docker-compose.yml brought up) or external (drill a running service: a system file, -system, or -toxiproxy and -checkout-url); unset or local: as the scenario says, which is the system its system: names, else its environment: section (kind: external and its addresses), else local")
	r.system = fs.String("system", "", "the system file (gameday.yaml) describing the system under test: drill it as it runs, through its description only (docs/systems.md)")
	r.composeEnv = fs.String("compose-env", ".env", "compose: the file of variables docker-compose.yml reads (project name, published ports; GAMEDAY_ADMIN_TOKEN, best from the environment)")
	r.quiet = fs.Bool("quiet", false, "no progress lines on stderr")
	r.journal = fs.String("journal", faults.DefaultJournalPath(), "file recording, until they are removed, the faults that outlive the runner: on a Toxiproxy it did not start (external, compose, one a system file names), and the kills and pauses of a Compose project's containers")
	r.embedded = fs.Bool("embedded-redis", false, "use the embedded Redis-compatible server even when redis-server is installed")
	r.commit = fs.String("commit", os.Getenv("GAMEDAY_COMMIT"), "commit of the system under test, for the matrix (default $GAMEDAY_COMMIT)")
	fs.Float64Var(&r.o.RateScale, "rate-scale", 1, "multiply every arrival rate (1.5 rehearses 150% of the planned peak)")
	fs.Float64Var(&r.o.TimeScale, "time-scale", 1, "multiply every duration of the timeline (0.2 for a quick drill), and the stock with it (rounded up), so a shortened sale sells out at the same point; timeouts, latencies and latency bounds are not scaled")
	fs.IntVar(&r.o.PredictRuns, "predict-runs", 0, "runs of the model that predicts the flash-sale figures (0: 400; -1: no prediction)")
	fs.DurationVar(&r.o.PredictBudget, "predict-budget", gameday.DefaultPredictBudget, "how long the prediction may take; past it the drill goes on without one")
	fs.Int64Var(&r.o.Seed, "seed", 0, "seed for arrivals, shoppers and payment (0: the scenario's)")
	fs.StringVar(&r.o.RunsDir, "runs-dir", "runs", "directory that receives one directory per run")
	fs.StringVar(&r.ext.Toxiproxy, "toxiproxy", "", "external (compose: overrides the address it reads): the Toxiproxy API address")
	fs.StringVar(&r.ext.CheckoutURL, "checkout-url", "", "external (compose: overrides the address it reads): the checkout's base URL")
	fs.StringVar(&r.ext.PaymentURL, "payment-url", "", "external (compose: overrides the address it reads): the payment provider's base URL, for reconciling charges")
	fs.Var(r.proxies, "proxy", "external: DEPENDENCY=PROXY names the proxy in front of a dependency (repeatable)")
	r.shards = fs.Int("shards", 0, "send the load from this many worker processes, one shard of the sale each (docs/scale.md); 0: from this process")
	r.workers = fs.String("workers", "local", "with -shards: local (start the workers here) or remote (they are started elsewhere — a Swarm job, a Kubernetes Indexed Job — and call in at -coordinator-listen with $GAMEDAY_SHARD_TOKEN)")
	r.listen = fs.String("coordinator-listen", "", "with -shards: the address the workers call in at (default 127.0.0.1:0; remote workers need one they can reach)")
	r.metricURL = fs.String("breaker-metric-url", "", "external: read breaker states from this Prometheus endpoint (gauge gameday_breaker_state{dependency}: 0 closed, 1 half-open, 2 open) instead of the checkout's /admin/breakers")
	return r
}

// options checks the flags and builds the runner's options.
func (r *runFlags) options(name string, stderr io.Writer) (gameday.Options, error) {
	o := r.o
	if !(o.RateScale > 0) || !(o.TimeScale > 0) || o.RateScale > 1000 || o.TimeScale > 1000 {
		return o, usagef("%s: -rate-scale and -time-scale must be above 0 (and at most 1000)", name)
	}
	switch *r.envKind {
	case "", "local":
	case "containers":
		// testcontainers' process-wide settings are this program's to make.
		docker.ConfigureProcess(context.Background())
		o.Environment = docker.ContainersOptions{}
	case "compose":
		co, err := docker.ComposeDefaults(*r.composeEnv)
		if err != nil {
			return o, usagef("%s: -compose-env %s: %v", name, *r.composeEnv, err)
		}
		if r.ext.Toxiproxy != "" {
			co.Toxiproxy = r.ext.Toxiproxy
		}
		if r.ext.CheckoutURL != "" {
			co.CheckoutURL = r.ext.CheckoutURL
		}
		if r.ext.PaymentURL != "" {
			co.PaymentURL = r.ext.PaymentURL
		}
		o.Environment = co
	case "external":
		ext := r.ext
		ext.Proxies = r.proxies
		o.Environment = ext
		if *r.metricURL != "" {
			o.BreakerMetric = &scenarios.BreakerMetric{URL: *r.metricURL}
		}
	default:
		return o, usagef("%s: -env %q: want local, containers, compose or external", name, *r.envKind)
	}
	if *r.system != "" {
		switch *r.envKind {
		case "", "external":
		default:
			return o, usagef("%s: -system drills a system as it runs; -env %s starts the reference checkout instead", name, *r.envKind)
		}
		// The addresses of a system file are its own: flags that name a
		// reference checkout's would be dropped without a word.
		for _, f := range []struct{ flag, val string }{{"-toxiproxy", r.ext.Toxiproxy}, {"-checkout-url", r.ext.CheckoutURL}, {"-payment-url", r.ext.PaymentURL}} {
			if f.val != "" {
				return o, usagef("%s: -system %s and %s %s: a system file drills the system it describes, at its own addresses; %s names a reference checkout you run (-env external without -system): give one or the other", name, *r.system, f.flag, f.val, f.flag)
			}
		}
		sys, err := system.LoadFile(*r.system, nil)
		if err != nil {
			return o, usageError{err}
		}
		o.System, o.Environment = sys, nil
		o.Proxies = r.proxies
	} else if *r.envKind == "external" && (r.ext.Toxiproxy == "" || r.ext.CheckoutURL == "") {
		return o, usagef("%s: -env external needs a system file (-system FILE), or, for a reference checkout you run, -toxiproxy and -checkout-url", name)
	}
	switch {
	case *r.shards < 0:
		return o, usagef("%s: -shards %d: want 0 (no workers) or more", name, *r.shards)
	case *r.shards > 0:
		so := &gameday.ShardOptions{N: *r.shards, Listen: *r.listen}
		switch *r.workers {
		case "local":
		case "remote":
			so.Remote = true
			so.Token = os.Getenv(fleet.TokenEnv)
			if so.Token == "" || *r.listen == "" {
				return o, usagef("%s: -workers remote needs -coordinator-listen (an address the workers reach) and $%s (the secret they are given too)", name, fleet.TokenEnv)
			}
			so.Announce = func(url string) {
				fmt.Fprintf(stderr, "gameday: %s: workers call in at %s (gameday worker -coordinator %s, $%s set)\n", name, url, url, fleet.TokenEnv)
			}
		default:
			return o, usagef("%s: -workers %q: want local or remote", name, *r.workers)
		}
		o.Shards = so
	}
	o.Predict = predict.ForDrill
	if o.PredictRuns > maxPredictRuns {
		return o, usagef("%s: -predict-runs %d: at most %d", name, o.PredictRuns, maxPredictRuns)
	}
	o.EmbeddedRedis = *r.embedded
	// This program links Docker's engine: containers a system file names,
	// and those a killed runner left stopped, are acted on through it.
	o.Engine = docker.Engine{}
	o.Journal = faults.OpenJournal(*r.journal)
	o.Journal.Engine = o.Engine
	if !*r.quiet {
		o.Progress = stderr
		o.ProgressLive = isTerminal(stderr)
	}
	return o, nil
}

// drills runs scenarios one after another and prints each verdict; it
// stops early when ctx ends. after, when set, is called with each record.
func drills(ctx context.Context, scs []*scenarios.Scenario, o gameday.Options, stdout io.Writer, after func(*scenarios.Scenario, *gameday.Record) error) (int, error) {
	colour := isTerminal(stdout) && os.Getenv("NO_COLOR") == ""
	worst := exitOK
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	for _, sc := range scs {
		rec, dir, err := gameday.Run(ctx, sc, o)
		if err != nil && rec == nil {
			return exitUsage, usageError{err}
		}
		if err != nil {
			// The drill ran but its record could not be written: nothing
			// can be scripted against it, so it counts as not carried out.
			fmt.Fprintf(stdout, "  note: %v\n", err)
			worst = worse(worst, exitUsage)
		}
		if err := writeReports(dir, rec); err != nil {
			fmt.Fprintf(stdout, "  note: the reports could not be written: %v\n", err)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", paint(colour, rec.Verdict), sc.Name, dir)
		tw.Flush()
		printSummary(stdout, rec)
		worst = worse(worst, exitCode(rec.Verdict))
		if after != nil {
			if err := after(sc, rec); err != nil {
				return exitUsage, err
			}
		}
		if ctx.Err() != nil {
			break
		}
	}
	return worst, nil
}

// codeError turns the worst exit code of the drills into main's error.
func codeError(worst int) error {
	switch worst {
	case exitOK:
		return nil
	case exitUsage:
		return usageError{errors.New("a drill could not be carried out")}
	case exitFailed:
		return exitError{exitFailed, "a promise did not hold"}
	}
	return exitError{exitInconclusive, "inconclusive"}
}

func runCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("run", stderr)
	describe(fs, "gameday run [flags] SCENARIO...", `
Runs each SCENARIO as a drill, one after another: a catalogue name (see
gameday list) or a scenario file. A drill brings up its environment (-env),
sends the sale's load, injects the scenario's faults, reconciles the books
and prints its verdict; it writes run.json and its reports to a directory
of its own under -runs-dir (docs/runner.md). Flags may come before or
after the scenarios. The exit code is the worst of the drills: 2 (could not be
carried out) over 1 (a promise did not hold) over 3 (inconclusive) over 0.`)
	rf := addRunFlags(fs)
	matrixFile := fs.String("matrix", "", "update the rows of these scenarios in this resiliency matrix (see gameday matrix)")
	names, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(names) == 0 {
		return usagef("run: which scenario? give a catalogue name (see gameday list) or a file")
	}
	o, err := rf.options("run", stderr)
	if err != nil {
		return err
	}
	var scs []*scenarios.Scenario
	refs := map[*scenarios.Scenario]string{}
	for _, name := range names {
		sc, err := scenarios.Lookup(name)
		if err != nil {
			return usageError{err}
		}
		scs = append(scs, sc)
		refs[sc] = name
	}
	var after func(*scenarios.Scenario, *gameday.Record) error
	if *matrixFile != "" {
		// Refuse a bad matrix before the drills, not after them.
		if _, err := matrixLoad("run", *matrixFile, stderr); err != nil {
			return err
		}
		after = func(sc *scenarios.Scenario, rec *gameday.Record) error {
			return recordInMatrix(*matrixFile, refs[sc], rec, *rf.commit, stdout)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	worst, err := drills(ctx, scs, o, stdout, after)
	if err != nil {
		return err
	}
	return codeError(worst)
}

func exitCode(verdict gameday.Verdict) int {
	switch verdict {
	case gameday.VerdictPass:
		return exitOK
	case gameday.VerdictFail:
		return exitFailed
	case gameday.VerdictInconclusive:
		return exitInconclusive
	}
	return exitUsage
}

// worse orders exit codes: a run that could not be carried out, then a
// regression, then inconclusive, then success.
func worse(a, b int) int {
	rank := map[int]int{exitOK: 0, exitInconclusive: 1, exitFailed: 2, exitUsage: 3}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

func printSummary(w io.Writer, r *gameday.Record) {
	if r.Reason != "" {
		fmt.Fprintf(w, "  why: %s\n", r.Reason)
	}
	// Before the figures: a value sent empty can be what the why counts.
	for _, e := range r.EmptyKept {
		fmt.Fprintf(w, "  warning: %s; what the system answered them may be what the verdict counts\n", e)
	}
	fmt.Fprintf(w, "  load: %d scheduled, %d started, %d dropped, late p99 %.1fms, checkout p95 %.0fms\n",
		r.Load.Scheduled, r.Load.Started, r.Load.Dropped, r.Load.LateP99MS, r.Load.CheckoutP95MS)
	if r.CheckoutPrefix != "" {
		fmt.Fprintf(w, "  checkout ids: %s-0, %s-1, ... (filter your books and logs by %s-)\n", r.CheckoutPrefix, r.CheckoutPrefix, r.CheckoutPrefix)
	}
	fmt.Fprintf(w, "  outcomes: %s\n", formatCounts(r.Outcomes))
	if v := r.VisitsText(); v != "" {
		fmt.Fprintf(w, "  visits: %s\n", v)
	}
	for _, e := range r.Expectations {
		m := mark(e.Held)
		if e.NotChecked {
			m = "n/c " // not observed: neither held nor broken
		}
		fmt.Fprintf(w, "  %s %s — %s\n", m, e.Promise, e.Observed)
	}
	fmt.Fprintf(w, "  books: %s\n", booksLine(r))
	for _, f := range r.Faults {
		if f.Hits != nil {
			fmt.Fprintf(w, "  fault: %s (%s %s) %s\n", f.Name, f.Target, f.Kind, f.Hits.Text())
		}
	}
	for _, u := range r.Unmatched {
		req := ""
		if u.Request != "" {
			req = " (" + u.Request + ")"
		}
		fmt.Fprintf(w, "  unmatched: %d answers of step %s%s with status %d, e.g. %q\n", u.Count, u.Step, req, u.Code, clipSample(u.Sample))
	}
	for _, e := range r.TransportErrors {
		fmt.Fprintf(w, "  no answer: %d requests, %s, e.g. %q\n", e.Count, e.Kind, clipSample(e.Sample))
	}
	if h := r.Host; h != nil {
		fmt.Fprintf(w, "  host: runner stalls up to %.0fms (p99 %.0fms)", h.StallMaxMS, h.StallP99MS)
		if h.CPUPressurePct != nil {
			fmt.Fprintf(w, ", CPU pressure %.0f%%", *h.CPUPressurePct)
		}
		if h.IOPressurePct != nil {
			fmt.Fprintf(w, ", I/O pressure %.0f%%", *h.IOPressurePct)
		}
		fmt.Fprintf(w, ", load %.2f on %d CPUs", h.Load1, h.CPUs)
		if sys := h.System; sys != nil && len(sys.Watched) > 0 {
			fmt.Fprintf(w, "; the system's threads waited for a CPU up to %.0fms at a time", sys.WaitMaxMS)
			if n := len(sys.StarvedSpans); n > 0 {
				fmt.Fprintf(w, ", starved %d %s", n, map[bool]string{true: "time", false: "times"}[n == 1])
			}
		}
		fmt.Fprintln(w)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
}

func mark(ok bool) string {
	if ok {
		return "ok  "
	}
	return "FAIL"
}

func formatCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sortStrings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// parseFlags2 parses flags that may be followed by positional arguments.
func parseFlags2(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return usageError{fmt.Errorf("%s: %w", fs.Name(), err)}
	}
	return nil
}

// parseInterleaved parses flags that may come before, between or after
// the arguments (gameday run baseline -time-scale 0.2), and returns the
// arguments. Go's flag package stops at the first argument, and a flag
// after it was taken for a scenario's name.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for range len(args) + 1 { // each round takes at least one argument
		if err := parseFlags2(fs, args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			break
		}
		pos, args = append(pos, fs.Arg(0)), fs.Args()[1:]
	}
	return pos, nil
}

func sortStrings(s []string) { slices.Sort(s) }

// isTerminal reports whether w is a terminal (a character device).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// paint writes a verdict in upper case, coloured on a terminal unless
// NO_COLOR is set (https://no-color.org).
func paint(colour bool, verdict gameday.Verdict) string {
	v := strings.ToUpper(string(verdict))
	if !colour {
		return v
	}
	code := map[string]string{"PASS": "32", "FAIL": "31", "INCONCLUSIVE": "33", "ERROR": "35"}[v]
	if code == "" {
		return v
	}
	return "\033[1;" + code + "m" + v + "\033[0m"
}

// booksLine says each invariant's count, or that it was not checked.
func booksLine(r *gameday.Record) string {
	var parts []string
	for _, c := range r.InvariantChecks {
		if c.Invariant == "dropped" {
			continue
		}
		name := strings.ReplaceAll(c.Invariant, "_", " ")
		switch {
		case c.NotChecked:
			parts = append(parts, name+" not checked")
		case c.Unjudged != "":
			parts = append(parts, name+" "+c.Observed+" (not judged)")
		default:
			parts = append(parts, name+" "+c.Observed)
		}
	}
	if len(parts) == 0 {
		return "not reconciled"
	}
	return strings.Join(parts, ", ")
}

func clipSample(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 120 {
		return s[:117] + "..."
	}
	return s
}
