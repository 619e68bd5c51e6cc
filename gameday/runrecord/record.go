// Package runrecord holds run.json: what one drill did and found. It is a
// leaf package, so that reports, the matrix and the runner can all read it.
package runrecord

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gameday-dev/gameday/gameday/flash"
	"github.com/gameday-dev/gameday/internal/inputfile"
	"github.com/gameday-dev/gameday/scenarios"
)

// Transition is a breaker state change: the state entered and when, in
// milliseconds from the start of the load.
type Transition struct {
	State string `json:"state"`
	AtMS  int64  `json:"at_ms"`
}

// Series is the run over time, one point per second of the load, for
// charts: arrivals by scheduled second, final outcomes by the second they
// were reached, and latency percentiles of the requests sent in each
// second (from the scheduled start, as everywhere else).
type Series struct {
	Seconds  int              `json:"seconds"`
	Arrivals []int            `json:"arrivals"`
	Outcomes map[string][]int `json:"outcomes"`
	P50MS    []float64        `json:"p50_ms"`
	P95MS    []float64        `json:"p95_ms"`
	P99MS    []float64        `json:"p99_ms"`
	// Planned is, for a replayed recording, the arrivals its plan gives
	// each second (the recording × the rate scale), to chart beside
	// Arrivals; empty otherwise.
	Planned []float64 `json:"planned,omitempty"`
}

// Verdict is what a drill proved: pass, fail, inconclusive or error.
type Verdict string

// Verdicts of a run.
const (
	VerdictPass         Verdict = "pass"         // every promise and invariant held
	VerdictFail         Verdict = "fail"         // the system under test broke one
	VerdictError        Verdict = "error"        // the drill could not be carried out
	VerdictInconclusive Verdict = "inconclusive" // the drill proved nothing either way
)

// Record is run.json: what one drill did and found. Its fields are a
// contract for users' scripts; add fields, never rename them.
type Record struct {
	Scenario   string    `json:"scenario"`
	File       string    `json:"file"`
	Seed       int64     `json:"seed"`
	RateScale  float64   `json:"rate_scale"`
	TimeScale  float64   `json:"time_scale"`
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at"`
	Verdict    Verdict   `json:"verdict"`
	// Reason explains an error or inconclusive verdict, and lists the
	// broken promises of a failed one.
	Reason      string      `json:"reason,omitempty"`
	Matrix      MatrixRef   `json:"matrix"`
	Environment Environment `json:"environment"`
	// System is the name of the system under test, as its description
	// names it ("reference-checkout" for gameday's own).
	System string `json:"system,omitempty"`
	// CheckoutPrefix starts every checkout id this run sent ("s1ttpio8f":
	// its ids are s1ttpio8f-0, s1ttpio8f-1, ...): what to filter the
	// system's own books and logs by.
	CheckoutPrefix string         `json:"checkout_prefix,omitempty"`
	Load           LoadSummary    `json:"load"`
	Outcomes       map[string]int `json:"outcomes"`
	// Visits counts the visits of the journeys that do not buy (a load's
	// streams), by journey and outcome; Outcomes are the purchases'.
	Visits       map[string]map[string]int `json:"visits,omitempty"`
	Invariants   Invariants                `json:"invariants"`
	Breakers     map[string]BreakerRecord  `json:"breakers"`
	Faults       []FaultRecord             `json:"faults"`
	Expectations []ExpectationResult       `json:"expectations"`
	// InvariantChecks are the invariants as promises: each count at most
	// what the scenario allows (zero unless it says otherwise).
	InvariantChecks []ExpectationResult `json:"invariant_checks"`
	// Ledger and Charges are the books as reconciled after the run.
	Ledger  LedgerSummary `json:"ledger"`
	Charges ChargeSummary `json:"charges"`
	Notes   []string      `json:"notes,omitempty"`
	// Series is the run second by second, for the report's charts.
	Series Series `json:"series"`
	// Flash is the run's flash-sale figures (docs/flash-sale.md) and, for a
	// scenario the predictor can simulate, their predicted ranges.
	Flash *Flash `json:"flash,omitempty"`
	// Host is how the machine that ran the drill kept up: the evidence
	// behind a verdict of inconclusive for a starved machine.
	Host *Host `json:"host,omitempty"`
	// Unmatched are the kinds of answers no rule of the system's
	// description understood (each counted as an error): a sample of each.
	Unmatched []Unmatched `json:"unmatched,omitempty"`
	// EmptyKept are the steps that sent a value an earlier step keeps
	// while it was still empty (a keep whose path the answers never had):
	// what the system answered those requests may be what the verdict
	// counts, so they are said before it is read.
	EmptyKept []EmptyKept `json:"empty_kept,omitempty"`
	// TransportErrors are the kinds of requests that got no answer at all
	// (refused, reset, timed out), most frequent first: why shoppers ended
	// in error when no answer was there to be matched.
	TransportErrors []TransportError `json:"transport_errors,omitempty"`
	// Shops, in a sale across shops, are each shop's outcomes and books,
	// reconciled on their own; Invariants, Ledger and Charges above are
	// their sums, plus the rows of this run that belong to no shop's
	// shopper, reconciled on their own and named in a note.
	Shops []Shop `json:"shops,omitempty"`
	// Moves are the shops moved between pods, and how each move went.
	Moves []Move `json:"moves,omitempty"`
	// Pods, in an environment of pods, are each pod's shoppers second by
	// second, for the report to show side by side: a shopper counts on
	// the pod its shop was on when it arrived.
	Pods []Pod `json:"pods,omitempty"`
	// Requests are the kinds of request each dependency received, where
	// its proxy has a relay behind it: by kind and by second of the run.
	Requests []DependencyRequests `json:"requests,omitempty"`
	// RequestsError says why the requests could not be read.
	RequestsError string `json:"requests_error,omitempty"`
}

// DependencyRequests are the kinds of request one dependency received
// through its proxy's relay (docs/explore.md#request-kinds): a Postgres or
// MySQL statement by verb and table ("UPDATE products", "COMMIT"), a Redis
// command ("EVAL"), an HTTP request by method and path pattern ("POST
// /v1/charges").
type DependencyRequests struct {
	Dependency string        `json:"dependency"`
	Kinds      []RequestKind `json:"kinds"`
}

// RequestKind is how many requests of one kind a dependency received,
// and when: PerSecond[i] is those that began in the i-th whole second of
// the clock counted from the one the run started in (its start is the
// fault timeline's, as a fault's at), so a second's requests are placed
// to within a second, and second 0 may hold a few sent just before the
// start (the books set up).
type RequestKind struct {
	Kind      string  `json:"kind"`
	Count     int64   `json:"count"`
	PerSecond []int64 `json:"per_second"`
}

// Span says when a kind was seen, in a phrase: "0–7 s".
func (k RequestKind) Span() string {
	first, last := -1, -1
	for i, n := range k.PerSecond {
		if n > 0 {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		return "–"
	}
	if first == last {
		return fmt.Sprintf("%d s", first)
	}
	return fmt.Sprintf("%d–%d s", first, last)
}

// Pod is one pod's part of the sale.
type Pod struct {
	Name   string   `json:"name"`
	Shops  []string `json:"shops"`
	Series Series   `json:"series"`
}

// Move is one move of a shop between pods (docs/pods.md).
type Move struct {
	Name string `json:"name"`
	Shop string `json:"shop"`
	From string `json:"from"`
	To   string `json:"to"`
	// AtMS is when the move began, from the start of the load.
	AtMS float64 `json:"at_ms"`
	// Outcome is completed, rolled_back or failed; "" when the move never
	// began (the load ended first).
	Outcome string `json:"outcome"`
	// Units is the stock moved out of From.
	Units int64 `json:"units"`
	// ReadOnlyMS is how long the shop's writes were refused.
	ReadOnlyMS float64  `json:"read_only_ms"`
	Steps      []string `json:"steps,omitempty"`
	Error      string   `json:"error,omitempty"`
}

// Shop is one shop of a sale across shops: where it lives, what its
// shoppers saw and what its books say.
type Shop struct {
	Name       string         `json:"name"`
	Pod        string         `json:"pod,omitempty"`
	Outcomes   map[string]int `json:"outcomes"`
	Invariants Invariants     `json:"invariants"`
	Ledger     LedgerSummary  `json:"ledger"`
	Charges    ChargeSummary  `json:"charges"`
}

// Unmatched is one kind of answer no rule understood: its step and status,
// how many came, and the first one's content type and body (its start).
type Unmatched struct {
	Step string `json:"step"`
	// Request is the first one's method and path, as rendered.
	Request     string `json:"request,omitempty"`
	Code        int    `json:"code"`
	Count       int    `json:"count"`
	ContentType string `json:"content_type,omitempty"`
	Sample      string `json:"sample"`
}

// TransportError is one kind of request that got no answer: its kind
// ("connection refused", "connection reset", "timeout", "EOF", or
// "other"), how many, and the first one's error.
type TransportError struct {
	Kind   string `json:"kind"`
	Count  int    `json:"count"`
	Sample string `json:"sample"`
}

// JoinUnmatched joins lists of unmatched answers (a load sent by several
// workers has one each): one entry per step, code and content type, the
// counts summed and the first sample kept, most frequent first.
func JoinUnmatched(lists ...[]Unmatched) []Unmatched {
	type key struct {
		step string
		code int
	}
	out := join(lists, func(u Unmatched) key { return key{u.Step, u.Code} }, func(a *Unmatched, b Unmatched) { a.Count += b.Count })
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		if out[i].Step != out[j].Step {
			return out[i].Step < out[j].Step
		}
		return out[i].Code < out[j].Code
	})
	return out
}

// EmptyKept is one step that sent a kept value empty, and how often.
type EmptyKept struct {
	Step     string `json:"step"`
	Kept     string `json:"kept"`
	Requests int    `json:"requests"`
	// KeptBy names the steps that keep the value and where they look
	// ("step place's keep.order (json: orderId)").
	KeptBy string `json:"kept_by"`
}

func (e EmptyKept) String() string {
	n := fmt.Sprintf("%d requests", e.Requests)
	if e.Requests == 1 {
		n = "1 request"
	}
	return fmt.Sprintf("step %s sent %s with {{.Kept.%s}} empty: no answer of an earlier step had it where %s says", e.Step, n, e.Kept, e.KeptBy)
}

// JoinEmptyKept adds up lists of empty kept values (the shards' of one
// run), in the order each step and value first appears.
func JoinEmptyKept(lists ...[]EmptyKept) []EmptyKept {
	type key struct{ step, kept string }
	return join(lists, func(e EmptyKept) key { return key{e.Step, e.Kept} }, func(a *EmptyKept, b EmptyKept) { a.Requests += b.Requests })
}

// join is lists as one, an entry per key in the order each key first
// appears, the later ones of a key added to the first.
func join[T any, K comparable](lists [][]T, key func(T) K, add func(*T, T)) []T {
	at := map[K]int{}
	var out []T
	for _, l := range lists {
		for _, x := range l {
			k := key(x)
			if i, ok := at[k]; ok {
				add(&out[i], x)
				continue
			}
			at[k] = len(out)
			out = append(out, x)
		}
	}
	return out
}

// Host is how well the machine running the drill kept up with it. The
// runner and, in the environments gameday starts, every part of the system
// under test share it: when the machine cannot run what is ready to run,
// timings measure the machine, not the checkout.
type Host struct {
	CPUs int `json:"cpus"`
	// StallP99MS and StallMaxMS are how late the runner's own 10 ms timer
	// fired (p99 and worst over the run): time in which the runner was
	// ready and could not get a CPU.
	StallP99MS float64 `json:"stall_p99_ms"`
	StallMaxMS float64 `json:"stall_max_ms"`
	// CPUPressurePct is the share of the run's wall time in which some
	// runnable task of the machine waited for a CPU (Linux's pressure stall
	// information, /proc/pressure/cpu "some"); nil where it is not reported.
	CPUPressurePct *float64 `json:"cpu_pressure_pct,omitempty"`
	// IOPressurePct is the same for I/O (/proc/pressure/io, "some"): time
	// in which a task waited for the disk. A checkout whose stores sync
	// every write to a disk that stalls is measured slower than it is.
	IOPressurePct *float64 `json:"io_pressure_pct,omitempty"`
	// Load1 is the one-minute load average at the end of the run.
	Load1 float64 `json:"load1"`
	// Stalls lists the worst stalls (at most ten, worst first) with when
	// they happened, in milliseconds from the start of the load.
	Stalls []Stall `json:"stalls,omitempty"`
	// StarvedSpans are the times the runner's timer stalled 100 ms or
	// more (hostmon.StarvedStall), in milliseconds from the start of the
	// load, in order: the evidence a timing promise is excused by
	// (judge.Excuse). StarvedSpansCut counts stalls beyond the 4,096 kept,
	// which excuse nothing.
	StarvedSpans    []StallSpan `json:"starved_spans,omitempty"`
	StarvedSpansCut int         `json:"starved_spans_cut,omitempty"`
	// System is the evidence of the system under test's own starvation,
	// where its processes run on this host; nil in records written before
	// it was kept.
	System *SystemHost `json:"system,omitempty"`
	// Starved names the promises that failed while the machine was
	// starved, with the evidence; they make the verdict inconclusive
	// when no other promise failed.
	Starved []string `json:"starved,omitempty"`
}

// SystemHost is how the system under test's processes kept up where they
// share the runner's host: how long their threads, ready to run, waited
// for a CPU (Linux's run-queue delay, /proc/PID/task/TID/schedstat),
// sampled every tenth of a second.
type SystemHost struct {
	// Watched names the processes watched, each with its pid
	// ("checkout (pid 4242)"), as last found; empty when none was.
	Watched []string `json:"watched,omitempty"`
	// Unwatched says why there is no evidence of the system's own
	// starvation (it runs where the runner cannot see it, say); "" when
	// its processes were watched.
	Unwatched string `json:"unwatched,omitempty"`
	// WaitMaxMS is the most one thread of the system waited for a CPU
	// within one sample.
	WaitMaxMS float64 `json:"wait_max_ms"`
	// StarvedSpans are the times the system was starved (hostmon's rule:
	// samples in which one of its threads waited half the time or more,
	// joined, that add up to 100 ms of waiting or more), in milliseconds
	// from the start of the load, each with the time waited in it: the
	// evidence on which a promise about what the system answered is
	// excused in proportion (judge.Excuse). StarvedSpansCut counts those
	// beyond the 4,096 kept, which excuse nothing.
	StarvedSpans    []StallSpan `json:"starved_spans,omitempty"`
	StarvedSpansCut int         `json:"starved_spans_cut,omitempty"`
}

// Stall is one time the runner's timer fired late.
type Stall struct {
	AtMS int64   `json:"at_ms"`
	MS   float64 `json:"ms"`
}

// StallSpan is a time in which a machine that measured the drill could not
// run it: its timer was due at FromMS and fired at ToMS. For the system
// under test's (SystemHost), it is a time in which the system's processes
// were starved, and WaitedMS how long they waited for a CPU in it; 0 for
// a timer's stall, which is stalled throughout.
type StallSpan struct {
	FromMS   int64 `json:"from_ms"`
	ToMS     int64 `json:"to_ms"`
	WaitedMS int64 `json:"waited_ms,omitempty"`
}

// Flash is the flash-sale figures of a run beside their prediction.
type Flash struct {
	// Observed are the figures of this run.
	Observed flash.Figures `json:"observed"`
	// Predicted is "gameday predict" for the same scenario, seed and
	// scales; nil when the scenario cannot be simulated (it has faults, or
	// drills a service of your own) or prediction was turned off.
	Predicted *Prediction `json:"predicted,omitempty"`
	// Outside names the figures observed outside their predicted 5th-95th
	// percentile range, in flash.Names' order. Each figure of a right model
	// lands outside about one run in ten: a figure outside in run after run,
	// or far outside, is a finding (in the checkout or in the model).
	Outside []string `json:"outside,omitempty"`
}

// Prediction is the predicted range of each figure, keyed as flash.Names.
type Prediction struct {
	Runs int   `json:"runs"`
	Seed int64 `json:"seed"`
	// OverheadMS is the checkout's own time per request the model assumed.
	OverheadMS float64 `json:"overhead_ms"`
	// RoundTripMS is the least and most the model assumed an answer to
	// come back costs the shopper beyond the wait it draws, one drawn per
	// simulated run (predict.Model.RoundTrip).
	RoundTripMS [2]float64             `json:"round_trip_ms"`
	Figures     map[string]FigureRange `json:"figures"`
}

// FigureRange is one figure over the simulated runs.
type FigureRange struct {
	Mean float64 `json:"mean"`
	P5   float64 `json:"p5"`
	P95  float64 `json:"p95"`
	Min  float64 `json:"min"`
	Max  float64 `json:"max"`
}

// Environment is what the drill ran against.
type Environment struct {
	Kind      string `json:"kind"`
	Redis     string `json:"redis,omitempty"` // the reference checkout's Redis; "" for a described system
	Toxiproxy string `json:"toxiproxy"`
	Checkout  string `json:"checkout"`
	// Notes are things the operator must know, such as a fallback used.
	Notes []string `json:"notes,omitempty"`
}

// MatrixRef is the matrix row the scenario proves.
type MatrixRef struct {
	Dependency string `json:"dependency"`
	Failure    string `json:"failure"`
}

// LoadSummary is how the open-model load went against its plan.
type LoadSummary struct {
	Scheduled int     `json:"scheduled"`
	Started   int     `json:"started"`
	Dropped   int     `json:"dropped"`
	LateP50MS float64 `json:"late_p50_ms"`
	LateP99MS float64 `json:"late_p99_ms"`
	LateMaxMS float64 `json:"late_max_ms"`
	// CheckoutP95MS is the p95 of every checkout request, from its
	// scheduled start.
	CheckoutP95MS float64 `json:"checkout_p95_ms"`
	// CheckoutP95DuringMS is the same over the requests sent while a
	// fault was in place; nil without faults.
	CheckoutP95DuringMS *float64 `json:"checkout_p95_during_ms"`
	DurationMS          int64    `json:"duration_ms"`
	// Shards are the load's worker processes, when it was sent by several
	// (docs/scale.md); none when this process sent it all.
	Shards []Shard `json:"shards,omitempty"`
}

// Shard is one worker of a sale sent from several processes or machines:
// where it ran, its clock against the coordinator's, and what came back.
type Shard struct {
	Index int    `json:"index"`
	Host  string `json:"host,omitempty"`
	// ClockOffsetMS is the coordinator's clock minus the worker's, as the
	// worker measured it before the start; every time of its shoppers is
	// on the coordinator's clock. ClockRTTMS is the round trip of that
	// measurement: the offset is known to within half of it.
	ClockOffsetMS float64 `json:"clock_offset_ms"`
	ClockRTTMS    float64 `json:"clock_rtt_ms"`
	// Scheduled is the shard's part of the plan; Shoppers the records it
	// sent back.
	Scheduled int     `json:"scheduled"`
	Shoppers  int     `json:"shoppers"`
	LateP99MS float64 `json:"late_p99_ms"`
	// StarvedSpans are the times the worker's own timer stalled 100 ms or
	// more, on the coordinator's clock from the start of the load: the
	// evidence that excuses a timing promise over the shoppers this worker
	// measured (host.starved_spans is the coordinator's, which measured
	// the breakers only). StarvedSpansCut counts those beyond the kept.
	StarvedSpans    []StallSpan `json:"starved_spans,omitempty"`
	StarvedSpansCut int         `json:"starved_spans_cut,omitempty"`
	// Error is why the shard failed (it died, started late, could not
	// reach the target), which makes the run inconclusive.
	Error string `json:"error,omitempty"`
}

// Invariants are the reconciliation's counts; each must be zero unless
// the scenario allows it.
type Invariants struct {
	Oversold            int64 `json:"oversold"`
	LostUnits           int64 `json:"lost_units"`
	DoubleCharges       int64 `json:"double_charges"`
	ChargesWithoutOrder int64 `json:"charges_without_order"`
	OrdersWithoutCharge int64 `json:"orders_without_charge"`
	ChargedAfterLeaving int64 `json:"charged_after_leaving"`
	// OrdersToldFailed counts orders of shoppers the system told the
	// purchase failed (unavailable, error, declined, sold out, too late).
	OrdersToldFailed int64 `json:"orders_told_failed"`
	// ConfirmedWithoutOrder counts shoppers told confirmed with no order.
	ConfirmedWithoutOrder int64 `json:"confirmed_without_order"`
	// UnitsCreated counts units available or held beyond the stock left
	// after what was sold (phantom units still for sale; those sold are
	// Oversold).
	UnitsCreated int64 `json:"units_created"`
	// WrongAmounts counts approved charges that took other than what the
	// order they paid costs.
	WrongAmounts int64 `json:"wrong_amounts"`
	// StrandedUnits counts units still held when the books were final:
	// neither sold nor for sale.
	StrandedUnits int64 `json:"stranded_units"`
	// SoldWithoutOrder counts units the shop's own count says were sold
	// beyond this run's orders (books.stock.sold against books.orders):
	// a sale recorded without its order.
	SoldWithoutOrder int64 `json:"sold_without_order"`
	// OrdersBeyondSold counts order units beyond the shop's own count of
	// units sold: an order written twice, or one for a unit never taken.
	OrdersBeyondSold int64 `json:"orders_beyond_sold"`
	// AcceptedNotFinished counts purchases the system told the shopper
	// were accepted (pending, queued) that were still unfinished when the
	// books were final.
	AcceptedNotFinished int64 `json:"accepted_not_finished"`
	Dropped             int64 `json:"dropped"`
}

// ByName maps each invariant's name to its count.
func (iv Invariants) ByName() map[string]int64 {
	return map[string]int64{
		"oversold": iv.Oversold, "lost_units": iv.LostUnits, "double_charges": iv.DoubleCharges,
		"charges_without_order": iv.ChargesWithoutOrder, "orders_without_charge": iv.OrdersWithoutCharge,
		"charged_after_leaving": iv.ChargedAfterLeaving, "orders_told_failed": iv.OrdersToldFailed,
		"confirmed_without_order": iv.ConfirmedWithoutOrder, "units_created": iv.UnitsCreated,
		"wrong_amounts": iv.WrongAmounts, "stranded_units": iv.StrandedUnits, "sold_without_order": iv.SoldWithoutOrder,
		"orders_beyond_sold": iv.OrdersBeyondSold, "accepted_not_finished": iv.AcceptedNotFinished, "dropped": iv.Dropped,
	}
}

// BreakerRecord is one dependency's breaker over the run.
type BreakerRecord struct {
	Transitions []Transition `json:"transitions"`
	// OpenedAfterMS is the time from the first fault on this dependency to
	// the breaker opening, ClosedAfterMS from that fault's end to it
	// closing; nil when it did not happen (or there was no such fault).
	OpenedAfterMS *int64 `json:"opened_after_ms"`
	ClosedAfterMS *int64 `json:"closed_after_ms"`
}

// FaultRecord is when a fault was really in place: StartMS when it was
// injected, EndMS when it was gone (for a killed process: when it answered
// again). LiftedMS, when set, is when the runner began to lift it (the
// start of a killed process; a container's start and health check can take
// a second or more): breaker_closes is measured from it, since a breaker
// may see the dependency back before the runner does.
type FaultRecord struct {
	Name     string `json:"name"`
	Target   string `json:"target"`
	Kind     string `json:"kind"`
	StartMS  int64  `json:"start_ms"`
	LiftedMS *int64 `json:"lifted_ms,omitempty"`
	EndMS    int64  `json:"end_ms"`
	// BackMS, for a restart, is when the dependency answered again (its
	// kill, start and ready check done). Its LiftedMS is StartMS (the
	// start follows the kill at once), and its EndMS is BackMS or StartMS
	// plus its for, whichever is later: its window lasts at least its
	// for, and never ends while the dependency is still down.
	BackMS *int64 `json:"back_ms,omitempty"`
	// Error is why the fault could not be injected: it was never in
	// place (EndMS is StartMS).
	Error string `json:"error,omitempty"`
	// LiftError is why the fault could not be lifted at LiftedMS: it
	// stayed in place, the load was stopped, and EndMS is the load's end.
	LiftError string `json:"lift_error,omitempty"`
	// Hits is what a request-aware toxic (lost_reply) did, read from the
	// Toxiproxy just before it was removed.
	Hits *RequestHits `json:"hits,omitempty"`
	// HitsError is why a request-aware toxic's hits could not be read:
	// whether it acted is not known, and the drill proves nothing of it
	// (inconclusive, unless the books prove a failure).
	HitsError string `json:"hits_error,omitempty"`
	// Cache is what a cache fault did to the dependency's data.
	Cache *CacheEffect `json:"cache,omitempty"`
}

// Idle says why a request-aware fault that was in place cannot be said to
// have acted: it acted on no request (what it saw), or what it did could
// not be read back (why); "" when it acted, and for a fault that is not
// request-aware or never went in. A drill that held up to such a fault
// proved nothing of it.
func (f FaultRecord) Idle() string {
	switch {
	case f.Error == "" && f.Cache != nil:
		return f.Cache.Idle()
	case f.Error != "" || !scenarios.RequestAware(f.Kind):
		return ""
	case f.Hits != nil && f.Hits.Idle():
		return f.Hits.Text()
	case f.Hits == nil:
		why := f.HitsError
		if why == "" {
			why = "they were never read"
		}
		return "may have acted: what it did could not be read (" + why + ")"
	}
	return ""
}

// CacheEffect is what a cache fault did to a Redis dependency's data
// (docs/faults.md#cache-faults): the keys a flush or expiry matched, over
// its rounds; what a memory limit evicted and refused, and what it put
// back.
type CacheEffect struct {
	Redis   string `json:"redis"`
	Pattern string `json:"pattern,omitempty"`
	Rounds  int    `json:"rounds,omitempty"`
	// Keys is the keys flushed or expired, summed over the rounds.
	Keys int64 `json:"keys"`
	// Lost says what the fault did that cannot be undone.
	Lost string `json:"lost,omitempty"`
	// MaxMemory and Policy are the limit set, Used what the Redis used
	// when it was; Evicted the keys Redis evicted and Refused the writes
	// it refused for memory (OOM) while it held; Restores the limit put
	// back.
	MaxMemory int64  `json:"maxmemory,omitempty"`
	Used      int64  `json:"used,omitempty"`
	Policy    string `json:"policy,omitempty"`
	Evicted   int64  `json:"evicted,omitempty"`
	Refused   int64  `json:"refused,omitempty"`
	Restores  string `json:"restores,omitempty"`
	// Error is why the fault did not do all it was to: a later round of
	// a repeated flush or expiry failed, or what a memory limit evicted
	// and refused could not be read.
	Error string `json:"error,omitempty"`
}

// Text says what the cache fault did, in a line.
func (c *CacheEffect) Text() string {
	var s string
	if c.MaxMemory > 0 {
		s = fmt.Sprintf("limited to %d bytes of the %d it used (%s): %d keys evicted, %d writes refused; put back %s", c.MaxMemory, c.Used, c.Policy, c.Evicted, c.Refused, c.Restores)
	} else {
		rounds := ""
		if c.Rounds > 1 {
			rounds = fmt.Sprintf(" in %d rounds", c.Rounds)
		}
		s = fmt.Sprintf("cleared %d keys matching %s%s; %s", c.Keys, c.Pattern, rounds, c.Lost)
	}
	if c.Error != "" {
		s += "; " + c.Error
	}
	return s
}

// Idle says why the cache fault cannot be said to have acted as the
// scenario says: a flush or expiry that matched no key, a memory limit
// that evicted and refused nothing, one that did not do all it was to
// (Error); "" when it acted.
func (c *CacheEffect) Idle() string {
	switch {
	case c.Error != "":
		return "did not do all it was to: " + c.Error
	case c.MaxMemory > 0 && c.Evicted == 0 && c.Refused == 0:
		return fmt.Sprintf("evicted no key and refused no write under its limit of %d bytes: the limit changed nothing", c.MaxMemory)
	case c.MaxMemory == 0 && c.Keys == 0:
		return fmt.Sprintf("cleared no key: none matched %s", c.Pattern)
	}
	return ""
}

// RequestHits is what a request-aware toxic did: how many requests
// matched it, how many it acted on (Hit; a lost_reply's are also Lost, as
// records before the HTTP toxics have them), the first line of the first
// few of those, and how many requests an HTTP toxic let through because
// they were not HTTP (docs/faults.md).
type RequestHits struct {
	Matched int64    `json:"matched"`
	Hit     int64    `json:"hit"`
	Lost    int64    `json:"lost,omitempty"`
	NotHTTP int64    `json:"not_http,omitempty"`
	First   []string `json:"first,omitempty"`
	// Kinds counts the requests it acted on by their kind (Requests).
	Kinds map[string]int64 `json:"kinds,omitempty"`
}

// Text says what the toxic did, in a line: "acted on 3 of 212 matching
// requests (first: POST /v1/charges HTTP/1.1, …)", with the requests an
// HTTP toxic let through because they were not HTTP.
func (h *RequestHits) Text() string {
	hit := max(h.Hit, h.Lost)
	s := fmt.Sprintf("acted on %d of %d matching requests", hit, h.Matched)
	if len(h.First) > 0 {
		s += " (first: " + strings.Join(h.First, ", ")
		if int64(len(h.First)) < hit {
			s += ", …"
		}
		s += ")"
	}
	if h.NotHTTP > 0 {
		s += fmt.Sprintf("; %d requests not HTTP, let through", h.NotHTTP)
	}
	return s
}

// Idle reports whether the toxic acted on no request.
func (h *RequestHits) Idle() bool { return max(h.Hit, h.Lost) == 0 }

// ExpectationResult is one promise and what was seen.
type ExpectationResult struct {
	Promise  string `json:"promise"`
	Held     bool   `json:"held"`
	Observed string `json:"observed"`
	// Window is the part of the run it looked at.
	Window string `json:"window,omitempty"`
	// Invariant names the invariant an invariant check is about (one of
	// scenarios.InvariantNames); "" for an expectation.
	Invariant string `json:"invariant,omitempty"`
	// NotChecked: the system under test could not give the facts this
	// promise needs (Needs says which), so it was not checked. It neither
	// held nor failed, and never counts as passed.
	NotChecked bool   `json:"not_checked,omitempty"`
	Needs      string `json:"needs,omitempty"`
	// Unjudged, for an invariant, says why its count was shown but not
	// judged: the books were read before they settled, or with a fault
	// still in place, and only an oversell (and dropped arrivals) can be
	// proven from such books. Held still says what the count was; an
	// unjudged check never fails a run, nor passes one.
	Unjudged string `json:"unjudged,omitempty"`
	// Examples are, for a broken invariant, the checkout ids of some of
	// its cases (at most five, the sale's first): where to start looking.
	Examples []string `json:"examples,omitempty"`
	// Checkouts is how many checkouts its cases are of: Examples names
	// the first of them. (0 in records written before 2026-12-04.)
	Checkouts int `json:"checkouts,omitempty"`
	// Leads, for a broken stock invariant that no checkout can be named
	// for (a lost unit leaves no order), are shoppers to start with: the
	// first of those whose purchase was retried, errored or went
	// unanswered while the stock fell, each with its answers
	// ("s1-4: unavailable, confirmed"). Leading is how many there were.
	Leads   []string `json:"leads,omitempty"`
	Leading int      `json:"leading,omitempty"`
}

// ExamplesText says which checkouts broke an invariant, to follow what
// was observed: "; in 2 checkouts: A, B", "; in 12 checkouts, the first
// 5: A, B, C, D, E"; "" for a result without examples.
func (r ExpectationResult) ExamplesText() string {
	ids := strings.Join(r.Examples, ", ")
	switch n := r.Checkouts; {
	case len(r.Examples) == 0 && len(r.Leads) > 0:
		first := ""
		if r.Leading > len(r.Leads) {
			first = fmt.Sprintf(", the first %d", len(r.Leads))
		}
		return fmt.Sprintf("; no checkout to name (the stock is counted, not kept per order); to start with, %d %s retried, errored or went unanswered while the stock fell%s: %s",
			r.Leading, map[bool]string{true: "shopper whose purchase was", false: "shoppers whose purchases were"}[r.Leading == 1], first, strings.Join(r.Leads, "; "))
	case len(r.Examples) == 0:
		return ""
	case n == 0: // an older record
		return "; checkout ids: " + ids
	case n == 1:
		return "; in 1 checkout: " + ids
	case n > len(r.Examples):
		return fmt.Sprintf("; in %d checkouts, the first %d: %s", n, len(r.Examples), ids)
	}
	return fmt.Sprintf("; in %d checkouts: %s", r.Checkouts, ids)
}

// LedgerSummary is the checkout's books after the run.
type LedgerSummary struct {
	Initial   int64 `json:"initial"`
	Available int64 `json:"available"`
	Reserved  int64 `json:"reserved"`
	Sold      int64 `json:"sold"`
	Orders    int   `json:"orders"`
}

// ChargeSummary is the payment provider's books after the run.
type ChargeSummary struct {
	Approved int `json:"approved"`
	Declined int `json:"declined"`
	Voided   int `json:"voided"`
}

// Add is the sum of two shops' invariants, count by count.
func (iv Invariants) Add(o Invariants) Invariants {
	iv.Oversold += o.Oversold
	iv.LostUnits += o.LostUnits
	iv.DoubleCharges += o.DoubleCharges
	iv.ChargesWithoutOrder += o.ChargesWithoutOrder
	iv.OrdersWithoutCharge += o.OrdersWithoutCharge
	iv.ChargedAfterLeaving += o.ChargedAfterLeaving
	iv.OrdersToldFailed += o.OrdersToldFailed
	iv.ConfirmedWithoutOrder += o.ConfirmedWithoutOrder
	iv.UnitsCreated += o.UnitsCreated
	iv.WrongAmounts += o.WrongAmounts
	iv.StrandedUnits += o.StrandedUnits
	iv.SoldWithoutOrder += o.SoldWithoutOrder
	iv.OrdersBeyondSold += o.OrdersBeyondSold
	iv.AcceptedNotFinished += o.AcceptedNotFinished
	iv.Dropped += o.Dropped
	return iv
}

// Add is the sum of two shops' books.
func (l LedgerSummary) Add(o LedgerSummary) LedgerSummary {
	l.Initial += o.Initial
	l.Available += o.Available
	l.Reserved += o.Reserved
	l.Sold += o.Sold
	l.Orders += o.Orders
	return l
}

// Add is the sum of two shops' charges.
func (c ChargeSummary) Add(o ChargeSummary) ChargeSummary {
	c.Approved += o.Approved
	c.Declined += o.Declined
	c.Voided += o.Voided
	return c
}

// WriteFile writes the record atomically: a reader sees the old file or
// the new one, never half of one.
func (r *Record) WriteFile(path string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode run record: %w", err)
	}
	return WriteFileAtomic(path, append(data, '\n'))
}

func WriteFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("sync %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// MaxSize is the largest run.json Read accepts. The runner's own records
// are a few hundred kilobytes even for long soaks.
const MaxSize = 256 << 20

// Read reads a run.json. Anything but a regular file, or one larger than
// MaxSize, is refused.
func Read(path string) (*Record, error) {
	data, err := inputfile.Read(path, MaxSize)
	if err != nil {
		return nil, fmt.Errorf("read run record: %w", err)
	}
	if len(data) > MaxSize {
		return nil, fmt.Errorf("read run record %s: larger than %d MiB, not a run record", path, MaxSize>>20)
	}
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("read run record %s: %w", path, err)
	}
	return &r, nil
}

// VisitsText says the visits by journey and outcome, journeys in order,
// each one's outcomes most frequent first: "browse ok 1120; cart ok 398,
// unavailable 2"; "" without visits.
func (r *Record) VisitsText() string {
	var parts []string
	for _, j := range slices.Sorted(maps.Keys(r.Visits)) {
		m := r.Visits[j]
		outs := slices.SortedFunc(maps.Keys(m), func(a, b string) int { return cmp.Or(m[b]-m[a], strings.Compare(a, b)) })
		var each []string
		for _, o := range outs {
			each = append(each, fmt.Sprintf("%s %d", o, m[o]))
		}
		parts = append(parts, j+" "+strings.Join(each, ", "))
	}
	return strings.Join(parts, "; ")
}
