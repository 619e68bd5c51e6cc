package scenarios

import (
	"slices"
	"strconv"
	"strings"
	"time"
)

// Shop is one shop of a sale across shops (docs/pods.md). It sells its own
// SKU (the shop's name, a dot and the system's SKU: "hot.sku-1"), from its
// own stock, on its own pod.
type Shop struct {
	// Name is the shop's name, as the router's table and the shop's
	// requests carry it: lower-case words joined by '-'. Required, unique.
	Name string `yaml:"name"`
	// Pod is the pod the shop lives on: pod-1 ... pod-N of
	// environment.pods. Required with pods; without them, empty.
	Pod string `yaml:"pod"`
	// Stock is the units the shop's SKU starts with; 0 means the
	// scenario's stock.
	Stock int64 `yaml:"stock"`
	// Stages, when set, are the shop's own arrivals, on top of the load's
	// (its flash sale), as load.stages are written; within the load's
	// duration. A shop without them has an equal share of load.stages:
	// its arrivals go round robin to such shops, as steady background
	// traffic. At least one shop has none.
	Stages []Stage `yaml:"stages"`
}

// Select narrows a promise to some shops' shoppers: those of the shops
// named and those of the shops on the pods named. Both empty: every
// shopper.
type Select struct {
	Shops []string `yaml:"shops"`
	Pods  []string `yaml:"pods"`
	// Journeys narrows the promise to the visitors of these journeys of
	// the load's streams (purchase: the purchases); empty: the purchases.
	Journeys []string `yaml:"journeys"`
}

// Empty reports whether the selection takes every purchase.
func (s Select) Empty() bool { return len(s.Shops) == 0 && len(s.Pods) == 0 && len(s.Journeys) == 0 }

// ShopSet is the names of the shops the selection takes, from the
// scenario's shops; nil when it takes every shopper.
func (s Select) ShopSet(shops []Shop) map[string]bool {
	if len(s.Shops) == 0 && len(s.Pods) == 0 {
		return nil
	}
	set := map[string]bool{}
	for _, sh := range shops {
		if slices.Contains(s.Shops, sh.Name) || slices.Contains(s.Pods, sh.Pod) {
			set[sh.Name] = true
		}
	}
	return set
}

// BlastRadius promises that the selected shops hardly notice what happens
// elsewhere: in Window (or From-To), their share of arrivals confirmed is
// at least ConfirmedAtLeast of what it was in Baseline (or
// BaselineFrom-BaselineTo), and, with P95Within, the 95th percentile
// latency of their confirmed checkouts is at most the baseline's times
// 1+P95Within, plus P95Slack. Shoppers are counted by arrival.
//
// What it proves: a failure or a flash sale stays in its pod. On one
// machine every pod shares the same cores, so a pod in trouble costs the
// others some CPU that separate machines would not: P95Slack allows for
// that, and the docs say what it means.
type BlastRadius struct {
	Select `yaml:",inline"`
	// Window is the part of the run judged; default during. From and To,
	// when To is set, name it by time instead (from the start of the load).
	Window Window   `yaml:"window"`
	From   Duration `yaml:"from"`
	To     Duration `yaml:"to"`
	// Baseline is the part compared with; default before. BaselineFrom
	// and BaselineTo, when BaselineTo is set, name it by time instead.
	Baseline     Window   `yaml:"baseline"`
	BaselineFrom Duration `yaml:"baseline_from"`
	BaselineTo   Duration `yaml:"baseline_to"`
	// ConfirmedAtLeast is the least share of the baseline's confirmed
	// share kept, in (0, 1]: 0.95 means "at least 95 % of the baseline's
	// confirmations per arrival". Required.
	ConfirmedAtLeast float64 `yaml:"confirmed_at_least"`
	// P95Within bounds the rise of the confirmed p95 as a fraction of the
	// baseline's (0.1: within 10 %); nil: not checked.
	P95Within *float64 `yaml:"p95_within"`
	// P95Slack is added to the p95 bound; default 0.
	P95Slack Duration `yaml:"p95_slack"`
}

// Span returns the judged part as a named window, or, when To is set, as
// times.
func (b *BlastRadius) Span() (Window, time.Duration, time.Duration) {
	return b.Window, b.From.D(), b.To.D()
}

// BaselineSpan returns the baseline likewise.
func (b *BlastRadius) BaselineSpan() (Window, time.Duration, time.Duration) {
	return b.Baseline, b.BaselineFrom.D(), b.BaselineTo.D()
}

// Move moves a shop to another pod at At after the load starts: the
// router stops its writes, the purchases in flight on its pod finish, its
// stock moves, and the router sends it to its new pod, or, when a step
// fails, everything goes back (docs/pods.md).
type Move struct {
	// Name identifies the move in promises and reports; default
	// "move-<shop>-<index>".
	Name string `yaml:"name"`
	// Shop is one of the scenario's shops; To a pod other than the one it
	// is on when the move starts.
	Shop string   `yaml:"shop"`
	To   string   `yaml:"to"`
	At   Duration `yaml:"at"`
}

// Moved promises, of a move, that it ended one of Outcomes (default
// completed; a drill that faults the move lists rolled_back too) and that
// the shop was read-only for less than ReadOnlyBelow (when set).
type Moved struct {
	Move          string   `yaml:"move"`
	Outcomes      []string `yaml:"outcomes"`
	ReadOnlyBelow Duration `yaml:"read_only_below"`
}

// MoveOutcomes are how a move can end (package podmove).
var MoveOutcomes = []string{"completed", "rolled_back", "failed"}

// MaxPods bounds environment.pods: each pod is a checkout and two
// redis-servers.
const MaxPods = 8

// PodName is the name of pod i (from 1): "pod-1".
func PodName(i int) string { return "pod-" + strconv.Itoa(i) }

// ShopStock is the stock a shop starts with.
func (s *Scenario) ShopStock(sh Shop) int64 {
	if sh.Stock > 0 {
		return sh.Stock
	}
	return s.Stock
}

// shops checks the shops, the pods and the promises' selections.
func (v *validator) shops() {
	s := v.s
	pods := s.Environment.Pods
	if pods < 0 || pods > MaxPods {
		v.add("environment.pods", "%d is not between 0 and %d", pods, MaxPods)
	}
	if pods > 0 && len(s.Shops) == 0 {
		v.add("environment.pods", "pods need shops: list them under shops, each with its pod")
	}
	if pods > 0 && s.Environment.Kind != "local" {
		v.add("environment.pods", "only in a local environment: gameday starts the pods and their router itself")
	}
	total := s.TotalDuration()
	names := map[string]int{}
	background := 0
	for i, sh := range s.Shops {
		p := "shops[" + strconv.Itoa(i) + "]"
		v.itemName(p, "shops", sh.Name, i, names, nameRE, "required: lower-case words joined by '-', such as hot-shop", "want lower-case words joined by '-' (at most 64 characters)")
		// Without environment.pods, a shop's pod is one of a described
		// system's pods: the runner checks it against the system.
		switch {
		case pods == 0 && sh.Pod != "" && !nameRE.MatchString(sh.Pod):
			v.add(p+".pod", "%s: a pod's name is lower-case words joined by '-', such as pod-1", clip(sh.Pod))
		case pods > 0 && sh.Pod == "":
			v.add(p+".pod", "required with pods: one of %s", podNames(pods))
		case pods > 0 && !slices.Contains(podList(pods), sh.Pod):
			v.add(p+".pod", "%s is not one of %s", clip(sh.Pod), podNames(pods))
		}
		if sh.Stock < 0 {
			v.add(p+".stock", "%d is negative", sh.Stock)
		}
		if len(sh.Stages) == 0 {
			background++
		}
		var d time.Duration
		for j, st := range sh.Stages {
			q := p + ".stages[" + strconv.Itoa(j) + "]"
			if st.Duration <= 0 {
				v.add(q+".duration", "required, above 0")
			}
			d += st.Duration.D()
			if !(st.Target >= 0) || st.Target > 1e9 {
				v.add(q+".target", "want a finite number of arrivals per second, 0 or more")
			}
		}
		if d > total {
			v.add(p+".stages", "the shop's stages last %s, past the end of the load (%s)", d, total)
		}
	}
	if len(s.Shops) > 0 && background == 0 {
		v.add("shops", "every shop has stages of its own: at least one must take load.stages")
	}
	// The pods a promise may name: environment.pods', or, for a described
	// system of pods, those its shops live on.
	known := podList(pods)
	if pods == 0 {
		for _, sh := range s.Shops {
			if sh.Pod != "" && !slices.Contains(known, sh.Pod) {
				known = append(known, sh.Pod)
			}
		}
	}
	check := func(p string, sel Select) {
		v.journeySelect(p, sel)
		for j, n := range sel.Shops {
			if _, ok := names[n]; !ok {
				v.add(p+".shops["+strconv.Itoa(j)+"]", "%s is not one of the scenario's shops", clip(n))
			}
		}
		for j, n := range sel.Pods {
			if !slices.Contains(known, n) {
				v.add(p+".pods["+strconv.Itoa(j)+"]", "%s is not one of the scenario's pods (%s)", clip(n), knownPods(pods, known))
			}
		}
	}
	// Where each shop is as the moves go, in time order.
	where := map[string]string{}
	for _, sh := range s.Shops {
		where[sh.Name] = sh.Pod
	}
	moves := map[string]int{}
	for i, m := range s.Moves {
		v.itemName("moves["+strconv.Itoa(i)+"]", "moves", m.Name, i, moves, tokenRE, "required", "want lower-case words joined by '-' or '_'")
	}
	for _, i := range s.movesByTime() {
		m := s.Moves[i]
		p := "moves[" + strconv.Itoa(i) + "]"
		if pods == 0 {
			v.add(p, "a move needs the pods gameday starts (environment.pods): the Pod Mover speaks the reference checkout's admin protocol")
		}
		from, ok := where[m.Shop]
		switch {
		case !ok:
			v.add(p+".shop", "%s is not one of the scenario's shops", clip(m.Shop))
		case !slices.Contains(podList(pods), m.To):
			v.add(p+".to", "%s is not one of %s", clip(m.To), podNames(pods))
		case m.To == from:
			v.add(p+".to", "%s is on %s already when the move starts", m.Shop, from)
		}
		where[m.Shop] = m.To
		if m.At < 0 || (total > 0 && m.At.D() >= total) {
			v.add(p+".at", "%s is not within the load (0 to %s)", m.At, total)
		}
	}
	sp := s.span()
	for i, e := range s.Expect {
		if mv := e.Moved; mv != nil {
			q := "expect[" + strconv.Itoa(i) + "].moved"
			if _, ok := moves[mv.Move]; !ok {
				v.add(q+".move", "%s is not one of the scenario's moves", clip(mv.Move))
			}
			for j, o := range mv.Outcomes {
				v.oneOf(q+".outcomes["+strconv.Itoa(j)+"]", o, MoveOutcomes)
			}
			v.nonNegative(q+".read_only_below", mv.ReadOnlyBelow)
		}
	}
	for i, e := range s.Expect {
		p := "expect[" + strconv.Itoa(i) + "]"
		if e.Latency != nil {
			check(p+".latency", e.Latency.Select)
		}
		if e.Ratio != nil {
			check(p+".ratio", e.Ratio.Select)
		}
		b := e.BlastRadius
		if b == nil {
			continue
		}
		q := p + ".blast_radius"
		check(q, b.Select)
		if b.Select.Empty() {
			v.add(q, "name the shops, pods or journeys that must not notice: shops, pods, journeys")
		}
		if b.To > 0 {
			if b.From >= b.To || b.To.D() > total {
				v.add(q+".to", "from %s to %s is not a part of the load (0 to %s)", b.From, b.To, total)
			}
		} else {
			v.window(q+".window", b.Window, sp)
		}
		// The baseline must be another part of the run than the one
		// judged: compared with itself, any promise holds.
		switch {
		case b.BaselineTo > 0:
			if b.BaselineFrom >= b.BaselineTo || b.BaselineTo.D() > total {
				v.add(q+".baseline_to", "from %s to %s is not a part of the load (0 to %s)", b.BaselineFrom, b.BaselineTo, total)
			}
		case len(s.Faults) == 0:
			v.add(q+".baseline", "without faults there is no %q: name the baseline by time (baseline_from, baseline_to), a part of the run before what it judges", orDefault(b.Baseline, WindowBefore))
		default:
			v.window(q+".baseline", b.Baseline, sp)
		}
		wf, wt := s.bounds(b.Window, b.From.D(), b.To.D())
		bf, bt := s.bounds(b.Baseline, b.BaselineFrom.D(), b.BaselineTo.D())
		if wf < wt && bf < bt && bf < wt && wf < bt {
			v.add(q+".baseline", "the baseline (%s to %s) overlaps the part judged (%s to %s): compare with another part of the run", bf, bt, wf, wt)
		}
		if !(b.ConfirmedAtLeast > 0 && b.ConfirmedAtLeast <= 1) {
			v.add(q+".confirmed_at_least", "required: the share of the baseline's confirmations kept, above 0 and at most 1, such as 0.95")
		}
		if b.P95Within != nil && !(*b.P95Within >= 0 && *b.P95Within <= 100) {
			v.add(q+".p95_within", "%g: want a fraction of the baseline's p95, 0 or more, such as 0.1", *b.P95Within)
		}
		v.nonNegative(q+".p95_slack", b.P95Slack)
	}
}

func podList(n int) []string {
	out := make([]string, 0, max(n, 0))
	for i := 1; i <= n; i++ {
		out = append(out, PodName(i))
	}
	return out
}

func podNames(n int) string {
	if n <= 0 {
		return "none"
	}
	if n == 1 {
		return "pod-1"
	}
	return "pod-1 ... " + PodName(n)
}

func (s Select) clone() Select {
	return Select{Shops: slices.Clone(s.Shops), Pods: slices.Clone(s.Pods), Journeys: slices.Clone(s.Journeys)}
}

// movesByTime is the moves' indexes in the order they start.
func (s *Scenario) movesByTime() []int {
	idx := make([]int, len(s.Moves))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return int(s.Moves[a].At - s.Moves[b].At) })
	return idx
}

// MovesByTime is the moves in the order they start.
func (s *Scenario) MovesByTime() []Move {
	var out []Move
	for _, i := range s.movesByTime() {
		out = append(out, s.Moves[i])
	}
	return out
}

// knownPods names the pods a promise may name, for an error.
func knownPods(pods int, known []string) string {
	if pods > 0 || len(known) == 0 {
		return podNames(pods)
	}
	return strings.Join(known, ", ")
}

func orDefault(w, def Window) Window {
	if w == "" {
		return def
	}
	return w
}

// bounds is the part of the run a window names, as the fault timeline
// gives it before the run ([from, to)): by time when to is set.
func (s *Scenario) bounds(w Window, from, to time.Duration) (time.Duration, time.Duration) {
	if to > 0 {
		return from, to
	}
	total := s.TotalDuration()
	first, last := total, time.Duration(0)
	for _, f := range s.Faults {
		first = min(first, f.At.D())
		end := total
		if f.For > 0 {
			end = min(total, satAdd(f.At.D(), f.For.D()))
		}
		last = max(last, end)
	}
	switch w {
	case WindowBefore:
		return 0, first
	case WindowDuring:
		return first, last
	case WindowAfter:
		return last, total
	}
	return 0, total
}
