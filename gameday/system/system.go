// Package system is the description of a system under test: the contract
// between gameday's runner and a checkout it did not write. A system file
// (gameday.yaml) says how to make a purchase (one or more HTTP calls built
// from templates), how to read each answer into a shopper's outcome, which
// dependencies sit behind Toxiproxy and how to act on their processes, how
// to set up a drill and read the books after it from the real stores (SQL,
// Redis, HTTP, a command), and where the breakers and metrics can be read.
//
// The runner depends on this description only. The reference checkout is
// one described system (Reference); a team's Rails app on Postgres or Node
// service on MySQL is another. docs/systems.md is the user's guide.
package system

import (
	"errors"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	_ "time/tzdata" // books.charges.zone names a zone on any machine, a Pi's static binary included

	"go.yaml.in/yaml/v3"

	"github.com/gameday-dev/gameday/internal/strictyaml"
	"github.com/gameday-dev/gameday/scenarios"
)

// System is one described system under test. [Parse] fills in the
// defaults named in the field comments and validates the whole file
// before anything acts on it.
type System struct {
	// Name identifies the system in reports; lower-case words joined by
	// '-'. Required.
	Name string `yaml:"name"`
	// Description is free text for the reader of the file.
	Description string `yaml:"description"`
	// BaseURL is where the checkout answers (http or https). A step's url
	// is relative to it unless absolute. Required.
	BaseURL string `yaml:"base_url"`
	// SKU is the product on sale: {{.SKU}} in templates. Required.
	SKU string `yaml:"sku"`
	// Purchase is how a shopper buys. Required.
	Purchase Purchase `yaml:"purchase"`
	// Journeys are what shoppers do that is not buying (browse product
	// pages, fill a cart), by name: steps built as the purchase's, whose
	// answers mean ok, unavailable, retry_later, error or next. A
	// scenario's streams mix them with the purchase (docs/journeys.md).
	// They never touch the books.
	Journeys map[string]*Journey `yaml:"journeys"`

	// Toxiproxy is the API address (host:port or an http URL) of a
	// Toxiproxy that already runs in front of the dependencies; "" means
	// gameday starts one of its own for the drill, which then creates the
	// proxies (each dependency needs listen and upstream).
	Toxiproxy string `yaml:"toxiproxy"`
	// Dependencies are what faults act on, by the user's names: each a
	// TCP address behind a Toxiproxy proxy, and optionally a process.
	Dependencies map[string]*Dependency `yaml:"dependencies"`

	// Stores are the places the books are read from (and, when Setup asks
	// for it, written to), by name.
	Stores map[string]*Store `yaml:"stores"`
	// Setup runs in order before each drill, after every store was
	// reached: only what is listed here is ever written to a store.
	Setup []*Action `yaml:"setup"`
	// Books are the facts the oracles read: stock, orders, charges, and
	// when the books are final. Each is optional; an oracle whose facts are
	// missing is reported "not checked", never "passed".
	Books Books `yaml:"books"`
	// Counters are figures the system counts up that a scenario's
	// promises may name (metric: {counter: NAME}), each read as one number
	// every second while the load runs and judged as its rate: an
	// origin's requests behind a cache, say. Each gives a single value
	// (json: for an HTTP answer).
	Counters map[string]*Query `yaml:"counters"`

	// Breakers, when set, says where the breakers' states can be read
	// (white-box). Without it, promise what users see instead: fast
	// refusals (black-box; docs/systems.md).
	Breakers *Breakers `yaml:"breakers"`
	// Prometheus is the base URL of a Prometheus server, for PromQL
	// promises and halt conditions and breakers.promql.
	Prometheus string `yaml:"prometheus"`
	// Admin is the base URL of a service that speaks gameday's admin
	// protocol (the reference checkout does): GET /admin/breakers (breaker
	// transitions with exact times) and GET /admin/admission (the most
	// checkouts in progress at once). Optional. It may instead name an
	// http store, whose URL and headers (a token) are then used.
	Admin string `yaml:"admin"`

	// Pods, when set, makes this a system of pods (docs/pods.md): the file
	// describes one pod, with ${NAME} for what differs from pod to pod,
	// and Pods gives each pod's values by pod name (pod-1: {CHECKOUT_URL:
	// ..., POD: pod-1}). Purchases go to base_url, the system's router,
	// the same for every pod; each pod's copy has its own stores, setup
	// and books, and its dependencies are named POD/NAME (pod-2/inventory)
	// unless every pod has the very same one (a payment provider they
	// share).
	Pods map[string]map[string]string `yaml:"pods"`

	// File is where the system was read from ("reference" for the
	// built-in one). Not part of the YAML.
	File string `yaml:"-"`

	// lines maps field paths to the line they were read from.
	lines map[string]int
	// source is what the system was parsed from.
	source Source
	// compiled holds the templates and matchers, made by Parse.
	compiled *compiled
	// pods are the pods' copies, by name; nil without pods.
	pods map[string]*System
}

// Purchase is how a shopper buys: one request, or several in order, each
// step's answer read by its rules.
type Purchase struct {
	// Steps are the requests of one purchase, in order. At least one; a
	// step's rule with outcome "next" goes on to the following step.
	Steps []*Step `yaml:"steps"`
}

// Journey is one journey that is not the purchase.
type Journey struct {
	// Steps are its requests, in order, as a purchase's; a step's think is
	// the pause before it (the visitor reads the page before).
	Steps []*Step `yaml:"steps"`
	// Buy is the share of the journey's visitors who go on to buy (a
	// funnel), in [0, 1]; 0: none. Such a visitor's purchase arrives at
	// its own arrival plus the journey's think times.
	Buy float64 `yaml:"buy"`
}

// Step is one request of a purchase and how to read its answer.
type Step struct {
	// Name names the step in reports and in the idempotency key; default
	// "step-N" (from 1). Lower-case words joined by '-'.
	Name string `yaml:"name"`
	// Method is the HTTP method; default POST (GET in a journey).
	Method string `yaml:"method"`
	// Think, in a journey, is the pause before this step: the visitor
	// reading the previous page. 0: none. Not in the purchase's steps.
	Think Duration `yaml:"think"`
	// URL is a template: a path relative to base_url ("/checkout"), or an
	// absolute http(s) URL. Required.
	URL string `yaml:"url"`
	// Headers are templates; a header whose value renders empty is not
	// sent (a token not yet given, say).
	Headers map[string]string `yaml:"headers"`
	// Body is a template; "" sends no body.
	Body string `yaml:"body"`
	// Keep names values to keep from this step's answers for the rest of
	// the shopper's purchase: later steps, and later attempts of this one
	// ({{.Kept.NAME}}). A value is kept from any answer that has it.
	Keep map[string]*Extract `yaml:"keep"`
	// Answers read an answer into an outcome: the first rule that matches
	// wins; an answer no rule matches is an error, and the report shows a
	// sample of it. Required.
	Answers []*Rule `yaml:"answers"`
	// RetryAfter is where the wait before coming back is read, first found
	// first; default the Retry-After header (seconds or an HTTP date). An
	// unavailable or retry_later answer with no wait ends the shopper's
	// purchase unavailable: list {after: 1s} last for an API that asks
	// shoppers to come back without saying when.
	RetryAfter []*Extract `yaml:"retry_after"`
	// Reason, when set, reads a short word saying why an answer refused
	// (the reference checkout's "reason" field), for the attempts file and
	// the flash-sale figures.
	Reason *Extract `yaml:"reason"`
	// Degraded, when set, marks an answer as degraded (served, but with a
	// fallback), for "degraded" promises.
	Degraded *Match `yaml:"degraded"`
}

// Extract reads one value from an answer: a header, or a field of a JSON
// body (a GJSON path: "order.id", "errors.0.code"; see
// https://github.com/tidwall/gjson/blob/master/SYNTAX.md), or in
// retry_after a fixed wait (after). Exactly one.
type Extract struct {
	Header string `yaml:"header"`
	JSON   string `yaml:"json"`
	// After is a fixed wait, in retry_after only: the wait when no source
	// before it in the list gives one.
	After Duration `yaml:"after"`
	// Unit is how a number read for retry_after counts: "ms" (default for
	// json) or "s" (default for a header).
	Unit string `yaml:"unit"`
}

// Match is a condition on an answer. Every condition given must hold; a
// Match with none matches every answer.
type Match struct {
	// Status is the HTTP status: 201, a class "4xx", or a list of them.
	Status *StatusSet `yaml:"status"`
	// JSON maps GJSON paths to the value wanted there (a string, number or
	// boolean, compared as JSON would), all of them.
	JSON map[string]any `yaml:"json"`
	// BodyContains is a substring of the body.
	BodyContains string `yaml:"body_contains"`
	// BodyMatches is a regular expression (RE2) the body matches.
	BodyMatches string `yaml:"body_matches"`
	// Header maps header names to a regular expression (RE2) the header's
	// value matches; a missing header matches nothing.
	Header map[string]string `yaml:"header"`
}

// Rule is a Match and the outcome it means.
type Rule struct {
	Match
	// Outcome is what the answer means to the shopper: confirmed,
	// declined, sold_out, too_late (final); unavailable (refused: come back
	// after Retry-After while retries and patience last); retry_later (the
	// same purchase is in progress or pending: come back likewise); error
	// (final); or next (go on to the next step). Required.
	Outcome string `yaml:"outcome"`
}

// Dependency is a dependency of the system, by the user's name.
type Dependency struct {
	// Proxy is the proxy's name on Toxiproxy; default the dependency's
	// name. none makes the dependency a process alone (Proxied).
	Proxy string `yaml:"proxy"`
	// Listen is the address the system under test connects to (the proxy
	// listens there), Upstream the real server's. Both are required when
	// gameday runs its own Toxiproxy; with an existing one, a proxy that
	// does not exist yet is created from them, and one that exists is used
	// as it is.
	Listen   string `yaml:"listen"`
	Upstream string `yaml:"upstream"`
	// Process, when set, is how process faults (kill, pause, restart) act
	// on the dependency.
	Process *Process `yaml:"process"`
	// Protocol, when set, is what the checkout speaks to the dependency
	// through the proxy (Protocols): the HTTP toxics read plain HTTP only,
	// so a scenario puts none on a dependency that speaks anything else,
	// and a search draws none there. "" is not known: anything may be put
	// on it.
	Protocol string `yaml:"protocol"`
	// Books says the books are read from this dependency's data (the
	// reference checkout's ledger lives in its inventory Redis, read over
	// its admin API): a cache fault that flushes or expires its keys is
	// refused unless the scenario says it means it. A dependency whose
	// upstream is the address of a Redis store the books read is one
	// without saying so.
	Books bool `yaml:"books"`
	// Password is what a cache fault sends Redis (AUTH) when it reaches
	// the dependency at its upstream; write it as ${NAME}, from the
	// environment. "" sends none. Database is the Redis database the
	// system keeps its keys in (SELECT), which a flush or an expiry acts
	// on; default 0.
	Password string `yaml:"password"`
	Database int    `yaml:"database"`

	// alone: the file says proxy: none (a dependency named none is
	// proxied like any other).
	alone bool
}

// NoProxy is the value of Dependency.Proxy for a process alone.
const NoProxy = "none"

// Proxied reports whether the dependency has a proxy in front of it: all
// but a process alone (proxy: none), a process with no network address
// (a queue worker), on which only process faults act.
func (d *Dependency) Proxied() bool { return !d.alone }

// Protocols are the values of Dependency.Protocol: tcp is any other.
var Protocols = []string{"http", "https", "redis", "postgres", "mysql", "tcp"}

// SpeaksHTTP reports whether the HTTP toxics can read what the checkout
// sends the dependency: its protocol is http, or not given.
func (d *Dependency) SpeaksHTTP() bool { return d.Protocol == "" || d.Protocol == "http" }

// HoldsBooks reports whether the books are read from dependency dep's
// data: its file says books: true, or a Redis store the books read is at
// its upstream.
func (s *System) HoldsBooks(dep string) bool {
	d, ok := s.Dependencies[dep]
	if !ok {
		return false
	}
	if d.Books {
		return true
	}
	if d.Upstream == "" {
		return false
	}
	for _, name := range s.Books.Stores() {
		if st, ok := s.Stores[name]; ok && st.Redis != "" && sameAddr(redisHostPort(st.Redis), d.Upstream) {
			return true
		}
	}
	return false
}

// redisHostPort is the host:port of a Redis store's address (host:port,
// or a redis:// URL).
func redisHostPort(addr string) string {
	if u, err := url.Parse(addr); err == nil && (u.Scheme == "redis" || u.Scheme == "rediss") {
		return u.Host
	}
	return addr
}

// sameAddr reports whether two host:port addresses are one, loopback's
// names taken as one host (localhost, 127.0.0.1, ::1).
func sameAddr(a, b string) bool {
	ha, pa, errA := net.SplitHostPort(a)
	hb, pb, errB := net.SplitHostPort(b)
	if errA != nil || errB != nil {
		return a == b
	}
	loop := func(h string) string {
		if h == "localhost" || h == "::1" || h == "127.0.0.1" {
			return "loopback"
		}
		return h
	}
	return pa == pb && loop(ha) == loop(hb)
}

// Process is a handle on a dependency's process: exactly one of
// Container, Systemd, Command and PIDFile. Every action is bounded by
// Timeout, and none goes through a shell.
type Process struct {
	// Container is a Docker container's name or id.
	Container string `yaml:"container"`
	// Systemd is a systemd unit: kill is "systemctl kill -s SIGKILL",
	// start "systemctl start", pause and resume SIGSTOP and SIGCONT.
	Systemd string `yaml:"systemd"`
	// Command gives a program (argv, no shell) for each action; an action
	// without one cannot be drilled.
	Command *Commands `yaml:"command"`
	// PIDFile is a file holding the process's pid: kill, pause and resume
	// send SIGKILL, SIGSTOP and SIGCONT; Start, required with it, starts
	// the process again.
	PIDFile string   `yaml:"pid_file"`
	Start   []string `yaml:"start"`
	// Ready is a URL ("gameday health" speaks http, https, tcp and redis)
	// that answers once a restarted process is back; default
	// tcp://UPSTREAM.
	Ready string `yaml:"ready"`
	// Timeout bounds each action and the wait for Ready; default 30s.
	Timeout Duration `yaml:"timeout"`
}

// Can reports whether the handle can carry out a process fault's action:
// "kill" and "restart" need a way to kill the process and to start it
// again, "pause" a way to stop it and to let it go on. A container, a
// systemd unit and a pid file (with its start) can do all three; a
// command handle what its programs say.
func (p *Process) Can(action string) bool {
	if p == nil {
		return false
	}
	switch action {
	case "kill", "restart":
		if c := p.Command; c != nil {
			return len(c.Kill) > 0 && len(c.Start) > 0
		}
		return p.Container != "" || p.Systemd != "" || (p.PIDFile != "" && len(p.Start) > 0)
	case "pause":
		if c := p.Command; c != nil {
			return len(c.Pause) > 0 && len(c.Resume) > 0
		}
		return p.Container != "" || p.Systemd != "" || p.PIDFile != ""
	}
	return false
}

// Commands are the programs of a command process handle.
type Commands struct {
	Kill   []string `yaml:"kill"`
	Start  []string `yaml:"start"`
	Pause  []string `yaml:"pause"`
	Resume []string `yaml:"resume"`
}

// Store is a place the books live: exactly one of its fields.
type Store struct {
	// Postgres is a connection string (URL or key=value), opened with pgx.
	Postgres string `yaml:"postgres"`
	// MySQL is a go-sql-driver/mysql DSN (user:pass@tcp(host:port)/db).
	MySQL string `yaml:"mysql"`
	// Redis is host:port or a redis:// URL (with password and database).
	Redis string `yaml:"redis"`
	// HTTP is a base URL.
	HTTP string `yaml:"http"`
	// Headers, for an http store only, go with every request to it (an
	// admin API's Authorization, say); one whose value is empty is not
	// sent. ${NAME} takes a secret from the environment.
	Headers map[string]string `yaml:"headers"`
}

// AdminEndpoint is where gameday's admin protocol is spoken: the base URL
// and the headers every admin request carries. base is "" when the system
// has no Admin.
func (s *System) AdminEndpoint() (base string, h http.Header) {
	if s.Admin == "" {
		return "", nil
	}
	if st, ok := s.Stores[s.Admin]; ok && !strings.Contains(s.Admin, "://") {
		return strings.TrimRight(st.HTTP, "/"), st.Header()
	}
	return strings.TrimRight(s.Admin, "/"), http.Header{}
}

// Header is the store's headers as a request carries them.
func (st *Store) Header() http.Header {
	h := http.Header{}
	for k, v := range st.Headers {
		if v != "" {
			h.Set(k, v)
		}
	}
	return h
}

// Action is one setup step: a statement or command run before the load.
type Action struct {
	Query
	// Expect is the HTTP status an http action must answer; default any
	// 2xx.
	Expect int `yaml:"expect"`
	// RetryWithin, when set, asks again every second while the action
	// fails, for at most this long (at most 10m): a service that refuses
	// to start afresh while a previous drill's money work is open (the
	// reference checkout answers 409 until its voids are done) is given
	// the time to finish it. The last failure stops the drill.
	RetryWithin Duration `yaml:"retry_within"`
}

// Query asks a store a question (or, in setup, tells it something): one
// of SQL, Redis, HTTP and Command. Templates may use {{.SKU}},
// {{.Stock}} (the scenario's stock) and {{.Run}} (the run's id prefix).
type Query struct {
	// Store names the store; required except for Command.
	Store string `yaml:"store"`
	// SQL is a statement, with Args bound as its parameters ($1 for
	// Postgres, ? for MySQL).
	SQL  string   `yaml:"sql"`
	Args []string `yaml:"args"`
	// Redis is a command, one word per element: [GET, "stock:{{.SKU}}"].
	Redis []string `yaml:"redis"`
	// HTTP asks an http store.
	HTTP *HTTPQuery `yaml:"http"`
	// Command runs a program (argv, no shell) and reads its output.
	Command []string `yaml:"command"`
	// JSON, for a single value read from an HTTP answer or a command's
	// output, is the GJSON path to it; "" takes the whole output.
	JSON string `yaml:"json"`
	// Items, for rows read from JSON, is the GJSON path to the list.
	Items string `yaml:"items"`
	// Fields, for rows, maps a column to the GJSON path of its value in
	// each item (or in each Redis hash value); a column without one is
	// read from the item's field of the same name.
	Fields map[string]*Field `yaml:"fields"`
	// Timeout bounds the query; default 10s.
	Timeout Duration `yaml:"timeout"`
}

// HTTPQuery is a request to an http store.
type HTTPQuery struct {
	Method string `yaml:"method"` // default GET
	Path   string `yaml:"path"`   // template, relative to the store's URL
	Body   string `yaml:"body"`   // template
	// Headers are templates, as a step's.
	Headers map[string]string `yaml:"headers"`
}

// Field is where a column's value is read from: a GJSON path, and
// optionally a regular expression whose first group is the value
// ("^(.*)/[0-9]+$" takes "co-7" out of "co-7/1").
type Field struct {
	JSON  string `yaml:"json"`
	Regex string `yaml:"regex"`
}

// Books are the facts the oracles read after a drill.
type Books struct {
	// Stock is the units for sale of the SKU.
	Stock *Stock `yaml:"stock"`
	// Orders lists the orders: one row each, with the column checkout_id
	// (the id the runner sent: {{.CheckoutID}}) and optionally charge (the
	// charge it was paid with, as charges' id) and units (default 1).
	Orders *Query `yaml:"orders"`
	// Charges lists the charges the provider holds: one row each, with
	// checkout_id, status, and optionally id and created_at (RFC 3339, or
	// Unix seconds or milliseconds).
	Charges *Charges `yaml:"charges"`
	// Settled reads whether the books are final: true, or the number 0
	// (nothing left to settle: holds, voids, refunds). The runner asks
	// every 200ms until it is, for at most SettleWithin, then reads the
	// books (and says so if they never settled). Without it the books are
	// read SettleAfter after the load ends.
	Settled *Query `yaml:"settled"`
	// SettleWithin bounds the wait for Settled; default 30s.
	SettleWithin Duration `yaml:"settle_within"`
	// SettleAfter is a fixed wait before the books are read, for a system
	// that settles in the background and cannot say when it is done;
	// default 0.
	SettleAfter Duration `yaml:"settle_after"`
	// Price is what one unit of the SKU costs, in the unit of the books'
	// amounts ("1299", or "12.99"): with it, wrong_amounts holds every
	// approved charge to the price times its order's units, so a price
	// wrong on both sides (an order that records what was charged) is
	// caught too. "" when not given.
	Price Price `yaml:"price"`
}

// Price is a price as written: a number (1299, 12.99) or a string of one;
// validation holds it to a positive number.
type Price string

// UnmarshalYAML takes a scalar, number or string, as it is written, so
// that 12.90 keeps its digits.
func (p *Price) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return errors.New("want a number, such as 1299 or 12.99")
	}
	*p = Price(n.Value)
	return nil
}

// PriceOf is b's price as an exact decimal; nil when not given (or not
// a number, which validation refuses).
func (b Books) PriceOf() *big.Rat {
	if b.Price == "" || strings.Contains(string(b.Price), "/") {
		return nil
	}
	r, ok := new(big.Rat).SetString(strings.TrimSpace(string(b.Price)))
	if !ok {
		return nil
	}
	return r
}

// Stores names the stores the books are read from, each once.
func (b Books) Stores() []string {
	var out []string
	add := func(q *Query) {
		if q != nil && q.Store != "" && !slices.Contains(out, q.Store) {
			out = append(out, q.Store)
		}
	}
	if st := b.Stock; st != nil {
		add(st.Available)
		add(st.Initial)
		add(st.Reserved)
		add(st.Sold)
	}
	add(b.Orders)
	if b.Charges != nil {
		add(&b.Charges.Query)
	}
	add(b.Settled)
	return out
}

// Stock reads the units of the SKU. Each is a number.
type Stock struct {
	// Available is the units still for sale. Read before the load and
	// after the books settle.
	Available *Query `yaml:"available"`
	// Initial is the units the sale started with; default Available read
	// before the load (after Setup).
	Initial *Query `yaml:"initial"`
	// Reserved is the units held by purchases not yet finished; default 0.
	Reserved *Query `yaml:"reserved"`
	// Sold is the units sold; default the units of this run's orders.
	Sold *Query `yaml:"sold"`
}

// Charges is the charges query and how to read their statuses.
type Charges struct {
	Query
	// Statuses maps each of approved, declined and voided to the words the
	// provider uses for it; default each to itself. An approved charge
	// moved money; a charge of this run whose status is not listed stops
	// the run (error): it cannot be judged.
	Statuses map[string][]string `yaml:"statuses"`
	// Zone is the time zone a created_at without one is in: "UTC", or a
	// zone's name ("Europe/Berlin"). Without it such a created_at stops
	// the run (error): read in the wrong zone, a charge shifts by hours,
	// and charged_after_leaving judges on that.
	Zone string `yaml:"zone"`
}

// Location is the zone of c's created_at without one; nil when none is
// given (validate has refused a name that is not a zone).
func (c *Charges) Location() *time.Location {
	if c == nil || c.Zone == "" {
		return nil
	}
	loc, err := time.LoadLocation(c.Zone)
	if err != nil {
		return nil
	}
	return loc
}

// Breakers says where the breakers' states can be read: one of Metric and
// PromQL (the admin protocol, when the system has Admin, is read without
// this).
type Breakers struct {
	// Metric reads a gauge from a Prometheus text exposition.
	Metric *Metric `yaml:"metric"`
	// PromQL reads a query from the Prometheus server (System.Prometheus).
	PromQL *PromQL `yaml:"promql"`
}

// Metric is a gauge of breaker state in a Prometheus exposition: the same
// settings, read the same way, as a scenario's breaker_metric.
type Metric = scenarios.BreakerMetric

// PromQL is a query whose series give each breaker's state.
type PromQL struct {
	Query    string   `yaml:"query"`
	Label    string   `yaml:"label"`
	Closed   *float64 `yaml:"closed"`
	HalfOpen *float64 `yaml:"half_open"`
	Open     *float64 `yaml:"open"`
}

// Duration is a time.Duration written as a string ("250ms"), never a
// bare number.
type Duration = strictyaml.Duration

// Source is what a System was parsed from: its file's name and bytes and
// the value every ${NAME} in it was given, whether from the caller's
// variables, the environment or a default. Parse(File, Data, Vars) gives
// the same system on any machine, whatever its environment: a load
// shard's worker builds the coordinator's system from it (docs/scale.md).
// Vars may hold secrets (the admin token): it is sent only to workers
// that hold the run's token, never on a command line.
type Source struct {
	File string            `json:"file"`
	Data []byte            `json:"data"`
	Vars map[string]string `json:"vars,omitempty"`
}

// Source is what s was parsed from.
func (s *System) Source() Source { return s.source }
