package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/gameday-dev/gameday/gameday/flash"
	"github.com/gameday-dev/gameday/gameday/predict"
	"github.com/gameday-dev/gameday/gameday/runrecord"
	"github.com/gameday-dev/gameday/scenarios"
)

// defaultPredictRuns is how many simulated runs "gameday predict" makes
// unless told: enough for a stable 5th and 95th percentile.
const defaultPredictRuns = predict.DefaultPredictRuns

// maxPredictRuns bounds -runs.
const maxPredictRuns = 100_000

// predictCmd is "gameday predict SCENARIO [-runs N] [-seed S] [-json]".
func predictCmd(args []string, stdout, stderr io.Writer) error {
	return predictWith(args, stdout, stderr, modelFromScenario)
}

// predictWith is predictCmd with the scenario's model built by model.
func predictWith(args []string, stdout, stderr io.Writer, model func(*scenarios.Scenario) (predict.Model, error)) error {
	fs := newFlagSet("predict", stderr)
	describe(fs, "gameday predict SCENARIO [flags]", `
Simulates the flash sale of SCENARIO (a catalogue name or a file) -runs
times (seeds -seed, -seed+1, ...) without running anything, and prints each
figure's mean and 5th and 95th percentiles: what a drill of the scenario
should show (docs/flash-sale.md). Flags may come before or after the
scenario.`)
	runs := fs.Int("runs", defaultPredictRuns, "simulated runs")
	seed := fs.Int64("seed", 0, "seed of the first run (0: the scenario's)")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	markdown := fs.Bool("markdown", false, "print a markdown table (for docs)")
	var observed []string
	fs.Func("observed", "RUN_DIR of a drill of the same scenario: its figures beside the prediction, * marking those outside p5-p95 (repeatable; the drills' scales are applied to the scenario)", func(v string) error {
		observed = append(observed, v)
		return nil
	})
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) == 0:
		return usagef("predict: which scenario? give a catalogue name (see gameday list) or a file")
	case len(pos) > 1:
		return usagef("predict: one scenario at a time, got %d", len(pos))
	case *runs < 1 || *runs > maxPredictRuns:
		return usagef("predict: -runs %d: want 1 to %d", *runs, maxPredictRuns)
	}
	sc, err := scenarios.Lookup(pos[0])
	if err != nil {
		return usageError{err}
	}
	var recs []*runrecord.Record
	for _, dir := range observed {
		rec, err := runrecord.Read(filepath.Join(dir, "run.json"))
		switch {
		case err != nil:
			return usageError{fmt.Errorf("predict: -observed %s: %w", dir, err)}
		case rec.Scenario != sc.Name:
			return usagef("predict: -observed %s: a drill of %s, not %s", dir, rec.Scenario, sc.Name)
		case rec.Flash == nil:
			return usagef("predict: -observed %s: run.json has no flash-sale figures (a drill from before they were recorded?)", dir)
		case len(recs) > 0 && (rec.TimeScale != recs[0].TimeScale || rec.RateScale != recs[0].RateScale):
			return usagef("predict: -observed %s: scales %g/%g differ from the first drill's %g/%g", dir, rec.RateScale, rec.TimeScale, recs[0].RateScale, recs[0].TimeScale)
		}
		recs = append(recs, rec)
	}
	if len(recs) > 0 && (recs[0].RateScale != 1 || recs[0].TimeScale != 1) {
		sc = sc.Scaled(recs[0].RateScale, recs[0].TimeScale)
	}
	m, err := model(sc)
	if err != nil {
		return usageError{fmt.Errorf("predict %s: %w", sc.Name, err)}
	}
	if *seed == 0 {
		*seed = sc.Seed
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	p, err := predict.PredictContext(ctx, m, *runs, *seed)
	if ctx.Err() != nil {
		return exitError{code: exitInconclusive, msg: "predict " + sc.Name + ": interrupted"}
	}
	if err != nil {
		return usageError{fmt.Errorf("predict %s: %w", sc.Name, err)}
	}
	switch {
	case *asJSON:
		return writePredictionJSON(stdout, sc.Name, p)
	case *markdown:
		return writePredictionMarkdown(stdout, p, recs)
	}
	return writePrediction(stdout, sc.Name, p, recs)
}

// observedCell is one drill's figure, starred when outside p5-p95.
func observedCell(unit string, v float64, r predict.Range) string {
	s := strings.TrimSpace(fmt.Sprintf(figureFormat(unit), v))
	if v < r.P5 || v > r.P95 {
		s += "*"
	}
	return s
}

// writePredictionMarkdown prints the prediction, and the drills' figures
// beside it, as a markdown table.
func writePredictionMarkdown(w io.Writer, p predict.Prediction, recs []*runrecord.Record) error {
	head := "| figure | predicted mean | p5 – p95 |"
	rule := "|---|---:|---:|"
	for _, r := range recs {
		head += fmt.Sprintf(" seed %d |", r.Seed)
		rule += "---:|"
	}
	fmt.Fprintln(w, head)
	fmt.Fprintln(w, rule)
	for _, n := range flash.Names() {
		r := p.Figures[n.Key]
		f := figureFormat(n.Unit)
		row := fmt.Sprintf("| %s (%s) | %s | %s – %s |", n.Key, n.Unit,
			strings.TrimSpace(fmt.Sprintf(f, r.Mean)), strings.TrimSpace(fmt.Sprintf(f, r.P5)), strings.TrimSpace(fmt.Sprintf(f, r.P95)))
		for _, rec := range recs {
			row += " " + observedCell(n.Unit, rec.Flash.Observed.Value(n.Key), r) + " |"
		}
		if _, err := fmt.Fprintln(w, row); err != nil {
			return fmt.Errorf("predict: %w", err)
		}
	}
	return nil
}

// modelFromScenario is the scenario as the predictor simulates it.
func modelFromScenario(sc *scenarios.Scenario) (predict.Model, error) {
	return predict.FromScenario(sc)
}

// predictionJSON is "gameday predict -json": the figures in table order.
type predictionJSON struct {
	Scenario string          `json:"scenario"`
	Runs     int             `json:"runs"`
	Seed     int64           `json:"seed"`
	Figures  []predictedJSON `json:"figures"`
}

type predictedJSON struct {
	Key     string  `json:"key"`
	Unit    string  `json:"unit"`
	Meaning string  `json:"meaning"`
	Mean    float64 `json:"mean"`
	P5      float64 `json:"p5"`
	P95     float64 `json:"p95"`
}

func writePredictionJSON(w io.Writer, scenario string, p predict.Prediction) error {
	out := predictionJSON{Scenario: scenario, Runs: p.Runs, Seed: p.Seed}
	for _, n := range flash.Names() {
		r := p.Figures[n.Key]
		out.Figures = append(out.Figures, predictedJSON{Key: n.Key, Unit: n.Unit, Meaning: n.Meaning, Mean: r.Mean, P5: r.P5, P95: r.P95})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("predict: %w", err)
	}
	return nil
}

// writePrediction prints the table: figure, unit, mean, p5, p95, and each
// drill's figure.
func writePrediction(w io.Writer, scenario string, p predict.Prediction, recs []*runrecord.Record) error {
	fmt.Fprintf(w, "%s: %d simulated runs, seeds %d to %d\n\n", scenario, p.Runs, p.Seed, p.Seed+int64(p.Runs)-1)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	head := "FIGURE\tUNIT\t        MEAN\t          P5\t         P95\t"
	for _, r := range recs {
		head += fmt.Sprintf("%12s\t", fmt.Sprintf("SEED %d", r.Seed))
	}
	fmt.Fprintln(tw, head)
	for _, n := range flash.Names() {
		r := p.Figures[n.Key]
		f := figureFormat(n.Unit)
		line := fmt.Sprintf("%s\t%s\t"+f+"\t"+f+"\t"+f+"\t", n.Key, n.Unit, r.Mean, r.P5, r.P95)
		for _, rec := range recs {
			line += fmt.Sprintf("%12s\t", observedCell(n.Unit, rec.Flash.Observed.Value(n.Key), r))
		}
		fmt.Fprintln(tw, line)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("predict: %w", err)
	}
	return nil
}

// figureFormat right-aligns the numbers in 12 columns: shares and
// correlations to three places, the rest (counts, milliseconds) to one.
func figureFormat(unit string) string {
	switch unit {
	case "share", "rho":
		return "%12.3f"
	}
	return "%12.1f"
}
