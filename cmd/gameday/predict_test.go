package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/checkout/admission"
	"github.com/gameday-dev/gameday/gameday/flash"
	"github.com/gameday-dev/gameday/gameday/load"
	"github.com/gameday-dev/gameday/gameday/predict"
	"github.com/gameday-dev/gameday/scenarios"
)

// smallModel stands for a scenario's model until modelFromScenario exists:
// a short lottery sale, quick to simulate.
func smallModel(*scenarios.Scenario) (predict.Model, error) {
	return predict.Model{
		Stages:   []load.Stage{{Duration: time.Second, Target: 20}, {Duration: 2 * time.Second, Target: 20}},
		Patience: 3 * time.Second, MaxRetries: 5, RetryJitter: 0.5, Stock: 1000,
		Admission:  admission.Config{Mode: admission.ModeLottery, InProgress: 2},
		PaymentMin: 100 * time.Millisecond, PaymentMax: 300 * time.Millisecond, DeclineRate: 0.05, Slots: 2,
	}, nil
}

func TestPredictTable(t *testing.T) {
	var out, errOut bytes.Buffer
	// Flags after the scenario, as the usage line writes them.
	if err := predictWith([]string{"baseline", "-runs", "7", "-seed", "3"}, &out, &errOut, smallModel); err != nil {
		t.Fatalf("predict: %v (stderr %s)", err, errOut.String())
	}
	text := out.String()
	if !strings.HasPrefix(text, "baseline: 7 simulated runs, seeds 3 to 9\n") {
		t.Errorf("first line of %q", text)
	}
	lines := strings.Split(strings.TrimSpace(text), "\n")
	names := flash.Names()
	// Title, blank line, header, one line per figure.
	if len(lines) != 3+len(names) || !strings.HasPrefix(lines[2], "FIGURE") {
		t.Fatalf("table:\n%s", text)
	}
	p, err := predict.Predict(must(smallModel(nil)), 7, 3)
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range names {
		fields := strings.Fields(lines[3+i])
		r := p.Figures[n.Key]
		want := []string{n.Key, n.Unit}
		for _, v := range []float64{r.Mean, r.P5, r.P95} {
			want = append(want, strings.TrimSpace(fmt.Sprintf(figureFormat(n.Unit), v)))
		}
		if strings.Join(fields, " ") != strings.Join(want, " ") {
			t.Errorf("row %q, want %q", lines[3+i], strings.Join(want, " "))
		}
	}
}

func must(m predict.Model, err error) predict.Model {
	if err != nil {
		panic(err)
	}
	return m
}

func TestPredictJSON(t *testing.T) {
	var out bytes.Buffer
	if err := predictWith([]string{"-json", "-runs", "4", "baseline"}, &out, &bytes.Buffer{}, smallModel); err != nil {
		t.Fatal(err)
	}
	var got predictionJSON
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("decode %s: %v", out.String(), err)
	}
	sc, err := scenarios.Lookup("baseline")
	if err != nil {
		t.Fatal(err)
	}
	// -seed 0 means the scenario's seed.
	if got.Scenario != "baseline" || got.Runs != 4 || got.Seed != sc.Seed {
		t.Errorf("scenario %q runs %d seed %d, want baseline, 4, %d", got.Scenario, got.Runs, got.Seed, sc.Seed)
	}
	names := flash.Names()
	if len(got.Figures) != len(names) {
		t.Fatalf("%d figures, want %d", len(got.Figures), len(names))
	}
	p, _ := predict.Predict(must(smallModel(nil)), 4, sc.Seed)
	for i, n := range names {
		f := got.Figures[i]
		r := p.Figures[n.Key]
		if f.Key != n.Key || f.Unit != n.Unit || f.Meaning != n.Meaning || f.Mean != r.Mean || f.P5 != r.P5 || f.P95 != r.P95 {
			t.Errorf("figure %d: %+v, want %s %+v", i, f, n.Key, r)
		}
	}
}

func TestPredictBadInput(t *testing.T) {
	failing := func(*scenarios.Scenario) (predict.Model, error) { return predict.Model{}, errors.New("no model") }
	for _, c := range []struct {
		args  []string
		model func(*scenarios.Scenario) (predict.Model, error)
		want  string // in the error
	}{
		{nil, smallModel, "which scenario"},
		{[]string{"baseline", "payment-down"}, smallModel, "one scenario at a time"},
		{[]string{"baseline", "-runs", "0"}, smallModel, "-runs 0"},
		{[]string{"baseline", "-runs", "many"}, smallModel, "-runs"},
		{[]string{"no-such-scenario"}, smallModel, "no-such-scenario"},
		{[]string{"baseline"}, failing, "no model"},
		// An invalid model is the scenario's problem, reported as such.
		{[]string{"baseline"}, func(sc *scenarios.Scenario) (predict.Model, error) {
			m, _ := smallModel(sc)
			m.Stock = 0
			return m, nil
		}, "Stock"},
	} {
		err := predictWith(c.args, &bytes.Buffer{}, &bytes.Buffer{}, c.model)
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("predict %q: %v, want a usage error mentioning %q", c.args, err, c.want)
		}
	}
	if err := predictWith([]string{"-h"}, &bytes.Buffer{}, &bytes.Buffer{}, smallModel); !errors.Is(err, errHelp) {
		t.Errorf("predict -h: %v, want help", err)
	}
}

// Ctrl-C during the prediction of a huge drill (3,000 arrivals a second,
// whose prediction would take most of an hour) ends the run with exit 3
// within a second, before anything is started; gameday predict alike.
func TestInterruptDuringPrediction(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t)
	for _, args := range [][]string{
		{"run", "-runs-dir", t.TempDir(), "-journal", filepath.Join(t.TempDir(), "j.json"), "-rate-scale", "47", "-predict-budget", "1h", "peak-fair"},
		{"predict", "-runs", "100000", "peak-fair"},
	} {
		cmd := exec.Command(bin, args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		var out bytes.Buffer // read only once Wait returned
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(1500 * time.Millisecond) // well into the prediction
		sent := time.Now()
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 3 {
				t.Errorf("%s: after SIGINT: %v, want exit 3\n%s", args[0], err, out.String())
			}
			// A second is the promise; the bound is wider so a busy
			// machine does not fail it.
			if took := time.Since(sent); took > 5*time.Second {
				t.Errorf("%s: exited %s after SIGINT", args[0], took)
			}
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
			t.Fatalf("%s: still running 30s after SIGINT\n%s", args[0], out.String())
		}
	}
}
