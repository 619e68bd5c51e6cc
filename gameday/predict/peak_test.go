package predict

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/checkout/admission"
	"github.com/gameday-dev/gameday/gameday/flash"
	"github.com/gameday-dev/gameday/gameday/load"
	"github.com/gameday-dev/gameday/scenarios"
)

// peakModel is the peak scenario of issue 6: arrivals ramp from 0 to 64/s
// over 10 s, hold 30 s and ramp down to 0 over 10 s (2,560 shoppers); 15 s
// of patience, and retries enough to use it; 8 payment slots of 100-400 ms
// with 5% declines. Twice what the slots can serve, for longer than the
// patience: the fair room's line grows until its head is shoppers about to
// leave.
func peakModel(mode admission.Mode) Model {
	return Model{
		Stages: []load.Stage{
			{Duration: 10 * time.Second, Target: 64},
			{Duration: 30 * time.Second, Target: 64},
			{Duration: 10 * time.Second, Target: 0},
		},
		Patience: 15 * time.Second, MaxRetries: 30, RetryJitter: 0.5,
		Stock:      100_000,
		Admission:  admission.Config{Mode: mode, InProgress: 8},
		PaymentMin: 100 * time.Millisecond, PaymentMax: 400 * time.Millisecond, DeclineRate: 0.05, Slots: 8,
		Overhead: 5 * time.Millisecond,
	}
}

// runSampling simulates m with seed and samples the checkouts in progress
// every Tick from..to (the room's view, as its controller sees it).
func runSampling(t *testing.T, m Model, seed int64, from, to time.Duration) (flash.Figures, []int) {
	t.Helper()
	s, err := newSim(m)
	if err != nil {
		t.Fatal(err)
	}
	room, err := admission.New(s.roomCfg, func() time.Time { return epoch.Add(s.now) })
	if err != nil {
		t.Fatal(err)
	}
	s.reset(room, seed)
	var samples []int
	next := from
	for s.step() {
		// Everything up to the sample time has happened once an event
		// after it is next.
		for next <= to && s.now > next {
			samples = append(samples, room.Stats().InProgress)
			next += s.tick
		}
	}
	return s.figures(), samples
}

// TestPeakFair pins what the fair room's controller promises on the peak
// scenario: the checkouts in progress stay near N on average while the
// line lasts, so the fair room sells nearly what the lottery sells (which
// keeps exactly N in progress), in an order much closer to arrival order.
//
// The fraction is argued, not measured:
//   - Start-up: K starts at N when the line forms and ln K grows by at
//     most 1 per RetryAfter. By the controller's rule the shortfall of in
//     progress under N it costs, over any stretch, is N × RetryAfter ×
//     ln(K_end/K_start) checkout-seconds, and K_end is at most N × (1 +
//     GoneAfter/S), S the time a checkout takes (at least Overhead +
//     PaymentMin). Each checkout-second short is 1/mean(S) checkouts not
//     made.
//   - Spread: a called shopper comes back when its own random wait ends,
//     so admissions come as a random stream, not one the moment a place
//     frees; with N in progress on average, the number in progress is at
//     best Poisson(N) (the M/G/∞ queue such a stream makes), and the
//     slots sit idle E[(N − X)+]/N of the time, where the lottery keeps
//     them all busy. The controller's feedback (it calls fewer when many
//     are in) only narrows that spread.
//
// So fair ≥ lottery × (1 − E[(N − X)+]/N) − the start-up's checkouts ×
// (1 − DeclineRate). For this scenario that is about 80%; the simulation
// gives about 94%. The room before this controller sold 12%.
func TestPeakFair(t *testing.T) {
	const seeds = 3
	fairM, lotteryM := peakModel(admission.ModeFair), peakModel(admission.ModeLottery)
	cfg, err := admission.New(fairM.admission(), nil)
	if err != nil {
		t.Fatal(err)
	}
	room := cfg.Config()
	n := float64(room.InProgress)
	minS := fairM.Overhead + fairM.PaymentMin
	meanS := fairM.Overhead + (fairM.PaymentMin+fairM.PaymentMax)/2
	lnCeiling := math.Log(1 + float64(room.GoneAfter)/float64(minS))
	startup := n * room.RetryAfter.Seconds() * lnCeiling / meanS.Seconds() * (1 - fairM.DeclineRate)
	idle := 0.0 // E[(N − X)+]/N for X ~ Poisson(N)
	p := math.Exp(-n)
	for k := 0.0; k < n; k++ {
		idle += (n - k) * p / n
		p *= n / (k + 1)
	}

	// The line lasts from soon after the ramp starts until after the
	// ramp-down; the window is the hold, after a patience's worth of
	// start-up.
	from, to := 15*time.Second, 50*time.Second
	for seed := int64(1); seed <= seeds; seed++ {
		fair, samples := runSampling(t, fairM, seed, from, to)
		_, lottery := simulate(t, lotteryM, seed)

		sum := 0
		for _, x := range samples {
			sum += x
		}
		mean := float64(sum) / float64(len(samples))
		// The rule's identity over the window, K between N and its
		// ceiling (TestFairKeepsInProgressNearN in package admission).
		bound := n * room.RetryAfter.Seconds() * lnCeiling / (to - from).Seconds()
		if math.Abs(mean-n) > bound {
			t.Errorf("seed %d: fair: mean in progress %.2f over the hold, want N = %v ± %.2f", seed, mean, n, bound)
		}

		// The argument is about the slots kept busy: every charge made
		// counts, the shopper's confirmation seen or not. The fair room
		// ignores the deadline, and serves its line at the end of its
		// patience: many of its charges end after the shopper left
		// (charged_after_leaving), which the lottery's hardly do.
		sold := func(f flash.Figures) int { return f.Confirmed + f.ChargedAfterLeaving }
		least := float64(sold(lottery))*(1-idle) - startup
		t.Logf("seed %d: fair %d charged (%d confirmed; mean in progress %.2f, at most %d), lottery %d (%d); argued at least %.0f",
			seed, sold(fair), fair.Confirmed, mean, fair.MaxInProgress, sold(lottery), lottery.Confirmed, least)
		if float64(sold(fair)) < least {
			t.Errorf("seed %d: fair charged %d, lottery %d: want at least %.0f (idle slots %.1f%%, start-up %.0f)", seed, sold(fair), sold(lottery), least, 100*idle, startup)
		}
		if fair.FairnessRankCorrelation <= lottery.FairnessRankCorrelation {
			t.Errorf("seed %d: rank correlation fair %.4f, lottery %.4f: want fair's higher", seed, fair.FairnessRankCorrelation, lottery.FairnessRankCorrelation)
		}
	}
}

// A prediction stops soon after its context is done: a model of 3,000
// arrivals a second for a minute (peakModel scaled up) would take many
// minutes for 400 runs; cancelled after 200ms it gives up, with the
// context's error. An already-cancelled one stops at once.
func TestPredictionIsCancellable(t *testing.T) {
	m := peakModel(admission.ModeFair)
	for i := range m.Stages {
		m.Stages[i].Target *= 47 // 3,008 arrivals a second at the peak
	}
	m.Stages[1].Duration = time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := PredictContext(ctx, m, 400, 1)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("PredictContext = %v, want the deadline's error", err)
	}
	// Generous: the claim is "stops", not how fast (it looks every 4,096
	// events, about a millisecond).
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("stopped after %s", took)
	}
	done, stop := context.WithCancel(context.Background())
	stop()
	if _, err := PredictContext(done, m, 400, 1); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled before it began: %v", err)
	}
}

// TestPeakPacedMeetsItsTargets pins the paced room's promises on the
// catalogue's peak overload, over 100 simulated runs of each, against the
// deadline queue (the payment line): at least 95% of its confirmations; a
// successful request no slower than a charge (p95 under 400 ms: nothing
// queues behind the provider); a median purchase sooner; nobody charged
// after leaving; at most N in progress; first come, first served; and a
// shopper turned away told within a second (p95, in 95 runs of 100) of its
// first attempt, where the queue tells it at the end of its patience.
func TestPeakPacedMeetsItsTargets(t *testing.T) {
	const runs = 100
	predict := func(name string) map[string]Range {
		sc, err := scenarios.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		m, err := FromScenario(sc)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Predict(m, runs, 1)
		if err != nil {
			t.Fatal(err)
		}
		return p.Figures
	}
	p, q := predict("peak-paced"), predict("peak-deadline")
	for _, k := range []string{"confirmed", "success_p95_ms", "purchase_median_ms", "turned_away_p95_ms", "charged_after_leaving", "max_in_progress", "fairness_rank_correlation"} {
		t.Logf("%-26s paced %9.1f (%9.1f – %9.1f)   deadline queue %9.1f", k, p[k].Mean, p[k].Min, p[k].Max, q[k].Mean)
	}
	if p["confirmed"].Mean < 0.95*q["confirmed"].Mean {
		t.Errorf("paced confirmed %.0f, under 95%% of the deadline queue's %.0f", p["confirmed"].Mean, q["confirmed"].Mean)
	}
	if p["success_p95_ms"].Max >= 400 {
		t.Errorf("success p95 up to %.1f ms, want under 400 in every run", p["success_p95_ms"].Max)
	}
	if p["purchase_median_ms"].Mean >= q["purchase_median_ms"].Mean {
		t.Errorf("purchase median %.0f ms, the deadline queue's %.0f: want sooner", p["purchase_median_ms"].Mean, q["purchase_median_ms"].Mean)
	}
	if p["charged_after_leaving"].Max != 0 || p["max_in_progress"].Max > 8 {
		t.Errorf("charged after leaving up to %.0f, in progress up to %.0f; want 0 and 8", p["charged_after_leaving"].Max, p["max_in_progress"].Max)
	}
	if p["fairness_rank_correlation"].Min < 0.99 {
		t.Errorf("rank correlation down to %.4f, want first come, first served", p["fairness_rank_correlation"].Min)
	}
	// Not in every run: now and then the rate the room measured drifts
	// and a few shoppers already in line are turned away after seconds
	// (of seeds 1 to 200, four runs at 1.9 to 6.9 s; three before the
	// answers' round trip was modelled). The promise is for the sale as a
	// rule, as the drills' observed figures (1 to 3 ms at full scale) bear
	// out.
	if p["turned_away_p95_ms"].P95 >= 1000 {
		t.Errorf("turned away p95 %.0f ms or more in one run in twenty, want under a second", p["turned_away_p95_ms"].P95)
	}
}

// A sale across shops is not one checkout's sale: the model refuses it,
// and a drill of it goes on without a prediction.
func TestASaleAcrossShopsIsNotPredicted(t *testing.T) {
	for _, name := range []string{"pod-hot-shop", "pod-shared-payment"} {
		sc, err := scenarios.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := FromScenario(sc); !errors.Is(err, ErrNotPredictable) || !strings.Contains(err.Error(), "across shops") {
			t.Errorf("%s: %v, want it not predictable as a sale across shops", name, err)
		}
	}
}
