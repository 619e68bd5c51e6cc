package checkoutflags

import (
	"time"

	defaults "github.com/gameday-dev/gameday/internal/checkoutdefaults"
)

// The checkout's flags ("gameday serve checkout"), one for each setting of
// checkout.Config that travels on a command line. Not here: the secrets,
// which come from the environment (a process's arguments are readable by
// every user of the machine), and what belongs to the command rather than
// to the config: -listen, -stock, -admission-key (whose files are read
// after parsing, so that no error shows a secret) and the log flags.
//
// A zero value stands for the default in every one of them (as a zero
// field of checkout.Config does) but the two required addresses.
var (
	InventoryRedis = Flag[string]{Name: "inventory-redis", Default: "127.0.0.1:6379",
		Usage: "host:port of the Redis holding stock and orders"}
	SessionRedis = Flag[string]{Name: "session-redis",
		Usage: "host:port of the Redis holding sessions (empty: every shopper is a guest)", ZeroIsDefault: true}
	PaymentURL = Flag[string]{Name: "payment-url", Default: "http://" + defaults.StandInAddr,
		Usage: "base URL of the payment provider"}

	Mode = Flag[string]{Name: "mode", Default: "reserve",
		Usage: "inventory mode: reserve, or naive (oversells on purpose)", ZeroIsDefault: true}
	LeaseTTL = Flag[time.Duration]{Name: "lease-ttl", Default: defaults.LeaseTTL,
		Usage: "how long a reservation holds its unit", ZeroIsDefault: true}
	PriceCents = Flag[int64]{Name: "price-cents", Default: defaults.PriceCents,
		Usage: "price of one unit, in cents", ZeroIsDefault: true}
	RetryAfter = Flag[time.Duration]{Name: "retry-after", Default: defaults.RetryAfter,
		Usage: "wait a refusal asks for (Retry-After)", ZeroIsDefault: true}
	MinPaymentTime = Flag[time.Duration]{Name: "min-payment-time",
		Usage: "do not start a charge with less than this left before the shopper's deadline", ZeroIsDefault: true}
	PaymentSlots = Flag[int]{Name: "payment-slots",
		Usage: "charges at the payment provider at once; the rest wait in the checkout's line, where the deadline modes skip whoever could not finish in time (0: no line)", ZeroIsDefault: true}
	PaymentAttempts = Flag[int]{Name: "payment-attempts", Default: defaults.PaymentAttempts,
		Usage: "sends of one charge when the connection fails (same idempotency key)", ZeroIsDefault: true}
	SweepInterval = Flag[time.Duration]{Name: "sweep-interval", Default: defaults.SweepInterval,
		Usage: "how often charges to void are looked for and voids retried", ZeroIsDefault: true}
	LateClaimGrace = Flag[time.Duration]{Name: "late-claim-grace",
		Usage: "how long after a lease expired a payment may still claim the unit (0: payment timeout × attempts + 1s)", ZeroIsDefault: true}

	Admission = Flag[string]{Name: "admission", Default: "none",
		Usage: "admission mode: none, queue, deadline, lottery, fair, fair-deadline or paced (see docs/admission.md)", ZeroIsDefault: true}
	AdmissionInProgress = Flag[int]{Name: "admission-in-progress",
		Usage: "checkouts a waiting room (lottery, fair, fair-deadline, paced) lets in at once", ZeroIsDefault: true}
	AdmissionTokenTTL = Flag[time.Duration]{Name: "admission-token-ttl", Default: defaults.AdmissionTokenTTL,
		Usage: "how long a fair waiting-room token stays valid after the first attempt", ZeroIsDefault: true}

	CatalogURL = Flag[string]{Name: "catalog-url",
		Usage: "base URL of the catalogue the product page's description comes from (empty: the page shows price and stock only)", ZeroIsDefault: true}
	ProductCacheTTL = Flag[time.Duration]{Name: "product-cache-ttl", Default: defaults.ProductCacheTTL,
		Usage: "how long a product's description stays in the cache (the sessions Redis)", ZeroIsDefault: true}
	CatalogTimeout = Flag[time.Duration]{Name: "catalog-timeout", Default: defaults.CatalogTimeout,
		Usage: "deadline of one request to the catalogue", ZeroIsDefault: true}
	ProductCoalesce = Flag[string]{Name: "product-coalesce",
		Usage: "on (empty: on): the cache misses of one product at the same moment wait for one catalogue request; off: each sends its own", ZeroIsDefault: true}
	ProductServeStale = Flag[string]{Name: "product-serve-stale",
		Usage: "on (empty: on): when the catalogue fails, the last description had is served, marked degraded; off: the page fails (503)", ZeroIsDefault: true}
	GuestFallback = Flag[string]{Name: "guest-fallback",
		Usage: "on (empty: on): a purchase whose session store fails goes on as a guest, marked degraded; off: it is refused (503, dependency sessions)", ZeroIsDefault: true}
)

// The catalogue stand-in's flags ("gameday serve catalog").
var (
	CatalogMinLatency = Flag[time.Duration]{Name: "min-latency", Default: defaults.CatalogMinLatency,
		Usage: "least latency of an answer"}
	CatalogMaxLatency = Flag[time.Duration]{Name: "max-latency", Default: defaults.CatalogMaxLatency,
		Usage: "most latency of an answer (drawn uniformly from the seed)"}
	CatalogCapacity = Flag[int]{Name: "capacity", Default: defaults.CatalogCapacity,
		Usage: "requests a second the catalogue takes; past it, 503 at once (0: no limit)"}
	CatalogSeed = Flag[int64]{Name: "seed", Default: 1,
		Usage: "seed of the latencies"}
)

// GuardFlags are the flags of one dependency's guard (breakers.Settings).
type GuardFlags struct {
	Timeout, ProbeTimeout Flag[time.Duration]
	Failures              Flag[uint32]
	OpenFor               Flag[time.Duration]
	MaxConcurrent         Flag[int]
}

// Guard is the flags of dep's guard (payment, inventory or sessions):
// -payment-timeout, -payment-probe-timeout and so on.
func Guard(dep string) GuardFlags {
	return GuardFlags{
		Timeout: Flag[time.Duration]{Name: dep + "-timeout", Default: defaults.Timeout(dep),
			Usage: "deadline of one " + dep + " call", ZeroIsDefault: true},
		ProbeTimeout: Flag[time.Duration]{Name: dep + "-probe-timeout",
			Usage: "deadline of a half-open probe to " + dep + " (0: " + defaults.ProbeTimeoutWords(dep) + ")", ZeroIsDefault: true},
		Failures: Flag[uint32]{Name: dep + "-failures", Default: defaults.Failures,
			Usage: "consecutive " + dep + " failures that open its breaker", ZeroIsDefault: true},
		OpenFor: Flag[time.Duration]{Name: dep + "-open-for", Default: defaults.OpenFor,
			Usage: "how long the " + dep + " breaker stays open before probing", ZeroIsDefault: true},
		MaxConcurrent: Flag[int]{Name: dep + "-max-concurrent", Default: defaults.MaxConcurrent,
			Usage: dep + " calls in flight at once (bulkhead); past it, refuse at once", ZeroIsDefault: true},
	}
}

// The payment stand-in's flags ("gameday serve payment"), one for each
// setting of payment.Config that travels on a command line; -listen and
// the log flags are the command's. A zero is a value of its own in each: a
// zero payment.Config is a provider that answers at once and approves
// every charge, not the command's defaults.
var (
	StandInMinLatency = Flag[time.Duration]{Name: "min-latency", Default: defaults.StandInMinLatency,
		Usage: "shortest processing time of a charge"}
	StandInMaxLatency = Flag[time.Duration]{Name: "max-latency", Default: defaults.StandInMaxLatency,
		Usage: "longest processing time of a charge (uniform between min and max)"}
	StandInTailProbability = Flag[float64]{Name: "tail-probability",
		Usage: "probability of an extra long-tail delay"}
	StandInTailLatency = Flag[time.Duration]{Name: "tail-latency",
		Usage: "mean of the long-tail delay (exponential)"}
	StandInDeclineRate = Flag[float64]{Name: "decline-rate", Default: defaults.StandInDeclineRate,
		Usage: "fraction of charges declined"}
	StandInSlots = Flag[int]{Name: "slots",
		Usage: "charges processed at once; the rest wait (0: no limit)"}
	StandInSeed = Flag[int64]{Name: "seed", Default: defaults.StandInSeed,
		Usage: "seed of every latency and decline draw"}
	StandInData = Flag[string]{Name: "data",
		Usage: `directory that keeps the books (charges, voids) across a kill; created if missing ("": in memory only)`}
)
