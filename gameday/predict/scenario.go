package predict

import (
	"context"
	"errors"
	"fmt"
	defaults "github.com/gameday-dev/gameday/internal/checkoutdefaults"
	"math"
	"time"

	"github.com/gameday-dev/gameday/checkout/admission"
	"github.com/gameday-dev/gameday/gameday/load"
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

// RefusalRoundTrip and RefusalRoundTripMax bound what an answer to come
// back costs a shopper of the local environment beyond the wait it draws
// (Model.RoundTrip): the answer's way over loopback and the load
// generator's lateness in sending again. Measured in eleven peak-paced
// drills on one machine (docs/flash-sale.md): 0.98 to 2.08 ms a drill on
// average, about half each, steady within a drill and not from one to the
// next. Each simulated run draws one in this range, so that the model's
// range of a count spans the machine's days. It matters where shoppers are
// asked back every few milliseconds: the paced room's door, whose count of
// answers it lowers by 5 to 10 %.
const (
	RefusalRoundTrip    = time.Millisecond
	RefusalRoundTripMax = 2500 * time.Microsecond
)

// ErrNotPredictable is returned by FromScenario for a scenario the predictor
// cannot simulate.
var ErrNotPredictable = errors.New("the predictor cannot simulate this scenario")

// FromScenario is the scenario as the predictor simulates it: its load, the
// reference checkout's settings and the payment stand-in's. Scenarios with
// faults (the model has no fault timeline), or that drill a service of your
// own (its settings are not in the scenario), give ErrNotPredictable.
func FromScenario(sc *scenarios.Scenario) (Model, error) {
	switch {
	case sc.Environment.Kind == "external":
		return Model{}, fmt.Errorf("%w: it drills a service of your own, whose settings are not in the scenario", ErrNotPredictable)
	case len(sc.Faults) > 0:
		return Model{}, fmt.Errorf("%w: it has faults, and the model has no fault timeline", ErrNotPredictable)
	case sc.Payment.TailProbability > 0:
		return Model{}, fmt.Errorf("%w: the model has no long-tail payment latency", ErrNotPredictable)
	case len(sc.Shops) > 0:
		return Model{}, fmt.Errorf("%w: it is a sale across shops (and pods), and the model is one checkout's sale", ErrNotPredictable)
	case len(sc.Load.Streams) > 0:
		// The streams' purchases (a mix's share, a funnel's buyers) come
		// from journeys the system file describes, and their visits share
		// the checkout's CPU: the model knows neither.
		return Model{}, fmt.Errorf("%w: its load has streams of journeys (docs/journeys.md), and the model is a flash sale's purchases alone", ErrNotPredictable)
	}
	mode, err := admission.ParseMode(sc.Checkout.Admission.Mode)
	if err != nil {
		return Model{}, err
	}
	l := sc.Load
	m := Model{
		Patience: l.Patience.D(), MaxRetries: l.MaxRetries, MaxShoppers: l.ShopperPool(),
		Stock: sc.Stock, Naive: sc.Checkout.Mode == "naive",
		Admission: admission.Config{
			Mode: mode, InProgress: sc.Checkout.Admission.InProgress, TokenTTL: sc.Checkout.Admission.TokenTTL.D(),
		},
		MinPaymentTime: sc.Checkout.MinPaymentTime.D(),
		PaymentMin:     sc.Payment.MinLatency.D(), PaymentMax: sc.Payment.MaxLatency.D(),
		DeclineRate: sc.Payment.DeclineRate, Slots: sc.Payment.Slots,
		LineSlots: sc.Checkout.Payment.Slots,
		Overhead:  CheckoutOverhead, RoundTrip: RefusalRoundTrip, RoundTripMax: RefusalRoundTripMax,
		RetryAfter: sc.Checkout.RetryAfter.D(),
	}
	if l.RetryJitter != nil {
		m.RetryJitter = *l.RetryJitter
	}
	for _, st := range l.Stages {
		m.Stages = append(m.Stages, load.Stage{Duration: st.Duration.D(), Target: st.Target, Hold: st.Hold})
	}
	// The payment guard, as the checkout configures it from the scenario:
	// the checkout's bulkhead unless the scenario says otherwise (negative:
	// none), its probe timeout, a breaker unless disabled.
	b := sc.Checkout.Payment
	m.PaymentTimeout = b.Timeout.D()
	switch {
	case b.MaxConcurrent > 0:
		m.PaymentBulkhead = b.MaxConcurrent
	case b.MaxConcurrent == 0:
		m.PaymentBulkhead = defaults.MaxConcurrent
	}
	if !b.Disabled {
		probe := b.ProbeTimeout.D()
		if probe == 0 {
			probe = defaults.ProbeTimeout("payment", m.PaymentTimeout)
		}
		m.Breaker = Breaker{Failures: int(b.Failures), OpenFor: b.OpenFor.D(), ProbeTimeout: probe}
	}
	return m, m.Validate()
}

// ForRecord simulates the scenario as run (scaled, with the run's seed)
// and gives the prediction as run.json holds it. It is what a drill of the
// reference checkout is compared with (gameday.Options.Predict).
func ForRecord(ctx context.Context, sc *scenarios.Scenario, seed int64, runs int) (*runrecord.Prediction, error) {
	m, err := FromScenario(sc)
	if err != nil {
		return nil, err
	}
	p, err := PredictContext(ctx, m, runs, seed)
	if err != nil {
		return nil, err
	}
	ms := func(d time.Duration) float64 { return math.Round(float64(d)/1e4) / 100 }
	out := &runrecord.Prediction{Runs: p.Runs, Seed: p.Seed, OverheadMS: ms(m.Overhead),
		RoundTripMS: [2]float64{ms(m.RoundTrip), ms(max(m.RoundTrip, m.RoundTripMax))}, Figures: map[string]runrecord.FigureRange{}}
	for k, r := range p.Figures {
		out.Figures[k] = runrecord.FigureRange{Mean: r.Mean, P5: r.P5, P95: r.P95, Min: r.Min, Max: r.Max}
	}
	return out, nil
}

// ForDrill is ForRecord as gameday.Options.Predict wants it: runs 0 means
// DefaultPredictRuns, and a scenario the model cannot simulate has no
// prediction (nil) rather than an error.
func ForDrill(ctx context.Context, sc *scenarios.Scenario, seed int64, runs int) (*runrecord.Prediction, error) {
	if runs == 0 {
		runs = DefaultPredictRuns
	}
	p, err := ForRecord(ctx, sc, seed, runs)
	if errors.Is(err, ErrNotPredictable) {
		return nil, nil
	}
	return p, err
}
