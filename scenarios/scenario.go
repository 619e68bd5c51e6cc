package scenarios

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
)

// Scenario is one drill: the environment and checkout it needs, the load, the
// fault timeline, the promises it checks and the matrix row it proves.
//
// [Parse] fills in every default named in the field comments (see
// [Scenario.SetDefaults]) and validates the result, so a parsed Scenario has
// no zero value left that stands for something else, except the ones whose
// meaning depends on other fields (Load.MaxShoppers, Breaker.ProbeTimeout).
type Scenario struct {
	// Name identifies the scenario in the catalogue, run records and the
	// matrix; lower-case words joined by '-', at most 64 characters.
	// Required.
	Name string `yaml:"name"`
	// Description says what promise the scenario checks. Optional; its
	// first line is the summary shown by "gameday list".
	Description string `yaml:"description"`
	// Matrix is the row of the resiliency matrix this scenario proves.
	// Required.
	Matrix MatrixRow `yaml:"matrix"`
	// Seed seeds the arrival schedule, shopper choices and the payment
	// stand-in. 0 means 1.
	Seed int64 `yaml:"seed"`
	// System is the system file (gameday.yaml) of the system under test,
	// relative to this scenario's file: the drill runs against that system
	// as it runs, through its description only (docs/systems.md). "" means
	// the reference checkout, in the environment below. With a system,
	// environment, checkout and payment are not used (Parse refuses them).
	System string `yaml:"system"`

	Environment Environment `yaml:"environment"`
	Checkout    Checkout    `yaml:"checkout"`
	Payment     Payment     `yaml:"payment"`
	// Stock is the number of units on sale (one SKU). Required, > 0.
	Stock int64 `yaml:"stock"`
	Load  Load  `yaml:"load"`
	// Shops make the sale one across shops (docs/pods.md): every arrival
	// is for one shop, which sells its own SKU. Empty: one shop.
	Shops []Shop `yaml:"shops"`
	// Moves move shops between pods in the middle of the sale, as a Pod
	// Mover does (docs/pods.md). Needs pods.
	Moves []Move `yaml:"moves"`

	Faults []Fault       `yaml:"faults"`
	Expect []Expectation `yaml:"expect"`
	// Invariants may allow some invariant counts above zero; every
	// invariant not listed must be zero.
	Invariants Invariants `yaml:"invariants"`
	// Abort is the abort guard; nil means none.
	Abort *Abort `yaml:"abort"`

	// File is where the scenario was read from ("catalogue:NAME" for the
	// built-in ones). Not part of the YAML.
	File string `yaml:"-"`

	// source is the YAML the scenario was parsed from, parsed the
	// scenario as Parse returned it; nil for a Scenario built in code.
	source []byte
	parsed *Scenario

	// timeScale is the -time-scale it was scaled by ([Scenario.Scaled]);
	// 0 means 1.
	timeScale float64
	// lines maps field paths ("faults[0].toxic.type") to the line they
	// were read from, so that validation errors can name it. nil for a
	// Scenario built in code.
	lines map[string]int
}

// TimeScale is the time scale the scenario was scaled by (Scaled's
// timeScale, multiplied over every scaling; 1 when never): what is the
// system file's and not the scenario's, a journey's think times, takes it
// at drill time.
func (s *Scenario) TimeScale() float64 {
	if s.timeScale == 0 {
		return 1
	}
	return s.timeScale
}

// Line returns the line a field path ("faults[0].target") was read from;
// 0 when unknown.
func (s *Scenario) Line(field string) int { return s.lines[field] }

// Source returns the YAML the scenario was parsed from, as [Parse] was
// given it: what a run directory keeps so that the run can be judged again
// (gameday judge). nil for a Scenario built in code, and for one changed
// since it was parsed (scaled, or a fault added by a program), which the
// YAML no longer says.
func (s *Scenario) Source() []byte {
	if s.source == nil || s.parsed == nil || !reflect.DeepEqual(s.bare(), s.parsed) {
		return nil
	}
	return s.source
}

// bare is a copy of s without what is not the YAML's: where it was read
// from, and what Parse keeps beside the fields.
func (s *Scenario) bare() *Scenario {
	c := *s
	c.File, c.source, c.parsed, c.lines = "", nil, nil, nil
	return &c
}

// SystemPath is System resolved against the scenario file's directory (or
// the working directory, for a catalogue scenario). A path that goes down
// only (no "..": "gameday.yaml", "systems/shop.yaml") and is not there is
// looked for in each directory above it in turn, the nearest first, up to
// the top of the scenario's git repository (the directory holding .git)
// and never past it: a scenario written with the system's path from the
// top of its repository (as gameday explore writes a finding's) finds it
// from whatever folder of the repository it is committed in. Outside a
// repository nothing is looked for.
func (s *Scenario) SystemPath() string {
	if s.System == "" || filepath.IsAbs(s.System) || strings.HasPrefix(s.File, "catalogue:") || s.File == "" {
		return s.System
	}
	here := filepath.Join(filepath.Dir(s.File), s.System)
	if _, err := os.Stat(here); err == nil || !filepath.IsLocal(s.System) {
		return here
	}
	abs, err := filepath.Abs(filepath.Dir(s.File))
	if err != nil {
		return here
	}
	// Up to the top of the scenario's git repository, and no further: a
	// file of that name elsewhere on the machine is not this system's.
	for dir := abs; ; dir = filepath.Dir(dir) {
		if p := filepath.Join(dir, s.System); dir != abs && fileExists(p) {
			return p
		}
		if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil || filepath.Dir(dir) == dir {
			return here
		}
	}
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// MatrixRow names the dependency and failure mode a scenario proves.
type MatrixRow struct {
	Dependency string `yaml:"dependency"` // a dependency's name (payment, postgres, ...), or none
	Failure    string `yaml:"failure"`    // latency, down, timeouts, reset, killed, baseline, ...
}

// Environment says where the drill runs.
type Environment struct {
	// Kind is "local" (default) or "external".
	Kind string `yaml:"kind"`
	// Pods, in a local environment, starts that many pods of the
	// reference checkout (pod-1 ... pod-N, at most 8), each with its own
	// inventory and session Redis behind its own proxies
	// (pod-2/inventory), sharing the payment stand-in, and a router that
	// sends each shop's requests to its pod from a routing table in a
	// Redis of its own (docs/pods.md). Needs shops, each on a pod. 0: one
	// checkout, no router.
	Pods int `yaml:"pods"`
	// External environment: the Toxiproxy API, the proxies' names by
	// dependency, the checkout's base URL and, optionally, the payment
	// stand-in's URL for reconciliation. Toxiproxy is "host:port" or an
	// http(s) URL; the URLs are http(s). Proxies must name a proxy for
	// every fault target. All of them must be empty in a local environment.
	Toxiproxy   string            `yaml:"toxiproxy"`
	Proxies     map[string]string `yaml:"proxies"`
	CheckoutURL string            `yaml:"checkout_url"`
	PaymentURL  string            `yaml:"payment_url"`
	// BreakerMetric, when set, reads the breakers from a Prometheus gauge
	// instead of the reference checkout's /admin/breakers: for a service
	// of your own. Transitions are then timed by the sampling (every 50ms).
	BreakerMetric *BreakerMetric `yaml:"breaker_metric"`
}

// BreakerMetric names a Prometheus gauge of breaker state.
type BreakerMetric struct {
	// URL of the Prometheus text exposition, such as
	// http://127.0.0.1:8080/metrics. Required.
	URL string `yaml:"url"`
	// Name of the gauge; default "gameday_breaker_state".
	Name string `yaml:"name"`
	// Label whose value names the dependency; default "dependency".
	Label string `yaml:"label"`
	// Values maps each gauge value to a state; default 0 closed, 1
	// half-open, 2 open (gobreaker's numbering).
	Closed   *float64 `yaml:"closed"`
	HalfOpen *float64 `yaml:"half_open"`
	Open     *float64 `yaml:"open"`
}

// Checkout is the reference checkout's settings (local environment; ignored
// in an external one, where Parse writes no defaults into them).
//
// In a local environment Parse writes the checkout's defaults into the zero
// fields, so that a run record shows what the checkout ran with and
// [Scenario.Scaled] can scale them: Mode "reserve", LeaseTTL 30s, RetryAfter
// 1s, and each Breaker's defaults (see [Breaker]). MinPaymentTime stays 0
// (only a deadline already passed stops a charge).
type Checkout struct {
	Mode           string   `yaml:"mode"` // reserve (default) or naive
	LeaseTTL       Duration `yaml:"lease_ttl"`
	RetryAfter     Duration `yaml:"retry_after"`
	MinPaymentTime Duration `yaml:"min_payment_time"`
	// Admission is how the checkout admits shoppers when more arrive than
	// payment can take (docs/admission.md).
	Admission Admission `yaml:"admission"`
	Payment   Breaker   `yaml:"payment"`
	Inventory Breaker   `yaml:"inventory"`
	Sessions  Breaker   `yaml:"sessions"`
	// Product is the product page's cache in front of the catalogue
	// (docs/checkout.md#the-product-page): its defences, each on unless
	// switched off, so that a drill can prove it notices.
	Product ProductPage `yaml:"product"`
	// GuestFallback, false, refuses a purchase whose session store fails
	// (503, dependency sessions) where the checkout would go on as a guest;
	// nil means true.
	GuestFallback *bool `yaml:"guest_fallback"`
}

// ProductPage switches the product page's defences; nil means on.
type ProductPage struct {
	// Coalesce: the misses of one product at the same moment wait for one
	// catalogue request.
	Coalesce *bool `yaml:"coalesce"`
	// ServeStale: when the catalogue fails, the last description had is
	// served, marked degraded.
	ServeStale *bool `yaml:"serve_stale"`
}

// Admission is the reference checkout's admission control under overload.
// The zero value is mode "none": today's checkout, which honours the
// shopper's deadline and has no waiting room.
//
// In the deadline modes (deadline, fair-deadline, paced) Parse sets a zero
// Checkout.MinPaymentTime to the payment stand-in's max_latency: the
// checkout skips a charge that could not finish before the shopper leaves.
type Admission struct {
	// Mode is none, queue, deadline, lottery, fair, fair-deadline or paced.
	Mode string `yaml:"mode"`
	// InProgress is how many checkouts a waiting room (lottery, fair,
	// fair-deadline, paced) lets in at once: required there, above 0; must be 0
	// in the other modes.
	InProgress int `yaml:"in_progress"`
	// TokenTTL is how long a fair waiting room's token stays valid after
	// the shopper's first attempt; 0 means the checkout's default (10m).
	// Only in the fair modes.
	TokenTTL Duration `yaml:"token_ttl"`
}

// Breaker is one dependency guard's settings; zero values mean the
// checkout's defaults, which Parse writes in (local environment): Timeout
// 2s for payment, 250ms for inventory, 100ms for sessions; Failures 5;
// OpenFor 5s; MaxConcurrent 64. ProbeTimeout stays 0, which means the
// checkout's default: half of Timeout for payment (a healthy charge must fit
// in a probe), a quarter for the Redis dependencies. A negative
// MaxConcurrent means no bulkhead.
type Breaker struct {
	Timeout       Duration `yaml:"timeout"`
	ProbeTimeout  Duration `yaml:"probe_timeout"`
	Failures      uint32   `yaml:"failures"`
	OpenFor       Duration `yaml:"open_for"`
	MaxConcurrent int      `yaml:"max_concurrent"`
	// Slots, for payment only, is how many charges the checkout lets be at
	// the provider at once; the others wait in the checkout's own line,
	// first come, first served. In the modes that honour the shopper's
	// deadline a freed slot goes only to a charge that can finish before
	// it (more than min_payment_time left); the others are answered
	// too_late as soon as they cannot. Set it to what the provider
	// processes at once (payment.slots). 0: no line.
	Slots int `yaml:"slots"`
	// Disabled makes the breaker ineffective (it never opens): used to show
	// that a drill catches a checkout without one.
	Disabled bool `yaml:"disabled"`
}

// Payment is the payment stand-in's behaviour (local environment).
//
// When MinLatency and MaxLatency are both zero Parse sets them to the
// stand-in's defaults, 100ms and 400ms. DeclineRate is taken as written: 0
// means no declines. TailProbability and DeclineRate are in [0, 1];
// MinLatency <= MaxLatency; a TailProbability above 0 needs a TailLatency.
// Slots 0 means no limit.
type Payment struct {
	MinLatency      Duration `yaml:"min_latency"`
	MaxLatency      Duration `yaml:"max_latency"`
	TailProbability float64  `yaml:"tail_probability"`
	TailLatency     Duration `yaml:"tail_latency"`
	DeclineRate     float64  `yaml:"decline_rate"`
	Slots           int      `yaml:"slots"`
}

// Load is an open-model flash sale: arrivals follow the stages whatever the
// checkout does.
type Load struct {
	// Replay, instead of Stages, takes the arrivals from a recording of a
	// real day: Parse reads it and sets Stages from it (docs/replay.md).
	Replay *Replay `yaml:"replay"`
	// Stages ramp the arrival rate linearly from the previous stage's
	// target (0 before the first) to Target over Duration, like k6's
	// ramping-arrival-rate. At least one; at least one target above 0;
	// at most 24h and 3,000,000 arrivals in all.
	Stages []Stage `yaml:"stages"`
	// Patience is how long a shopper keeps trying from the first attempt;
	// 0 means 10s.
	Patience Duration `yaml:"patience"`
	// MaxRetries bounds the attempts after the first; 0 means no retry.
	// At most 100.
	MaxRetries int `yaml:"max_retries"`
	// RetryJitter spreads each Retry-After wait uniformly over
	// [1-j, 1+j] times the wait; default 0.5. In [0, 1].
	RetryJitter *float64 `yaml:"retry_jitter"`
	// MaxShoppers bounds shoppers in flight at once (the pool, sized before
	// the sale); an arrival with no free shopper is dropped. 0 means 2 ×
	// peak rate × patience, at least 100 (see [Load.ShopperPool]). At most
	// 1,000,000.
	MaxShoppers int `yaml:"max_shoppers"`
	// SessionShare is the fraction of shoppers who have a session; 0 means
	// all of them (1). Parse sets it (nil or 0) to 1. In [0, 1].
	SessionShare *float64 `yaml:"session_share"`
	// Streams are more streams of arrivals on top of the stages, each
	// with its own mix of journeys (docs/journeys.md): the store's steady
	// browsing and carts under the flash sale the stages are. Empty: the
	// one stream of purchases.
	Streams []Stream `yaml:"streams"`
}

// Stage is one step of the arrival plan.
type Stage struct {
	Duration Duration `yaml:"duration"` // > 0
	Target   float64  `yaml:"target"`   // arrivals per second at the stage's end; >= 0
	// Hold: the rate is Target for the whole stage, from its start (k6's
	// constant-arrival-rate), instead of ramping to it from the previous
	// stage's target. A replayed recording is a run of held stages.
	Hold bool `yaml:"hold"`
}

// StartRate is the arrival rate at st's start, after a stage that ended at
// prev: prev, from which it ramps to Target, or Target for a held stage.
func (st Stage) StartRate(prev float64) float64 {
	if st.Hold {
		return st.Target
	}
	return prev
}

// Arrivals is the arrivals st plans after a stage that ended at prev: the
// area under its rate.
func (st Stage) Arrivals(prev float64) float64 {
	return (st.StartRate(prev) + st.Target) / 2 * st.Duration.D().Seconds()
}

// Fault is one entry of the fault timeline, starting At after the load starts
// and lasting For (0: until the run ends). Exactly one of Toxic, Down and
// Process is set. At is before the end of the load, and At+For no later.
//
// Process acts on the process behind Target (local environment only):
//   - "kill": SIGKILL at At, started again when the fault ends (after For;
//     For 0: at the end of the run);
//   - "pause": SIGSTOP at At, SIGCONT when the fault ends;
//   - "restart": killed and started again at once at At, like a crash under
//     a supervisor; For is the least length of the fault's window
//     ("during"), above 0: the window ends later when the process takes
//     longer to answer again.
type Fault struct {
	// Name identifies the fault in expectations and reports; unique.
	// Default "<target>-<kind>-<index>", where kind is the toxic type,
	// "down" or the process action and index the fault's position in the
	// list (from 0): "payment-latency-0".
	Name string   `yaml:"name"`
	At   Duration `yaml:"at"`
	For  Duration `yaml:"for"`
	// Target is the dependency, as the system names it (the reference
	// checkout's: payment, inventory, sessions).
	Target  string `yaml:"target"`
	Toxic   *Toxic `yaml:"toxic"`
	Down    bool   `yaml:"down"`
	Process string `yaml:"process"` // kill, pause, restart
	// Cache acts on a Redis dependency's data, not its network: keys
	// flushed or expired, or its memory limited (docs/faults.md#cache-faults).
	Cache *Cache `yaml:"cache"`
}

// Cache is a fault on the data of a dependency that speaks Redis, through
// Redis's own commands: exactly one of Flush, Expire and MaxMemory.
// Flushed and expired keys cannot be given back; a memory limit is
// restored when the fault ends.
type Cache struct {
	// Flush deletes the keys matching a pattern (Redis's glob, as SCAN
	// MATCH reads it: "product:*"); "*" is every key of the database
	// (FLUSHDB).
	Flush string `yaml:"flush"`
	// Expire gives the keys matching a pattern TTL left to live (0: they
	// go at once), as hot keys that expire together do.
	Expire string   `yaml:"expire"`
	TTL    Duration `yaml:"ttl"`
	// Every repeats a flush or an expiry through the fault's for, the
	// first at its start; 0: once.
	Every Duration `yaml:"every"`
	// MaxMemory limits the Redis's memory for the fault's length: a size
	// ("4mb": b, kb, mb, gb, in Redis's 1024s), or a share of what the
	// Redis uses when the fault starts ("90%": a cache under pressure
	// whatever its size). Policy (Redis's maxmemory-policy) goes with it
	// when given; both are put back as they were when it ends.
	MaxMemory string `yaml:"maxmemory"`
	Policy    string `yaml:"policy"`
	// ClearsBooks says the scenario means to flush or expire keys of a
	// dependency the books are read from (its system file says
	// books: true): refused without it.
	ClearsBooks bool `yaml:"clears_books"`
}

// MaxMemoryPolicies are Redis's values of maxmemory-policy.
var MaxMemoryPolicies = []string{"noeviction", "allkeys-lru", "allkeys-lfu", "allkeys-random", "volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"}

// MinMaxMemory is the least memory limit a cache fault sets: an empty
// Redis uses about a megabyte of its own, and a limit under it refuses
// every write from the start, which is not a cache under pressure but a
// Redis that is full before the drill. 0, Redis's "no limit", is refused
// with it.
const MinMaxMemory = 1 << 20

// Kinds of cache fault, as Fault.Kind names them.
const (
	KindCacheFlush  = "cache-flush"
	KindCacheExpire = "cache-expire"
	KindCacheLimit  = "cache-limit"
)

// Pattern is the keys a flush or an expiry acts on; "" for a memory
// limit.
func (c *Cache) Pattern() string {
	if c.Flush != "" {
		return c.Flush
	}
	return c.Expire
}

// Clears reports whether the fault deletes or expires keys.
func (c *Cache) Clears() bool { return c.Flush != "" || c.Expire != "" }

// MaxMemoryBytes is MaxMemory in bytes, given what the Redis uses now
// (for a share).
func (c *Cache) MaxMemoryBytes(used int64) (int64, error) {
	if pct, ok, err := c.MaxMemoryShare(); ok {
		return used * int64(pct) / 100, err
	}
	return ParseBytes(c.MaxMemory)
}

// MaxMemoryShare is a MaxMemory written as a share of what the Redis uses
// ("90%"), in percent; ok is false for a size.
func (c *Cache) MaxMemoryShare() (pct int, ok bool, err error) {
	s, ok := strings.CutSuffix(strings.TrimSpace(c.MaxMemory), "%")
	if !ok {
		return 0, false, nil
	}
	pct, err = strconv.Atoi(strings.TrimSpace(s))
	if err != nil || pct < 1 || pct > 99 {
		return 0, true, fmt.Errorf("%q: a share of what the Redis uses is a whole percentage from 1%% to 99%%", c.MaxMemory)
	}
	return pct, true, nil
}

// ParseBytes reads a size as Redis's configuration writes one: a whole
// number with an optional unit, b, kb, mb or gb (of 1024), any case.
func ParseBytes(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"gb", 1 << 30}, {"mb", 1 << 20}, {"kb", 1 << 10}, {"b", 1}} {
		if rest, ok := strings.CutSuffix(t, u.suffix); ok {
			t, mult = strings.TrimSpace(rest), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || n > (1<<50)/mult {
		return 0, fmt.Errorf("%q: want a size such as 4mb (b, kb, mb, gb)", s)
	}
	return n * mult, nil
}

// Toxic is a Toxiproxy toxic. Attributes are as Toxiproxy names them;
// durations among them are written as strings ("250ms") and sent to
// Toxiproxy as whole milliseconds (microseconds for slicer's delay), other
// attributes as whole numbers. See [Toxic.APIAttributes] for the types and
// attributes known.
type Toxic struct {
	Type string `yaml:"type"`
	// Stream is "downstream" (default: the dependency's answers) or
	// "upstream" (the requests to it).
	Stream string `yaml:"stream"`
	// Toxicity is the probability, decided once per connection, that the
	// toxic applies to it; nil means 1. In (0, 1]: Toxiproxy would read 0
	// as 1.
	Toxicity   *float64       `yaml:"toxicity"`
	Attributes map[string]any `yaml:"attributes"`
}

// Expectation is one promise, exactly one of its fields set.
type Expectation struct {
	BreakerOpens  *BreakerWithin `yaml:"breaker_opens"`
	BreakerCloses *BreakerWithin `yaml:"breaker_closes"`
	Latency       *LatencyBound  `yaml:"latency"`
	Ratio         *RatioBound    `yaml:"ratio"`
	Degraded      *DegradedSeen  `yaml:"degraded"`
	// FastRefusals is a breaker seen from outside (black-box): what users
	// see of a breaker that opens is refusals that come back fast.
	FastRefusals *FastRefusals `yaml:"fast_refusals"`
	// Metric is a promise on a PromQL expression over a window (the
	// system's prometheus server).
	Metric *MetricBound `yaml:"metric"`
	// BlastRadius promises that some shops hardly notice what happens
	// elsewhere (docs/pods.md).
	BlastRadius *BlastRadius `yaml:"blast_radius"`
	// Moved promises how a shop's move ended and how long the shop was
	// read-only.
	Moved *Moved `yaml:"moved"`
}

// FastRefusals promises, of a fault, that the share of answers that are
// fast refusals (unavailable, answered in under Below) reaches Share within
// RisesWithin of the fault's start, and, with FallsWithin, drops below it
// within FallsWithin of the fault's end and stays there for 2s (or to the
// end of the load). It is measured over 500ms slices of the answers. What
// it proves: the system stopped waiting on the sick dependency (a breaker
// opened, or a timeout shortened) and then started using it again (the
// breaker closed) — without reading any breaker.
type FastRefusals struct {
	// Fault names the fault; "" means the first.
	Fault string `yaml:"fault"`
	// Below is the time under which a refusal counts as fast; required.
	Below Duration `yaml:"below"`
	// Share is the share of answers in a slice that must be fast
	// refusals; default 0.5. In (0, 1].
	Share float64 `yaml:"share"`
	// RisesWithin is required; FallsWithin needs a fault that ends.
	RisesWithin Duration `yaml:"rises_within"`
	FallsWithin Duration `yaml:"falls_within"`
}

// MetricBound promises that a PromQL expression, sampled every second
// while the load runs, stays below Below (and/or above Above) in Window:
// every sample of the window, and at least one. The expression must give
// one value: a scalar, or a vector of one series.
//
// Counter, in place of Query, names a counter of the system file
// (counters:): read every second, its rate (the rise since the last
// reading, per second) is the value judged — "the origin took fewer than
// 20 requests a second while the cache was cold".
type MetricBound struct {
	Query   string   `yaml:"query"`
	Counter string   `yaml:"counter"`
	Window  Window   `yaml:"window"`
	Below   *float64 `yaml:"below"`
	Above   *float64 `yaml:"above"`
}

// Key is what the promise's samples are kept under: its PromQL
// expression, or CounterKey(Counter).
func (m *MetricBound) Key() string {
	if m.Counter != "" {
		return CounterKey(m.Counter)
	}
	return m.Query
}

// CounterKey is the key a counter's samples are kept under: "counter
// NAME", which no PromQL expression is (a recording rule's name may hold
// a colon, never a space between two names).
func CounterKey(name string) string { return "counter " + name }

// What names what the promise reads, for its text: the expression, or
// "the rate of NAME (a second)".
func (m *MetricBound) What() string {
	if m.Counter != "" {
		return m.Counter + " a second"
	}
	return m.Query
}

// BreakerWithin: the breaker of Dependency opens within Within of the start
// of Fault (or closes within Within of its end). Fault names a fault; ""
// means the first fault on that dependency, and Parse writes that fault's
// name in. Within > 0. For BreakerCloses the fault must end (For > 0).
// It needs breakers the system exposes (white-box); FastRefusals is the
// same promise seen from outside.
type BreakerWithin struct {
	Dependency string   `yaml:"dependency"` // the breaker's name: the dependency it guards
	Fault      string   `yaml:"fault"`
	Within     Duration `yaml:"within"`
}

// Window selects the requests an expectation looks at: "before" the first
// fault, "during" any fault, "after" the last fault ends, or "all".
//
// Parse sets an empty Window to "during" when the scenario has a fault and
// to "all" when it has none. A window must be able to hold something:
// "during" needs a fault, "before" a first fault starting after 0, "after"
// a last fault that ends before the load does.
type Window string

// The windows.
const (
	WindowBefore Window = "before"
	WindowDuring Window = "during"
	WindowAfter  Window = "after"
	WindowAll    Window = "all"
)

// LatencyBound: the Percentile of checkout request latency (from scheduled
// start) in Window stays below Below. Outcomes restricts the requests
// counted; empty means all. Percentile is in (0, 100] and required; Below >
// 0.
//
// Of "purchases" measures whole purchases instead: for each shopper that
// arrived in Window, from its scheduled arrival to its final answer (or
// its leaving), every step, retry and poll included; Outcomes then names
// final outcomes. An asynchronous checkout's polls answer fast, and only
// this says how long its shoppers waited for the verdict.
type LatencyBound struct {
	Select     `yaml:",inline"`
	Window     Window   `yaml:"window"`
	Percentile float64  `yaml:"percentile"`
	Below      Duration `yaml:"below"`
	Outcomes   []string `yaml:"outcomes"`
	Of         string   `yaml:"of"`
}

// What a LatencyBound measures.
const (
	LatencyOfRequests  = "requests" // the default
	LatencyOfPurchases = "purchases"
)

// RatioBound: among shoppers who arrived in Window, the share whose final
// outcome is one of Outcomes is at least AtLeast and at most AtMost.
// Outcomes is required; at least one bound is given, each in [0, 1], and
// AtLeast <= AtMost.
type RatioBound struct {
	Select   `yaml:",inline"`
	Window   Window   `yaml:"window"`
	Outcomes []string `yaml:"outcomes"`
	AtLeast  *float64 `yaml:"at_least"`
	AtMost   *float64 `yaml:"at_most"`
}

// DegradedSeen: at least AtLeast answers in Window were marked degraded.
// 0 means 1.
type DegradedSeen struct {
	Window  Window `yaml:"window"`
	AtLeast int    `yaml:"at_least"`
}

// Invariants lists the invariant counts allowed above zero.
type Invariants struct {
	// Allow maps an invariant (one of [InvariantNames]) to the count
	// allowed; >= 0.
	Allow map[string]int64 `yaml:"allow"`
}

// Abort stops the load and removes the faults when a condition has held
// for For; the verdict is then inconclusive.
type Abort struct {
	// ErrorRatio: the share of answers in the last second that were
	// errors or refusals exceeds this. In (0, 1]; 0 means no such
	// condition (then Metric is required).
	ErrorRatio float64 `yaml:"error_ratio"`
	// Metric: a PromQL expression (the system's prometheus server),
	// sampled every second, is above Above or below Below — a halt
	// condition on what the system's own metrics say.
	Metric *MetricBound `yaml:"metric"`
	// For is how long the condition must hold; > 0. Refusals are expected
	// during a fault, so For should outlast the planned fault and its
	// recovery: the guard is for a drill that hurts longer than planned.
	For Duration `yaml:"for"`
}
