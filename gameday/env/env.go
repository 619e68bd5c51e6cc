// Package env brings up the environment a drill runs against and gives the
// runner what it needs from it: the checkout's URL, a Toxiproxy with a proxy
// in front of every dependency, and the processes a fault may kill, pause or
// restart.
//
// Local starts everything on loopback: real redis-server processes (or an
// embedded Redis-compatible server when none is installed, and says so), an
// embedded Toxiproxy, and the payment stand-in and the checkout as child
// processes. External drills a service the user already runs: it creates
// nothing but faults.
package env

import (
	"context"
	"crypto/rand"
	"errors"

	"github.com/gameday-dev/gameday/gameday/runrecord"
	"github.com/gameday-dev/gameday/gameday/toxi"
)

// Dependencies of the checkout, as scenarios name them.
const (
	Payment   = "payment"
	Inventory = "inventory"
	Sessions  = "sessions"
	// Catalog is the catalogue stand-in the product page's cache is in
	// front of: the local environment starts one.
	Catalog = "catalog"
)

// Environment is what a drill runs against.
type Environment interface {
	// Info describes the environment for the run record.
	Info() Info
	// CheckoutURL is the checkout's base URL.
	CheckoutURL() string
	// PaymentURL is the payment provider's base URL for reconciliation
	// (its GET /charges), or "" when the environment does not know it.
	PaymentURL() string
	// AdminToken is the bearer token the reference checkout's admin API
	// wants (the system's ${GAMEDAY_ADMIN_TOKEN}), or "" when the
	// environment does not know one.
	AdminToken() string
	// Toxiproxy is the client of the Toxiproxy in front of the dependencies.
	Toxiproxy() *toxi.Client
	// ProxyName is the name of the proxy in front of a dependency.
	ProxyName(dependency string) (string, bool)
	// Process is the process behind a dependency, for process faults.
	Process(dependency string) (Process, bool)
	// Close stops everything the environment started.
	Close() error
}

// Starter brings up the environment of one drill of the reference
// checkout. The runner takes one as a value: LocalOptions (its default),
// ExternalOptions, and, from package gameday/env/docker, which a program
// links only if it wants Docker, ComposeOptions and ContainersOptions.
type Starter interface {
	// Kind names the environment as run.json does: local, external,
	// compose, containers.
	Kind() string
	// Fresh reports whether Start starts the reference checkout itself,
	// with the Spec's settings and empty books (local, containers), rather
	// than drilling one that runs anyway (external, Compose). Only a fresh
	// checkout's figures can be predicted from the scenario, and only its
	// checkout ids need not carry the time.
	Fresh() bool
	// Start brings the environment up. On error, and when ctx ends during
	// the start, everything made so far is removed again.
	Start(ctx context.Context, s Spec) (Environment, error)
}

// OwnsToxiproxy reports whether e's Toxiproxy was started with it and goes
// when it closes (it says so with an OwnToxiproxy method: local,
// containers, a described system's embedded one), so that faults on it
// need no journal. Any other Toxiproxy outlives the runner, and its faults
// are journaled: the safe default.
func OwnsToxiproxy(e Environment) bool {
	o, ok := e.(interface{ OwnToxiproxy() bool })
	return ok && o.OwnToxiproxy()
}

// Spec is what a drill asks of the environment it starts.
type Spec struct {
	// Dir is the run's directory, for the children's logs.
	Dir string
	// RunID names the run, for the labels of what it creates.
	RunID string
	// PaymentArgs and CheckoutArgs are the flags for "gameday serve
	// payment" and "gameday serve checkout" that carry the scenario's
	// settings (addresses are the environment's).
	PaymentArgs, CheckoutArgs []string
	// CatalogArgs are the flags for "gameday serve catalog" (its seed),
	// in the environments that start the catalogue stand-in (local).
	CatalogArgs []string
	// Pods, when above 0, asks for that many pods of the checkout behind
	// a router (docs/pods.md), which sends each shop to its pod by
	// Routes (shop -> pod name, "pod-1" ...). Only the local environment
	// starts pods; the others refuse them.
	Pods   int
	Routes map[string]string
	// RequestAware are the dependencies whose proxies need a relay behind
	// them: the scenario puts a request-aware toxic (lost_reply) on them.
	// The others get Toxiproxy's proxy alone, at its cost.
	RequestAware []string
}

// The environment variables the reference checkout ("gameday serve
// checkout") reads its secrets from: the admin API's token and the Redis
// password. The environments that start a checkout set them; the runner
// never puts a secret in a process's arguments.
const (
	AdminTokenVar    = "GAMEDAY_ADMIN_TOKEN"
	RedisPasswordVar = "GAMEDAY_REDIS_PASSWORD"
)

// NewAdminToken is a fresh admin token for a checkout this runner starts:
// one per environment, known to this process and the checkout only.
func NewAdminToken() string { return rand.Text() }

// Info is the environment as the run record shows it.
type Info = runrecord.Environment

// Process is a process a fault can act on.
type Process interface {
	// Kill ends it at once (SIGKILL).
	Kill() error
	// Start runs it again, on the same address (and, for Redis, the same
	// data directory).
	Start(ctx context.Context) error
	// Pause stops it (SIGSTOP); Resume continues it (SIGCONT).
	Pause() error
	Resume() error
}

// ErrNoProcess is returned for a process fault the environment cannot do.
var ErrNoProcess = errors.New("this environment has no such process")

// Redis is how gameday reaches a dependency's Redis for a cache fault:
// its address, the password it wants ("" for none), and the database the
// system keeps its keys in.
type Redis struct {
	Addr     string
	Password string
	DB       int
}

// CatalogURL is the base URL of the catalogue stand-in e started, where
// its counts are read; "" when it started none (only local does).
func CatalogURL(e Environment) string {
	c, ok := e.(interface{ CatalogURL() string })
	if !ok {
		return ""
	}
	return c.CatalogURL()
}

// RedisOf is the Redis behind dependency dep, for a cache fault, when the
// environment knows it: it says so with a RedisOf method (local: the
// inventory and sessions servers it started; a described system: a
// dependency that speaks Redis, at its upstream).
func RedisOf(e Environment, dep string) (Redis, bool) {
	r, ok := e.(interface{ RedisOf(string) (Redis, bool) })
	if !ok {
		return Redis{}, false
	}
	return r.RedisOf(dep)
}
