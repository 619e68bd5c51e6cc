package scenarios

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"net"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Names a scenario may use.
var (
	// outcomes are a shopper's possible final outcomes.
	outcomes = []string{"confirmed", "declined", "sold_out", "too_late", "gave_up", "unavailable", "error", "ok"}
	// answerOutcomes are what a latency promise may filter requests by:
	// the final outcomes and what an answer alone may mean.
	answerOutcomes = append(slices.Clone(outcomes), "retry_later", "next")
	// invariants are the counts reconciled after every run.
	invariants = []string{"oversold", "lost_units", "double_charges", "charges_without_order", "orders_without_charge", "charged_after_leaving", "orders_told_failed", "confirmed_without_order", "units_created", "wrong_amounts", "stranded_units", "sold_without_order", "orders_beyond_sold", "accepted_not_finished", "dropped"}
	processes  = []string{"kill", "pause", "restart"}
	// AdmissionModes are the reference checkout's admission modes
	// (checkout/admission), as a scenario spells them.
	AdmissionModes = []string{"none", "queue", "deadline", "lottery", "fair", "fair-deadline", "paced"}
	windows        = []Window{WindowBefore, WindowDuring, WindowAfter, WindowAll}

	nameRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	// depRE is a dependency's name, as a system file may give it.
	// A pod's dependency is the pod's name, '/' and the dependency's:
	// pod-2/inventory.
	depRE   = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*(/[a-z0-9][a-z0-9_-]*)?$`)
	tokenRE = regexp.MustCompile(`^[a-z0-9]+([-_][a-z0-9]+)*$`)
)

// Bounds on the plan, far above any drill, so that a typo cannot make the
// runner plan a sale of days or of billions of shoppers. The last three are
// the load generator's own limits (gameday/load: ArrivalLimit, RetryLimit,
// PoolLimit), checked here too so that a file that validates can run.
const (
	maxLoad     = 24 * time.Hour
	maxArrivals = 3_000_000
	maxRetries  = 100
	maxShoppers = 1_000_000
)

// plannedArrivals is the number of arrivals the stages plan: the area under
// the rate, which ramps linearly within each stage or holds.
func (l Load) plannedArrivals() float64 {
	n, prev := 0.0, 0.0
	for _, st := range l.Stages {
		n += st.Arrivals(prev)
		prev = st.Target
	}
	return n
}

// OutcomeNames returns the outcomes an expectation may name: every final
// outcome a shopper can have.
func OutcomeNames() []string { return slices.Clone(outcomes) }

// InvariantNames returns the invariants that Invariants.Allow may name.
func InvariantNames() []string { return slices.Clone(invariants) }

// Validate reports every problem with the scenario, each an *Error naming
// the field and, for a parsed scenario, the line; several are joined with
// errors.Join, in the order of their lines. It expects the defaults to be
// set ([Scenario.SetDefaults]) but accepts the zero values they replace.
func (s *Scenario) Validate() error {
	v := &validator{s: s}
	v.top()
	v.environment()
	if s.Environment.Kind != "external" {
		v.checkout()
		v.payment()
	}
	v.load()
	v.shops()
	v.faults()
	v.expectations()
	v.invariants()
	v.abort()
	return joinSorted(v.errs)
}

type validator struct {
	s    *Scenario
	errs []*Error
}

// line returns the line of path, or of its nearest ancestor that was read
// from the file; 0 for a Scenario built in code.
func (s *Scenario) line(path string) int {
	for {
		if l, ok := s.lines[path]; ok {
			return l
		}
		if path == "" {
			return 0
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			path = ""
		} else {
			path = path[:i]
		}
	}
}

func (v *validator) add(path, format string, args ...any) {
	v.errs = append(v.errs, &Error{File: v.s.File, Line: v.s.line(path), Field: clipField(path), Msg: fmt.Sprintf(format, args...)})
}

func (v *validator) oneOf(path, got string, want []string) {
	if !slices.Contains(want, got) {
		if got == "" {
			v.add(path, "required: one of %s", strings.Join(want, ", "))
			return
		}
		v.add(path, "%s is not one of %s", clip(got), strings.Join(want, ", "))
	}
}

func (v *validator) fraction(path string, f float64) {
	if !(f >= 0 && f <= 1) {
		v.add(path, "%g is not between 0 and 1", f)
	}
}

func (v *validator) nonNegative(path string, d Duration) {
	if d < 0 {
		v.add(path, "%s is negative", d)
	}
}

func (v *validator) top() {
	s := v.s
	switch {
	case s.Name == "":
		v.add("name", "required: lower-case words joined by '-', such as payment-latency")
	case len(s.Name) > 64 || !nameRE.MatchString(s.Name):
		v.add("name", "%s: want lower-case words joined by '-' (at most 64 characters), such as payment-latency", clip(s.Name))
	}
	if s.Matrix.Dependency == "" {
		v.add("matrix.dependency", "required: the dependency the drill is about, as its system names it, or none for a drill without a fault (matrix: {dependency: none, failure: baseline})")
	} else {
		v.dependency("matrix.dependency", s.Matrix.Dependency)
	}
	if s.Matrix.Failure == "" {
		v.add("matrix.failure", "required: the failure mode this scenario proves, such as latency or down (baseline for a drill without a fault)")
	} else if !tokenRE.MatchString(s.Matrix.Failure) {
		v.add("matrix.failure", "%s: want lower-case words joined by '-' or '_'", clip(s.Matrix.Failure))
	}
	switch {
	case s.Stock == 0:
		v.add("stock", "required: the number of units on sale, above 0")
	case s.Stock < 0:
		v.add("stock", "%d is negative: want the number of units on sale", s.Stock)
	}
}

func (v *validator) environment() {
	e := v.s.Environment
	switch e.Kind {
	case "", "local":
		if v.s.System != "" {
			v.add("environment.kind", "local: gameday starts the reference checkout there; a described system (system: %s) runs as it runs (leave kind out)", clip(v.s.System))
		}
		for _, f := range e.externalFields() {
			v.add(f, "only for an external environment (kind: external); a local one creates its own")
		}
	case "external":
		if v.s.System != "" {
			for _, f := range e.externalFields() {
				v.add(f, "the system file (system: %s) says where everything is", clip(v.s.System))
			}
			if !reflect.DeepEqual(v.s.Checkout, Checkout{}) {
				v.add("checkout", "the reference checkout's settings: a described system (system: %s) has its own", clip(v.s.System))
			}
			if !reflect.DeepEqual(v.s.Payment, Payment{}) {
				v.add("payment", "the payment stand-in's settings: a described system (system: %s) has its own provider", clip(v.s.System))
			}
			return
		}
		if e.Toxiproxy == "" {
			v.add("environment.toxiproxy", "required in an external environment: the Toxiproxy API's host:port")
		} else if err := checkAddr(e.Toxiproxy); err != nil {
			v.add("environment.toxiproxy", "%s: %v", clip(e.Toxiproxy), err)
		}
		if e.CheckoutURL == "" {
			v.add("environment.checkout_url", "required in an external environment: the checkout's base URL")
		} else if err := checkURL(e.CheckoutURL); err != nil {
			v.add("environment.checkout_url", "%s: %v", clip(e.CheckoutURL), err)
		}
		if e.PaymentURL != "" {
			if err := checkURL(e.PaymentURL); err != nil {
				v.add("environment.payment_url", "%s: %v", clip(e.PaymentURL), err)
			}
		}
		if m := e.BreakerMetric; m != nil {
			if m.URL == "" {
				v.add("environment.breaker_metric.url", "required: the URL of the Prometheus metrics")
			} else if err := checkURL(m.URL); err != nil {
				v.add("environment.breaker_metric.url", "%s: %v", clip(m.URL), err)
			}
		}
		for _, dep := range slices.Sorted(maps.Keys(e.Proxies)) {
			path := "environment.proxies." + dep
			v.dependency(path, dep)
			if e.Proxies[dep] == "" {
				v.add(path, "empty: give the name of the Toxiproxy proxy in front of %s", dep)
			}
		}
	default:
		v.add("environment.kind", "%s is not one of local, external", clip(e.Kind))
	}
}

// checkAddr accepts host:port or an http(s) URL.
func checkAddr(addr string) error {
	if strings.Contains(addr, "://") {
		return checkURL(addr)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host == "" || port == "" {
		return fmt.Errorf("want host:port or http://host:port")
	}
	if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 {
		return fmt.Errorf("bad port %s", clip(port))
	}
	return nil
}

func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("want an http:// or https:// URL with a host")
	}
	return nil
}

func (v *validator) checkout() {
	c := v.s.Checkout
	if c.Mode != "" {
		v.oneOf("checkout.mode", c.Mode, []string{"reserve", "naive"})
	}
	v.nonNegative("checkout.lease_ttl", c.LeaseTTL)
	v.nonNegative("checkout.retry_after", c.RetryAfter)
	v.nonNegative("checkout.min_payment_time", c.MinPaymentTime)
	a := c.Admission
	if a.Mode != "" {
		v.oneOf("checkout.admission.mode", a.Mode, AdmissionModes)
	}
	room := a.Mode == "lottery" || a.Mode == "fair" || a.Mode == "fair-deadline" || a.Mode == "paced"
	switch {
	case room && a.InProgress <= 0:
		v.add("checkout.admission.in_progress", "%d: a waiting room (%s) needs the number of checkouts it lets in at once, above 0", a.InProgress, a.Mode)
	case !room && a.InProgress != 0:
		v.add("checkout.admission.in_progress", "%d: only a waiting room (lottery, fair, fair-deadline, paced) has one", a.InProgress)
	}
	v.nonNegative("checkout.admission.token_ttl", a.TokenTTL)
	if a.TokenTTL != 0 && a.Mode != "fair" && a.Mode != "fair-deadline" && a.Mode != "paced" {
		v.add("checkout.admission.token_ttl", "only the fair modes and paced issue tokens")
	}
	for _, b := range []struct {
		name string
		b    Breaker
	}{{"payment", c.Payment}, {"inventory", c.Inventory}, {"sessions", c.Sessions}} {
		p := "checkout." + b.name
		v.nonNegative(p+".timeout", b.b.Timeout)
		v.nonNegative(p+".probe_timeout", b.b.ProbeTimeout)
		v.nonNegative(p+".open_for", b.b.OpenFor)
		switch {
		case b.b.Slots < 0:
			v.add(p+".slots", "%d is negative (0 means no line)", b.b.Slots)
		case b.b.Slots > 0 && b.name != "payment":
			v.add(p+".slots", "only payment has a line of its own")
		}
	}
}

func (v *validator) payment() {
	p := v.s.Payment
	v.nonNegative("payment.min_latency", p.MinLatency)
	v.nonNegative("payment.max_latency", p.MaxLatency)
	v.nonNegative("payment.tail_latency", p.TailLatency)
	if p.MinLatency > p.MaxLatency {
		v.add("payment.min_latency", "%s is above max_latency (%s)", p.MinLatency, p.MaxLatency)
	}
	v.fraction("payment.tail_probability", p.TailProbability)
	if p.TailProbability > 0 && p.TailLatency <= 0 {
		v.add("payment.tail_latency", "required when tail_probability is above 0: the mean of the long-tail delay")
	}
	v.fraction("payment.decline_rate", p.DeclineRate)
	if p.Slots < 0 {
		v.add("payment.slots", "%d is negative (0 means no limit)", p.Slots)
	}
}

// stages checks the stages at field path p and reports whether any has
// arrivals.
func (v *validator) stages(p string, sts []Stage) bool {
	arrivals := false
	for i, st := range sts {
		q := p + "[" + strconv.Itoa(i) + "]"
		if st.Duration <= 0 {
			v.add(q+".duration", "required, above 0")
		}
		switch {
		case math.IsNaN(st.Target) || math.IsInf(st.Target, 0):
			v.add(q+".target", "want a finite number of arrivals per second")
		case st.Target < 0:
			v.add(q+".target", "%g is negative", st.Target)
		case st.Target > 0:
			arrivals = true
		}
	}
	return arrivals
}

func (v *validator) load() {
	l := v.s.Load
	v.replay()
	if len(l.Stages) == 0 && l.Replay == nil {
		v.add("load.stages", "required: at least one stage of {duration, target}, or a replay")
	}
	arrivals := v.stages("load.stages", l.Stages)
	if len(l.Stages) > 0 && !arrivals && len(l.Streams) == 0 {
		v.add("load.stages", "every target is 0: the plan has no arrivals")
	}
	v.streams()
	if total := v.s.TotalDuration(); total > maxLoad || total < 0 {
		v.add("load.stages", "the load lasts more than %s: a drill is minutes long", maxLoad)
	} else if n := l.plannedArrivals() + l.streamArrivals(); n > maxArrivals {
		v.add("load.stages", "the plan has %.3g arrivals, more than %d: check the targets (arrivals per second)", n, maxArrivals)
	}
	if l.Patience < 0 {
		v.add("load.patience", "%s is negative", l.Patience)
	}
	if l.MaxRetries < 0 || l.MaxRetries > maxRetries {
		v.add("load.max_retries", "%d is not between 0 and %d", l.MaxRetries, maxRetries)
	}
	if l.MaxShoppers < 0 || l.MaxShoppers > maxShoppers {
		v.add("load.max_shoppers", "%d is not between 0 and %d", l.MaxShoppers, maxShoppers)
	}
	if l.RetryJitter != nil {
		v.fraction("load.retry_jitter", *l.RetryJitter)
	}
	if l.SessionShare != nil {
		v.fraction("load.session_share", *l.SessionShare)
	}
}

func (v *validator) faults() {
	s := v.s
	total := s.TotalDuration()
	seen := map[string]int{}
	for i, f := range s.Faults {
		p := "faults[" + strconv.Itoa(i) + "]"
		v.itemName(p, "faults", f.Name, i, seen, tokenRE, "required", "want lower-case words joined by '-' or '_'")
		v.dependency(p+".target", f.Target)
		v.nonNegative(p+".at", f.At)
		v.nonNegative(p+".for", f.For)
		if total > 0 {
			if f.At.D() >= total {
				v.add(p+".at", "%s is not before the end of the load (%s)", f.At, total)
			} else if f.For.D() > total-f.At.D() {
				v.add(p+".for", "%s from %s ends after the load (%s)", f.For, f.At, total)
			}
		}
		kinds := 0
		if f.Toxic != nil {
			kinds++
		}
		if f.Down {
			kinds++
		}
		if f.Process != "" {
			kinds++
		}
		if f.Cache != nil {
			kinds++
		}
		if kinds != 1 {
			v.add(p, "set exactly one of toxic, down, process and cache (%d set)", kinds)
		}
		if f.Toxic != nil {
			v.toxic(p+".toxic", *f.Toxic)
		}
		if f.Cache != nil {
			v.cache(p, f)
		}
		if f.Process != "" {
			// Every target may be killed, payment included: the local
			// environment keeps the stand-in's books on disk, so that it
			// comes back with every charge it answered, as a provider would.
			v.oneOf(p+".process", f.Process, processes)
			if s.Environment.Kind == "external" && s.System == "" {
				v.add(p+".process", "needs a process to act on: the local environment's, or one a system file declares (system:)")
			}
			if f.Process == "restart" && f.For <= 0 {
				v.add(p+".for", "required for a restart, above 0: the least length of the recovery window")
			}
		}
		if s.Environment.Kind == "external" && s.System == "" && f.Cache != nil {
			v.add(p+".cache", "needs the address of %s's Redis: the local environment's, or one a system file gives (system:)", f.Target)
		}
		if s.Environment.Kind == "external" && s.System == "" && (f.Toxic != nil || f.Down) {
			if _, ok := s.Environment.Proxies[f.Target]; !ok {
				v.add(p+".target", "no proxy for %s in environment.proxies", f.Target)
			}
		}
		// One process fault at a time on a dependency: a pause of a
		// killed process, or a kill of a paused one, is not a fault
		// anyone can carry out.
		for j, g := range s.Faults[:i] {
			if f.Process != "" && g.Process != "" && f.Target == g.Target && f.At.D() < g.end(total) && g.At.D() < f.end(total) {
				v.add(p+".at", "%s of %s while faults[%d] (%s) is on it: one process fault at a time on a dependency", f.Process, f.Target, j, g.Process)
			}
			// Each limit puts back what it found: two at once would
			// put back each other's.
			if limits(f) && limits(g) && f.Target == g.Target && f.At.D() < g.end(total) && g.At.D() < f.end(total) {
				v.add(p+".at", "a memory limit of %s while faults[%d]'s is on it: one memory limit at a time on a dependency", f.Target, j)
			}
		}
	}
}

// cache checks a cache fault (p is the fault's path): one action, a
// pattern Redis can match, a repeat that fits in the fault, a memory limit
// Redis takes as one.
func (v *validator) cache(p string, f Fault) {
	c := f.Cache
	p += ".cache"
	n := 0
	for _, set := range []bool{c.Flush != "", c.Expire != "", c.MaxMemory != ""} {
		if set {
			n++
		}
	}
	if n != 1 {
		v.add(p, "set exactly one of flush, expire and maxmemory (%d set)", n)
		return
	}
	for _, k := range []struct{ field, pattern string }{{"flush", c.Flush}, {"expire", c.Expire}} {
		if k.pattern != "" && (len(k.pattern) > 256 || strings.ContainsAny(k.pattern, " \t\r\n")) {
			v.add(p+"."+k.field, "%s: a key pattern (Redis's glob: product:*) of at most 256 characters, no spaces", clip(k.pattern))
		}
	}
	v.nonNegative(p+".ttl", c.TTL)
	v.nonNegative(p+".every", c.Every)
	if c.TTL != 0 && c.Expire == "" {
		v.add(p+".ttl", "only for expire: how long the matching keys have left")
	}
	if c.Every != 0 {
		switch {
		case !c.Clears():
			v.add(p+".every", "only for flush and expire: a memory limit holds for the fault's for")
		case c.Every.D() < 100*time.Millisecond:
			v.add(p+".every", "%s: at least 100ms (each round scans the keys)", c.Every)
		case f.For <= 0:
			v.add(p+".every", "needs the fault's for: how long the keys are cleared again and again")
		case c.Expire != "" && c.TTL >= c.Every:
			v.add(p+".ttl", "%s is not shorter than every (%s): each round would give the keys their time again, and none would expire", c.TTL, c.Every)
		}
	}
	if c.MaxMemory != "" {
		_, share, serr := c.MaxMemoryShare()
		b, err := c.MaxMemoryBytes(0)
		switch {
		case share:
			if serr != nil {
				v.add(p+".maxmemory", "%v", serr)
			}
		case err != nil:
			v.add(p+".maxmemory", "%v", err)
		case b < MinMaxMemory:
			v.add(p+".maxmemory", "%s is below 1mb: Redis reads 0 as no limit, and an empty Redis uses about a megabyte itself, so a smaller limit refuses every write from the start", clip(c.MaxMemory))
		}
		if c.Policy != "" {
			v.oneOf(p+".policy", c.Policy, MaxMemoryPolicies)
		}
	} else if c.Policy != "" {
		v.add(p+".policy", "only with maxmemory")
	}
	if c.ClearsBooks && !c.Clears() {
		v.add(p+".clears_books", "only for flush and expire")
	}
}

// limits reports whether f limits its dependency's memory.
func limits(f Fault) bool { return f.Cache != nil && f.Cache.MaxMemory != "" }

// end is when f ends: At+For, or (For 0) the end of the load, total.
func (f Fault) end(total time.Duration) time.Duration {
	if f.For <= 0 {
		return max(total, f.At.D()+1)
	}
	return f.At.D() + f.For.D()
}

// itemName checks the name of item i of a list: given, of re's form (at
// most 64 characters), and not the name of an earlier item (seen holds
// their names and indexes).
func (v *validator) itemName(p, list, name string, i int, seen map[string]int, re *regexp.Regexp, required, form string) {
	switch {
	case name == "":
		v.add(p+".name", "%s", required)
	case len(name) > 64 || !re.MatchString(name):
		v.add(p+".name", "%s: %s", clip(name), form)
	default:
		if first, dup := seen[name]; dup {
			v.add(p+".name", "%s is also the name of %s[%d]", clip(name), list, first)
		} else {
			seen[name] = i
		}
	}
}

func (v *validator) toxic(p string, t Toxic) {
	_, problems := t.check()
	for _, pr := range problems {
		v.add(p+"."+pr.field, "%s", pr.msg)
	}
	if t.Stream != "" {
		v.oneOf(p+".stream", t.Stream, []string{"downstream", "upstream"})
	}
	if t.Toxicity != nil && !(*t.Toxicity > 0 && *t.Toxicity <= 1) {
		v.add(p+".toxicity", "%g is not in (0, 1]: Toxiproxy reads 0 as 1", *t.Toxicity)
	}
}

// span is what the windows can hold: when the first fault starts, whether
// the last one ends before the load does.
type span struct {
	faults     bool
	firstAt    time.Duration
	endsBefore bool // every fault ends, and the last before the load ends
}

func (s *Scenario) span() span {
	sp := span{faults: len(s.Faults) > 0, endsBefore: len(s.Faults) > 0}
	var last time.Duration
	for i, f := range s.Faults {
		if i == 0 || f.At.D() < sp.firstAt {
			sp.firstAt = f.At.D()
		}
		if f.For <= 0 {
			sp.endsBefore = false
		}
		last = max(last, satAdd(f.At.D(), f.For.D()))
	}
	if last >= s.TotalDuration() {
		sp.endsBefore = false
	}
	return sp
}

// satAdd adds two durations that are not negative, saturating instead of
// overflowing.
func satAdd(a, b time.Duration) time.Duration {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func (v *validator) window(p string, w Window, sp span) {
	switch w {
	case "", WindowAll:
	case WindowDuring:
		if !sp.faults {
			v.add(p, "during: the scenario has no fault (use all)")
		}
	case WindowBefore:
		if !sp.faults {
			v.add(p, "before: the scenario has no fault (use all)")
		} else if sp.firstAt == 0 {
			v.add(p, "before: the first fault starts at 0, so nothing comes before it")
		}
	case WindowAfter:
		if !sp.faults {
			v.add(p, "after: the scenario has no fault (use all)")
		} else if !sp.endsBefore {
			v.add(p, "after: the faults do not all end before the load does, so nothing comes after them")
		}
	default:
		v.add(p, "%s is not one of %s", clip(string(w)), joinWindows())
	}
}

func joinWindows() string {
	s := make([]string, len(windows))
	for i, w := range windows {
		s[i] = string(w)
	}
	return strings.Join(s, ", ")
}

func (v *validator) outcomes(p string, list []string, required bool, valid []string) {
	if len(list) == 0 && required {
		v.add(p, "required: one or more of %s", strings.Join(valid, ", "))
	}
	for i, o := range list {
		v.oneOf(p+"["+strconv.Itoa(i)+"]", o, valid)
	}
}

// The outcomes a promise over a selection may name: a purchase's final
// outcomes (and what its answers mean), a visit's (and its answers'), or
// both where it names the purchase and journeys; an outcome the selection
// can never have would make an at_most hold for ever.
var (
	visitOutcomes       = []string{"ok", "unavailable", "error", "gave_up"}
	visitAnswerOutcomes = []string{"ok", "next", "unavailable", "retry_later", "error"}
)

func outcomesFor(sel Select, answers bool) []string {
	notOK := func(o string) bool { return o == "ok" } // a visit's
	purchase, visit := slices.DeleteFunc(slices.Clone(outcomes), notOK), visitOutcomes
	if answers {
		purchase, visit = slices.DeleteFunc(slices.Clone(answerOutcomes), notOK), visitAnswerOutcomes
	}
	if len(sel.Journeys) == 0 {
		return purchase
	}
	var out []string
	if slices.Contains(sel.Journeys, PurchaseJourney) {
		out = slices.Clone(purchase)
	}
	if slices.ContainsFunc(sel.Journeys, func(j string) bool { return j != PurchaseJourney }) {
		for _, o := range visit {
			if !slices.Contains(out, o) {
				out = append(out, o)
			}
		}
	}
	return out
}

func (v *validator) expectations() {
	s := v.s
	sp := s.span()
	for i, e := range s.Expect {
		p := "expect[" + strconv.Itoa(i) + "]"
		set := 0
		for _, isSet := range []bool{e.BreakerOpens != nil, e.BreakerCloses != nil, e.Latency != nil, e.Ratio != nil, e.Degraded != nil, e.FastRefusals != nil, e.Metric != nil, e.BlastRadius != nil, e.Moved != nil} {
			if isSet {
				set++
			}
		}
		if set != 1 {
			v.add(p, "set exactly one of breaker_opens, breaker_closes, latency, ratio, degraded, fast_refusals, metric, blast_radius, moved (%d set)", set)
		}
		if f := e.FastRefusals; f != nil {
			v.fastRefusals(p+".fast_refusals", f)
		}
		if m := e.Metric; m != nil {
			v.window(p+".metric.window", m.Window, sp)
			v.metric(p+".metric", m)
		}
		if b := e.BreakerOpens; b != nil {
			v.breaker(p+".breaker_opens", *b, false)
		}
		if b := e.BreakerCloses; b != nil {
			v.breaker(p+".breaker_closes", *b, true)
		}
		if l := e.Latency; l != nil {
			q := p + ".latency"
			v.window(q+".window", l.Window, sp)
			if !(l.Percentile > 0 && l.Percentile <= 100) {
				v.add(q+".percentile", "want a percentile above 0 and at most 100, such as 95; got %g", l.Percentile)
			}
			if l.Below <= 0 {
				v.add(q+".below", "required: the latency bound, such as \"300ms\"")
			}
			v.oneOf(q+".of", cmp.Or(l.Of, LatencyOfRequests), []string{LatencyOfRequests, LatencyOfPurchases})
			// A purchase ends in a final outcome; a request may also
			// have meant "come back" or "go on".
			valid := outcomesFor(l.Select, true)
			if l.Of == LatencyOfPurchases {
				valid = outcomesFor(l.Select, false)
				if slices.ContainsFunc(l.Journeys, func(j string) bool { return j != PurchaseJourney }) {
					v.add(q+".of", "purchases: whole purchases, first request to final answer; a journey's requests are measured one by one (leave of out)")
				}
			}
			for j, o := range l.Outcomes {
				v.oneOf(q+".outcomes["+strconv.Itoa(j)+"]", o, valid)
			}
		}
		if r := e.Ratio; r != nil {
			q := p + ".ratio"
			v.window(q+".window", r.Window, sp)
			v.outcomes(q+".outcomes", r.Outcomes, true, outcomesFor(r.Select, false))
			if r.AtLeast == nil && r.AtMost == nil {
				v.add(q, "give at_least, at_most or both")
			}
			if r.AtLeast != nil {
				v.fraction(q+".at_least", *r.AtLeast)
			}
			if r.AtMost != nil {
				v.fraction(q+".at_most", *r.AtMost)
			}
			if r.AtLeast != nil && r.AtMost != nil && *r.AtLeast > *r.AtMost {
				v.add(q+".at_least", "%g is above at_most (%g)", *r.AtLeast, *r.AtMost)
			}
		}
		if d := e.Degraded; d != nil {
			q := p + ".degraded"
			v.window(q+".window", d.Window, sp)
			if d.AtLeast < 0 {
				v.add(q+".at_least", "%d is negative", d.AtLeast)
			}
		}
	}
}

// dependency checks a dependency's name: any the system may give (the
// runner checks it against the system's own when it runs).
func (v *validator) dependency(p, name string) {
	switch {
	case name == "":
		v.add(p, "required: a dependency's name, as the system names it (the reference checkout's: payment, inventory, sessions)")
	case len(name) > 64 || !depRE.MatchString(name):
		v.add(p, "%s: a dependency's name is lower-case letters, digits, '-' and '_' (a pod's: pod-2/inventory)", clip(name))
	}
}

func (v *validator) breaker(p string, b BreakerWithin, closes bool) {
	v.dependency(p+".dependency", b.Dependency)
	if b.Within <= 0 {
		v.add(p+".within", "required: how soon, such as \"2s\"")
	}
	var f *Fault
	if b.Fault == "" {
		if b.Dependency != "" {
			f = v.s.firstFaultOn(b.Dependency)
			if f == nil {
				v.add(p+".fault", "no fault targets %s: name the fault this promise follows", b.Dependency)
			}
		}
	} else {
		for i := range v.s.Faults {
			if v.s.Faults[i].Name == b.Fault {
				f = &v.s.Faults[i]
				break
			}
		}
		if f == nil {
			names := make([]string, len(v.s.Faults))
			for i, x := range v.s.Faults {
				names[i] = x.Name
			}
			known := strings.Join(names, ", ")
			if known == "" {
				known = "none"
			}
			v.add(p+".fault", "no fault is named %s (faults: %s)", clip(b.Fault), known)
		}
	}
	if f != nil && closes && f.For <= 0 {
		v.add(p+".fault", "fault %s never ends (no for), so the breaker has nothing to close after", clip(f.Name))
	}
}

func (v *validator) invariants() {
	for _, name := range slices.Sorted(maps.Keys(v.s.Invariants.Allow)) {
		p := "invariants.allow." + name
		v.oneOf(p, name, invariants)
		if n := v.s.Invariants.Allow[name]; n < 0 {
			v.add(p, "%d is negative", n)
		}
	}
}

func (v *validator) abort() {
	a := v.s.Abort
	if a == nil {
		return
	}
	switch {
	case a.ErrorRatio == 0 && a.Metric == nil:
		v.add("abort", "give error_ratio, metric or both")
	case a.ErrorRatio != 0 && !(a.ErrorRatio > 0 && a.ErrorRatio <= 1):
		v.add("abort.error_ratio", "want a share above 0 and at most 1, got %g", a.ErrorRatio)
	}
	if m := a.Metric; m != nil {
		if m.Window != "" {
			v.add("abort.metric.window", "a halt condition has no window: it is watched the whole run")
		}
		if strings.TrimSpace(m.Query) == "" {
			v.add("abort.metric.query", "required: a PromQL expression with one value")
		}
		if m.Below == nil && m.Above == nil {
			v.add("abort.metric", "give above, below or both: the drill stops when the metric goes above or below them")
		}
	}
	if a.For <= 0 {
		v.add("abort.for", "required, above 0: how long the condition must hold")
	}
}

func (v *validator) fastRefusals(p string, f *FastRefusals) {
	var fault *Fault
	if f.Fault == "" {
		if len(v.s.Faults) == 0 {
			v.add(p, "the scenario has no fault to follow")
		} else {
			fault = &v.s.Faults[0]
		}
	} else {
		for i := range v.s.Faults {
			if v.s.Faults[i].Name == f.Fault {
				fault = &v.s.Faults[i]
			}
		}
		if fault == nil {
			v.add(p+".fault", "no fault is named %s", clip(f.Fault))
		}
	}
	if f.Below <= 0 {
		v.add(p+".below", "required: the time under which a refusal is fast, such as \"50ms\"")
	}
	if f.Share != 0 && !(f.Share > 0 && f.Share <= 1) {
		v.add(p+".share", "want a share above 0 and at most 1, got %g", f.Share)
	}
	if f.RisesWithin <= 0 {
		v.add(p+".rises_within", "required: how soon after the fault's start the fast refusals rise, such as \"2s\"")
	}
	if f.FallsWithin > 0 && fault != nil && fault.For <= 0 {
		v.add(p+".falls_within", "fault %s never ends (no for), so nothing can fall after it", clip(fault.Name))
	}
}

func (v *validator) metric(p string, m *MetricBound) {
	switch {
	case m.Query != "" && m.Counter != "":
		v.add(p, "give one of query (PromQL) and counter (the system file's counters:)")
	case m.Counter != "":
		if len(m.Counter) > 64 || !depRE.MatchString(m.Counter) {
			v.add(p+".counter", "%s: a counter's name, as the system file's counters: gives it", clip(m.Counter))
		}
	case strings.TrimSpace(m.Query) == "":
		v.add(p+".query", "required: a PromQL expression with one value (or counter: a counter the system file names)")
	}
	if m.Below == nil && m.Above == nil {
		v.add(p, "give below, above or both")
	}
	if m.Below != nil && m.Above != nil && *m.Above >= *m.Below {
		v.add(p+".above", "%g is not below below (%g): nothing can hold", *m.Above, *m.Below)
	}
}

// externalFields names the fields of an external environment that are set.
func (e Environment) externalFields() []string {
	var out []string
	for _, f := range []struct {
		path string
		set  bool
	}{
		{"environment.toxiproxy", e.Toxiproxy != ""},
		{"environment.proxies", len(e.Proxies) > 0},
		{"environment.checkout_url", e.CheckoutURL != ""},
		{"environment.payment_url", e.PaymentURL != ""},
		{"environment.breaker_metric", e.BreakerMetric != nil},
	} {
		if f.set {
			out = append(out, f.path)
		}
	}
	return out
}
