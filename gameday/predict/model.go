// Package predict foretells a flash-sale drill's figures without running
// it: a discrete-event simulation of the shoppers, the reference checkout's
// admission, inventory and payment guard, and the payment stand-in's slots,
// on a simulated clock, with no goroutine, no server and no wall clock.
//
// The simulation reuses the real parts wherever they exist, so that the
// prediction and the drill cannot drift apart: the arrivals are
// [load.Schedule] of the same stages, each shopper's retry jitter is the
// draw [load.Shoppers] makes for it with the run's seed (so a simulated
// shopper waits exactly as long as the real one would), the waiting room is
// a real [admission.Room] driven by the simulated clock (Admit, Done, and
// Tick every Config.Tick), and the figures come from [flash.Compute], as the
// runner's do. What is modelled rather than reused is listed on [Model].
//
// [Predict] runs the simulation for a run of consecutive seeds and gives
// each figure's mean and 5th and 95th percentiles over them: what a drill of
// the scenario should show, and how much it may vary from run to run.
package predict

import (
	"errors"
	"fmt"
	"time"

	"github.com/gameday-dev/gameday/checkout/admission"
	"github.com/gameday-dev/gameday/gameday/load"
	"github.com/gameday-dev/gameday/internal/fileerr"
)

// Model is one scenario as the simulation sees it: the load, the checkout's
// settings and the payment stand-in's behaviour. Fields whose zero value
// stands for something say so.
//
// The simulation models, rather than runs:
//   - the network: an answer reaches the shopper the instant the checkout
//     gives it, and a request reaches the checkout the instant it is sent,
//     except that a shopper told to come back comes back a round trip
//     later than the wait it drew (the answer's way back and the load
//     generator's timer, which a paced room's door, asked every few
//     milliseconds, feels): one per run, in [RoundTrip, RoundTripMax];
//   - the checkout's own work: Overhead per admitted request, all of it
//     before the charge (session, stock read or reservation); the stock is
//     read or reserved at admission;
//   - the payment stand-in: uniform latency in [PaymentMin, PaymentMax]
//     and declines at DeclineRate, from a generator seeded by the run's seed
//     (the same distributions as the stand-in, not its per-key draws); no
//     long tail;
//   - the payment stand-in's slots: strictly first come, first served (the
//     stand-in's semaphore is only roughly so);
//   - the checkout's payment line (LineSlots): strictly first come, first
//     served, as the checkout's is;
//   - the payment guard: its timeout, bulkhead and breaker, as gobreaker
//     behaves with an Interval of 0 (counts cleared only by a change of
//     state or a success).
//
// It does not model faults (no Toxiproxy timeline), Redis failing or
// slowing, reservation leases expiring under a charge (LeaseTTL: only
// reachable when a detached charge takes longer, which a payment timeout
// prevents), the payment client's resend after a broken connection, voids
// failing, a second checkout instance, or the load generator starting
// shoppers late.
type Model struct {
	// The load, as in load.Plan (same meaning, same limits), except that
	// MaxShoppers 0 means no limit.
	Stages      []load.Stage
	Patience    time.Duration
	MaxRetries  int
	RetryJitter float64
	MaxShoppers int

	// Stock is the units on sale; must be above 0.
	Stock int64
	// Naive is the checkout's naive inventory: read the stock at admission,
	// pay, then decrement, which oversells when several pay for the last
	// units at once. False is reserve-before-pay: a unit is reserved at
	// admission and released on a decline, a refusal or a timeout.
	Naive bool

	// Admission is the checkout's admission setting. As in the checkout,
	// its RetryAfter 0 means the checkout's RetryAfter (below). In the fair
	// modes a Config without Keys gets a fixed simulation key: the tokens
	// never leave the simulation.
	Admission admission.Config
	// MinPaymentTime: in the modes that honour the deadline, a charge is not
	// started with this little or less left before the shopper's deadline
	// (too_late instead). 0: only a deadline already passed stops it.
	MinPaymentTime time.Duration

	// The payment stand-in: latency uniform in [PaymentMin, PaymentMax],
	// DeclineRate in [0, 1], Slots charges processed at once (the others
	// wait in arrival order; 0: no limit).
	PaymentMin, PaymentMax time.Duration
	DeclineRate            float64
	Slots                  int

	// LineSlots is the checkout's payment line (checkout.Config.PaymentSlots):
	// at most that many charges at the provider at once, the others waiting
	// in the checkout, first come, first served; in the modes that honour
	// the deadline a freed slot goes only to a waiter with more than
	// MinPaymentTime left, and a waiter leaves too_late the moment it has
	// no more. 0: no line.
	LineSlots int

	// PaymentTimeout is the payment guard's deadline on a charge, from the
	// call to the answer, slot wait included (0: none). A charge that
	// misses it is voided (dropped if it still waited for a slot) and the
	// shopper is told to come back (503, reason "timeout").
	PaymentTimeout time.Duration
	// Overhead is the checkout's own time per admitted request (its Redis
	// round trips), a model parameter: measure it, or guess it.
	Overhead time.Duration
	// RoundTrip is what an answer to come back costs the shopper beyond
	// the wait it draws: the answer's way to it and its timer's lateness
	// in sending again. A model parameter like Overhead; 0: none. It is
	// the machine's more than the checkout's, and differs from drill to
	// drill more than from answer to answer: with RoundTripMax above it,
	// each run draws its own, uniformly in [RoundTrip, RoundTripMax], from
	// its seed (RoundTripMax 0: RoundTrip in every run).
	RoundTrip, RoundTripMax time.Duration

	// RetryAfter is the wait the checkout's own refusals (503 timeout,
	// bulkhead_full, breaker_open) ask for; 0 means 1s, the checkout's
	// default. The waiting room's wait is Admission.RetryAfter.
	RetryAfter time.Duration
	// PaymentBulkhead is the payment guard's MaxConcurrent: with that many
	// charges in flight a checkout is refused at once (503, reason
	// "bulkhead_full"). 0 or negative: no bulkhead. (The scenario's and the
	// guard's 0 means 64: map it before.)
	PaymentBulkhead int
	// Breaker is the payment guard's circuit breaker; the zero value has
	// none (it never opens).
	Breaker Breaker
}

// Breaker is the payment guard's circuit breaker, as breakers.Settings
// configures it (with Interval 0).
type Breaker struct {
	// Failures in a row (guard timeouts) open the breaker; 0: no breaker.
	Failures int
	// OpenFor is how long it stays open before letting probes through;
	// must be above 0 when Failures is.
	OpenFor time.Duration
	// Probes is how many calls it lets through half-open, and how many
	// successes in a row close it; 0 means 1.
	Probes int
	// ProbeTimeout is the deadline of a probe; 0 means PaymentTimeout.
	ProbeTimeout time.Duration
}

// defaultRetryAfter is the checkout's default Retry-After.
const defaultRetryAfter = time.Second

// simKey signs the fair tokens of a simulation whose Model has no key.
var simKey = admission.Key{ID: "predict", Secret: []byte("gameday predictor: not a secret")}

// ModelError is one invalid field of a Model: Field is the Model field,
// such as "PaymentMax", Value its value, Msg what is wrong. It is the one
// error type of every input file and config (internal/fileerr, the same
// type as load.FieldError), named here so that a program outside this
// module, which cannot import an internal package, can find it with
// errors.As.
type ModelError = fileerr.Error

// Validate reports every invalid field of m at once, each a *ModelError
// joined with errors.Join: the load's named as load.Plan.Validate names
// them ("max_retries"), the admission's as admission.Config.Validate does
// ("admission.in_progress"), the others by their Model field.
func (m Model) Validate() error {
	var errs []error
	bad := func(field string, value any, problem string) {
		errs = append(errs, &ModelError{Field: field, Value: fmt.Sprint(value), Msg: problem})
	}
	if err := m.plan(0).Validate(); err != nil {
		errs = append(errs, err)
	}
	if m.MaxShoppers < 0 {
		bad("MaxShoppers", m.MaxShoppers, "must not be negative (0 means no limit)")
	}
	if m.Stock <= 0 {
		bad("Stock", m.Stock, "must be above 0")
	}
	if m.MinPaymentTime < 0 {
		bad("MinPaymentTime", m.MinPaymentTime, "must not be negative")
	}
	if m.PaymentMin < 0 {
		bad("PaymentMin", m.PaymentMin, "must not be negative")
	}
	if m.PaymentMax < m.PaymentMin {
		bad("PaymentMax", m.PaymentMax, "must not be less than PaymentMin "+m.PaymentMin.String())
	}
	if !(m.DeclineRate >= 0 && m.DeclineRate <= 1) { // NaN too
		bad("DeclineRate", m.DeclineRate, "must be in [0, 1]")
	}
	if m.Slots < 0 {
		bad("Slots", m.Slots, "must not be negative (0 means no limit)")
	}
	if m.LineSlots < 0 {
		bad("LineSlots", m.LineSlots, "must not be negative (0 means no line)")
	}
	if m.PaymentTimeout < 0 {
		bad("PaymentTimeout", m.PaymentTimeout, "must not be negative (0 means none)")
	}
	if m.Overhead < 0 {
		bad("Overhead", m.Overhead, "must not be negative")
	}
	if m.RoundTrip < 0 {
		bad("RoundTrip", m.RoundTrip, "must not be negative")
	}
	if m.RoundTripMax != 0 && m.RoundTripMax < m.RoundTrip {
		bad("RoundTripMax", m.RoundTripMax, "must be 0 or at least RoundTrip")
	}
	if m.RetryAfter < 0 {
		bad("RetryAfter", m.RetryAfter, "must not be negative (0 means 1s)")
	}
	b := m.Breaker
	if b.Failures < 0 {
		bad("Breaker.Failures", b.Failures, "must not be negative (0 means no breaker)")
	}
	if b.Failures > 0 && b.OpenFor <= 0 {
		bad("Breaker.OpenFor", b.OpenFor, "must be above 0 when Breaker.Failures is")
	}
	if b.Probes < 0 {
		bad("Breaker.Probes", b.Probes, "must not be negative (0 means 1)")
	}
	if b.ProbeTimeout < 0 {
		bad("Breaker.ProbeTimeout", b.ProbeTimeout, "must not be negative (0 means PaymentTimeout)")
	}
	if err := m.admission().Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// plan is the load plan of the run with the given seed, as the runner would
// build it: the same stages, patience, retries and jitter give the same
// schedule and the same shopper choices.
func (m Model) plan(seed int64) load.Plan {
	maxShoppers := m.MaxShoppers
	if maxShoppers <= 0 { // 0 is no limit; below, Validate says so
		maxShoppers = load.PoolLimit
	}
	return load.Plan{
		Stages: m.Stages, Patience: m.Patience, MaxRetries: m.MaxRetries, RetryJitter: m.RetryJitter,
		MaxShoppers: maxShoppers, Seed: seed,
	}
}

// admission is the room's config as the checkout builds it (a waiting
// room's RetryAfter of 0 is the checkout's own RetryAfter), with the
// simulation key in the fair modes when the model has none.
func (m Model) admission() admission.Config {
	c := m.Admission
	if c.RetryAfter == 0 {
		c.RetryAfter = m.RetryAfter // 0 too: the room's default, 1s, the checkout's
	}
	if c.Need == 0 {
		c.Need = m.MinPaymentTime // as the checkout sets it
	}
	if mode, err := admission.ParseMode(string(c.Mode)); err == nil && mode.Fair() && len(c.Keys) == 0 {
		c.Keys = []admission.Key{simKey}
	}
	return c
}

// Range is a figure over the runs of a prediction: the mean, the 5th and
// 95th percentiles (nearest rank), and the least and greatest value any run
// gave. A single drill falls outside [P5, P95] one time in ten on each
// figure even when the model is right; outside [Min, Max] of 400 runs, about
// one time in 200.
type Range struct {
	Mean float64 `json:"mean"`
	P5   float64 `json:"p5"`
	P95  float64 `json:"p95"`
	Min  float64 `json:"min"`
	Max  float64 `json:"max"`
}

// Prediction is a scenario's figures over Runs simulated runs with the seeds
// Seed, Seed+1, ..., keyed by flash.Names' keys.
type Prediction struct {
	Runs    int
	Seed    int64
	Figures map[string]Range
}
