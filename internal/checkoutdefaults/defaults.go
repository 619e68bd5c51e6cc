// Package checkoutdefaults holds the default settings of the reference
// system, the checkout and its payment stand-in, in one place: the checkout
// applies them (checkout.Config), the flags show them (gameday serve
// checkout, gameday serve payment: package checkoutflags), a scenario
// writes them into what it ran with, and the predictor and the runner
// reckon with them. They describe the reference system, as its system file
// does; the package imports nothing, so that the runner, which depends on
// no code of the system under test (gameday/deps_test.go), may use it.
package checkoutdefaults

import "time"

// The checkout's settings when none is given.
const (
	// LeaseTTL is how long a reservation holds its unit.
	LeaseTTL = 30 * time.Second
	// RetryAfter is what a refusal tells the shopper to wait.
	RetryAfter = time.Second
	// PriceCents is the price of one unit.
	PriceCents = 1299
	// PaymentAttempts is how many times one checkout sends its charge when
	// the connection fails.
	PaymentAttempts = 2
	// SweepInterval is how often the checkout looks for charges to void.
	SweepInterval = time.Second
	// SessionTTL is how long a session lives.
	SessionTTL = 30 * time.Minute
	// AdmissionTokenTTL is how long a fair waiting-room token stays valid
	// after the shopper's first attempt. (Package admission applies its
	// own 10m to a zero TokenTTL: TestFlagDefaultsAreTheCheckouts keeps
	// the two the same.)
	AdmissionTokenTTL = 10 * time.Minute
	// ProductCacheTTL is how long a product's description stays in the
	// cache.
	ProductCacheTTL = 30 * time.Second
	// CatalogTimeout is the deadline of one request to the catalogue.
	CatalogTimeout = time.Second
)

// The catalogue stand-in's settings when none is given ("gameday serve
// catalog"): an origin slower than its cache, with a capacity a cache
// that is cleared at once would exceed.
const (
	CatalogMinLatency = 80 * time.Millisecond
	CatalogMaxLatency = 160 * time.Millisecond
	CatalogCapacity   = 20
	CatalogAddr       = "127.0.0.1:8092"
)

// The payment stand-in's settings when none is given: what "gameday serve
// payment" runs with, and what a scenario's payment section gets when it
// sets neither latency. (payment.Config's zero value is another provider,
// one that answers at once and approves every charge; a scenario's
// decline_rate is taken as written, 0 meaning no declines.)
const (
	// StandInAddr is where the stand-in listens, and so where the checkout
	// looks for its payment provider.
	StandInAddr = "127.0.0.1:8081"
	// StandInMinLatency and StandInMaxLatency bound a charge's processing
	// time, drawn uniformly between them.
	StandInMinLatency = 100 * time.Millisecond
	StandInMaxLatency = 400 * time.Millisecond
	// StandInDeclineRate is the fraction of charges declined.
	StandInDeclineRate = 0.05
	// StandInSeed seeds every latency and decline draw.
	StandInSeed = 1
)

// Each dependency guard's defaults: a timeout of its own, and the breaker
// and bulkhead defaults the checkout leaves to package breakers (its
// DefaultFailures, DefaultOpenFor, DefaultMaxConcurrent;
// TestScenarioDefaultsAreTheCheckouts keeps the two the same).
const (
	PaymentTimeout   = 2 * time.Second
	InventoryTimeout = 250 * time.Millisecond
	SessionsTimeout  = 100 * time.Millisecond

	Failures      = 5
	OpenFor       = 5 * time.Second
	MaxConcurrent = 64
)

// Timeout is the default timeout of the guard of dep (payment, inventory
// or sessions); 0 for another name.
func Timeout(dep string) time.Duration {
	switch dep {
	case "payment":
		return PaymentTimeout
	case "inventory":
		return InventoryTimeout
	case "sessions":
		return SessionsTimeout
	}
	return 0
}

// ProbeTimeout is the default deadline of a half-open probe to dep, given
// its guard's timeout: half of it for payment (a healthy charge must fit in
// a probe, or the breaker stays open after the provider is back), a quarter
// for the Redis dependencies, at least a millisecond (breakers' own
// default, ProbeTimeoutFor).
func ProbeTimeout(dep string, timeout time.Duration) time.Duration {
	if dep == "payment" {
		return timeout / 2
	}
	return max(timeout/4, time.Millisecond)
}

// ProbeTimeoutWords says ProbeTimeout in words, for flag help and docs.
func ProbeTimeoutWords(dep string) string {
	if dep == "payment" {
		return "half the timeout"
	}
	return "a quarter of the timeout"
}
