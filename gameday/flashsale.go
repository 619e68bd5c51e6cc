package gameday

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"time"

	"github.com/gameday-dev/gameday/checkout"
	"github.com/gameday-dev/gameday/checkout/admission"
	"github.com/gameday-dev/gameday/checkout/payment"
	"github.com/gameday-dev/gameday/gameday/flash"
	"github.com/gameday-dev/gameday/gameday/load"
	"github.com/gameday-dev/gameday/gameday/predict"
	"github.com/gameday-dev/gameday/gameday/runrecord"
	"github.com/gameday-dev/gameday/scenarios"
)

// DefaultPredictRuns is how many runs "gameday predict" and a drill's
// prediction simulate.
const DefaultPredictRuns = 400

// CheckoutOverhead is the reference checkout's own time per admitted
// request in the local environment — the session touch, the reservation and
// the claim, each a Redis round trip through Toxiproxy, and the HTTP hops —
// that the predictor adds to every purchase. On the machine of
// docs/flash-sale.md a drop-reserve drill's success_p95_ms was 3 to 6 ms
// above the provider's own p95 (385 ms for 100-400 ms uniform); 3 ms is the
// low end, so that a slow machine shows as a figure outside its range
// rather than being absorbed by the model.
const CheckoutOverhead = 3 * time.Millisecond

// ErrNotPredictable is returned by Model for a scenario the predictor
// cannot simulate.
var ErrNotPredictable = errors.New("the predictor cannot simulate this scenario")

// Model is the scenario as the predictor simulates it: its load, the
// reference checkout's settings and the payment stand-in's. Scenarios with
// faults (the model has no fault timeline), or that drill a service of your
// own (its settings are not in the scenario), give ErrNotPredictable.
func Model(sc *scenarios.Scenario) (predict.Model, error) {
	switch {
	case sc.Environment.Kind == "external":
		return predict.Model{}, fmt.Errorf("%w: it drills a service of your own, whose settings are not in the scenario", ErrNotPredictable)
	case len(sc.Faults) > 0:
		return predict.Model{}, fmt.Errorf("%w: it has faults, and the model has no fault timeline", ErrNotPredictable)
	case sc.Payment.TailProbability > 0:
		return predict.Model{}, fmt.Errorf("%w: the model has no long-tail payment latency", ErrNotPredictable)
	}
	mode, err := admission.ParseMode(sc.Checkout.Admission.Mode)
	if err != nil {
		return predict.Model{}, err
	}
	l := sc.Load
	m := predict.Model{
		Patience: l.Patience.D(), MaxRetries: l.MaxRetries, MaxShoppers: l.ShopperPool(),
		Stock: sc.Stock, Naive: sc.Checkout.Mode == string(checkout.ModeNaive),
		Admission: admission.Config{
			Mode: mode, InProgress: sc.Checkout.Admission.InProgress, TokenTTL: sc.Checkout.Admission.TokenTTL.D(),
		},
		MinPaymentTime: sc.Checkout.MinPaymentTime.D(),
		PaymentMin:     sc.Payment.MinLatency.D(), PaymentMax: sc.Payment.MaxLatency.D(),
		DeclineRate: sc.Payment.DeclineRate, Slots: sc.Payment.Slots,
		Overhead:   CheckoutOverhead,
		RetryAfter: sc.Checkout.RetryAfter.D(),
	}
	if l.RetryJitter != nil {
		m.RetryJitter = *l.RetryJitter
	}
	for _, st := range l.Stages {
		m.Stages = append(m.Stages, load.Stage{Duration: st.Duration.D(), Target: st.Target})
	}
	// The payment guard, as the checkout configures it from the scenario:
	// a bulkhead of 64 unless the scenario says otherwise (negative: none),
	// a probe timeout of half the timeout, a breaker unless disabled.
	b := sc.Checkout.Payment
	m.PaymentTimeout = b.Timeout.D()
	switch {
	case b.MaxConcurrent > 0:
		m.PaymentBulkhead = b.MaxConcurrent
	case b.MaxConcurrent == 0:
		m.PaymentBulkhead = 64
	}
	if !b.Disabled {
		probe := b.ProbeTimeout.D()
		if probe == 0 {
			probe = m.PaymentTimeout / 2
		}
		m.Breaker = predict.Breaker{Failures: int(b.Failures), OpenFor: b.OpenFor.D(), ProbeTimeout: probe}
	}
	return m, m.Validate()
}

// figures computes the run's flash-sale figures from what the shoppers saw
// and the provider's books.
func figures(r *load.Report, b books, maxInProgress int, oversold int64) flash.Figures {
	charged := map[string]bool{}
	for _, c := range b.charges {
		if c.Status == payment.StatusApproved && c.VoidedAt == nil {
			charged[checkout.CheckoutIDOf(c.Key)] = true
		}
	}
	ss := make([]flash.Shopper, len(r.Shoppers))
	for i, s := range r.Shoppers {
		fs := flash.Shopper{Index: s.Index, Scheduled: s.Scheduled, Started: s.Started, Finished: s.Finished,
			Outcome: s.Outcome, Charged: charged[s.ID], Attempts: make([]flash.Attempt, len(s.Attempts))}
		for k, a := range s.Attempts {
			fs.Attempts[k] = flash.Attempt{At: a.At, Took: a.Took, Code: a.Code, Status: a.Status, Reason: a.Reason, Err: a.Err != ""}
		}
		ss[i] = fs
	}
	return flash.Compute(ss, maxInProgress, int(oversold))
}

// prediction simulates the scenario, as run (scaled, with the run's seed).
func prediction(sc *scenarios.Scenario, seed int64, runs int) (*runrecord.Prediction, error) {
	m, err := Model(sc)
	if err != nil {
		return nil, err
	}
	p, err := predict.Predict(m, runs, seed)
	if err != nil {
		return nil, err
	}
	out := &runrecord.Prediction{Runs: p.Runs, Seed: p.Seed, OverheadMS: ms(m.Overhead), Figures: map[string]runrecord.FigureRange{}}
	for k, r := range p.Figures {
		out.Figures[k] = runrecord.FigureRange{Mean: r.Mean, P5: r.P5, P95: r.P95, Min: r.Min, Max: r.Max}
	}
	return out, nil
}

// outside lists the figures observed outside their predicted [p5, p95].
func outside(f flash.Figures, p *runrecord.Prediction) []string {
	var out []string
	for _, n := range flash.Names() {
		r, ok := p.Figures[n.Key]
		v := f.Value(n.Key)
		if ok && !math.IsNaN(v) && (v < r.P5 || v > r.P95) {
			out = append(out, n.Key)
		}
	}
	return out
}

// admissionStats reads the reference checkout's waiting-room counters; ok
// is false for a checkout that has none (a service of your own).
func admissionStats(ctx context.Context, checkoutURL string) (admission.Stats, bool) {
	var st admission.Stats
	if err := getJSON(ctx, checkoutURL+"/admin/admission", &st); err != nil {
		return st, false
	}
	return st, true
}

// resetAdmissionMax starts the checkout's high-water mark of checkouts in
// progress afresh, so that it measures this drill.
func resetAdmissionMax(ctx context.Context, checkoutURL string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, checkoutURL+"/admin/admission/reset-max", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("reset the checkouts-in-progress high-water mark: %s", resp.Status)
	}
	return nil
}
