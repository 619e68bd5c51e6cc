package system

import (
	"fmt"
	"maps"
	"net/http"
	"net/textproto"
	"slices"
	"strings"
	"time"

	"github.com/gameday-dev/gameday/gameday/load"
)

// compiled is a system's templates and rules, ready to use.
type compiled struct {
	steps     []*cstep            // the purchase's
	journeys  map[string][]*cstep // the other journeys', by name
	keepNames []string            // by index in Values.Kept
	queries   map[*Query]*cquery  // setup and books
}

type cstep struct {
	name    string
	label   string        // the name in reports: a journey's steps are "journey/step"
	think   time.Duration // the pause before this step (a journey's)
	method  string
	url     *tmpl // absolute
	headers []cheader
	body    *tmpl // nil: no body
	keep    []ckeep
	// needs are the kept values this step's request sends that an
	// earlier step keeps: each should be there by now (see Flow.EmptyKept).
	needs    []int
	rules    []crule
	retry    []*extractor
	reason   *extractor
	degraded *matcher
}

type cheader struct {
	name string // canonical
	val  *tmpl
}

type ckeep struct {
	index int
	where string // "json: order.id", "header: X-Token"
	x     *extractor
}

type crule struct {
	m     *matcher
	means load.Meaning
}

type cquery struct {
	sql     *tmpl
	args    []*tmpl
	redis   []*tmpl
	path    *tmpl
	body    *tmpl
	headers []cheader
	command []*tmpl
}

// compile compiles every template and rule, recording a located error for
// each that does not compile.
func (v *validator) compile() *compiled {
	s := v.s
	c := &compiled{queries: map[*Query]*cquery{}, journeys: map[string][]*cstep{}}
	c.steps = v.compileSteps(c, "purchase", "", s.Purchase.Steps)
	for _, name := range slices.Sorted(maps.Keys(s.Journeys)) {
		j := s.Journeys[name]
		p := "journeys." + name
		switch {
		case name == "purchase":
			v.add(p, "the purchase is the purchase section's: a journey that buys says buy")
			continue
		case !nameRE.MatchString(name) || len(name) > 64:
			v.add(p, "%q: want lower-case words joined by '-'", name)
			continue
		case j == nil:
			v.add(p, "empty: want steps")
			continue
		}
		if !(j.Buy >= 0 && j.Buy <= 1) {
			v.add(p+".buy", "%g: the share of the journey's visitors who buy, between 0 and 1", j.Buy)
		}
		c.journeys[name] = v.compileSteps(c, p, name, j.Steps)
	}
	for i, a := range s.Setup {
		if a != nil {
			v.compileQuery(c, fmt.Sprintf("setup[%d]", i), &a.Query)
		}
	}
	b := &s.Books
	if st := b.Stock; st != nil {
		for name, q := range map[string]*Query{"available": st.Available, "initial": st.Initial, "reserved": st.Reserved, "sold": st.Sold} {
			if q != nil {
				v.compileQuery(c, "books.stock."+name, q)
			}
		}
	}
	if b.Orders != nil {
		v.compileQuery(c, "books.orders", b.Orders)
	}
	if b.Charges != nil {
		v.compileQuery(c, "books.charges", &b.Charges.Query)
	}
	if b.Settled != nil {
		v.compileQuery(c, "books.settled", b.Settled)
	}
	for _, name := range slices.Sorted(maps.Keys(s.Counters)) {
		if q := s.Counters[name]; q != nil {
			v.compileQuery(c, "counters."+name, q)
		}
	}
	return c
}

func (v *validator) compileQuery(c *compiled, p string, q *Query) {
	sc := scope{}
	cq := &cquery{}
	if q.SQL != "" {
		cq.sql = v.template(p+".sql", q.SQL, sc)
	}
	for i, a := range q.Args {
		cq.args = append(cq.args, v.template(fmt.Sprintf("%s.args[%d]", p, i), a, sc))
	}
	for i, w := range q.Redis {
		cq.redis = append(cq.redis, v.template(fmt.Sprintf("%s.redis[%d]", p, i), w, sc))
	}
	if h := q.HTTP; h != nil {
		cq.path = v.template(p+".http.path", h.Path, sc)
		if h.Body != "" {
			cq.body = v.template(p+".http.body", h.Body, sc)
		}
		for _, name := range slices.Sorted(maps.Keys(h.Headers)) {
			cq.headers = append(cq.headers, cheader{name: http.CanonicalHeaderKey(name), val: v.template(p+".http.headers."+name, h.Headers[name], sc)})
		}
	}
	for i, w := range q.Command {
		cq.command = append(cq.command, v.template(fmt.Sprintf("%s.command[%d]", p, i), w, sc))
	}
	c.queries[q] = cq
}

func (v *validator) template(p, src string, sc scope) *tmpl {
	t, err := compileTemplate(src, sc)
	if err != nil {
		v.add(p, "%v", err)
		return &tmpl{}
	}
	return t
}

func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	return strings.IndexFunc(s, func(r rune) bool {
		return r > 127 || r <= ' ' || strings.ContainsRune("()<>@,;:\\\"/[]?={}", r)
	}) < 0 && textproto.CanonicalMIMEHeaderKey(s) != ""
}

// Rendered is a query with its templates filled in.
type Rendered struct {
	SQL     string
	Args    []any
	Redis   []any
	Method  string
	URL     string // the store's URL joined with the path
	Body    string
	Headers http.Header
	Command []string
}

// Render fills in q's templates (q must be one of s's setup actions or
// books queries). An http query's path is joined to its store's URL and
// carries the store's headers, then its own (which win); a query that
// gives a whole URL carries its own headers only.
func (s *System) Render(q *Query, v Values) Rendered {
	cq := s.compiled.queries[q]
	r := Rendered{}
	if cq == nil {
		return r
	}
	if cq.sql != nil {
		r.SQL = cq.sql.string(&v)
	}
	for _, a := range cq.args {
		r.Args = append(r.Args, a.string(&v))
	}
	for _, w := range cq.redis {
		r.Redis = append(r.Redis, w.string(&v))
	}
	if q.HTTP != nil {
		r.Method = q.HTTP.Method
		st := s.Stores[q.Store]
		path := cq.path.string(&v)
		if strings.Contains(path, "://") || st == nil {
			r.URL = path
		} else {
			r.URL = strings.TrimRight(st.HTTP, "/") + "/" + strings.TrimLeft(path, "/")
		}
		if cq.body != nil {
			r.Body = cq.body.string(&v)
		}
		r.Headers = http.Header{}
		if st != nil && !strings.Contains(path, "://") {
			// Only to the store itself: a query that names a URL of its
			// own does not carry the store's token elsewhere.
			r.Headers = st.Header()
		}
		for _, h := range cq.headers {
			if val := h.val.string(&v); val != "" {
				r.Headers.Set(h.name, val)
			}
		}
	}
	for _, w := range cq.command {
		r.Command = append(r.Command, w.string(&v))
	}
	return r
}

// StepNames lists the purchase's steps, in order.
func (s *System) StepNames() []string {
	out := make([]string, len(s.compiled.steps))
	for i, st := range s.compiled.steps {
		out[i] = st.name
	}
	return out
}

// all is every step: the purchase's, then the journeys' by name.
func (c *compiled) all() []*cstep {
	out := slices.Clone(c.steps)
	for _, name := range slices.Sorted(maps.Keys(c.journeys)) {
		out = append(out, c.journeys[name]...)
	}
	return out
}

// The outcomes a purchase's and a journey's answers may have.
var (
	purchaseMeanings = []string{"confirmed", "declined", "sold_out", "too_late", "unavailable", "retry_later", "error", "next"}
	journeyMeanings  = []string{"ok", "unavailable", "retry_later", "error", "next"}
)

// compileSteps compiles the steps of the purchase (journey "") or of a
// journey, at field path p, each with its own kept values.
func (v *validator) compileSteps(c *compiled, p0, journey string, steps []*Step) []*cstep {
	s := v.s
	var out []*cstep
	kept := map[string]int{}
	if len(steps) == 0 {
		v.add(p0+".steps", "required: at least one request")
	}
	if len(steps) > 16 {
		v.add(p0+".steps", "%d steps: at most 16", len(steps))
	}
	names := map[string]int{}
	for i, st := range steps {
		p := fmt.Sprintf("%s.steps[%d]", p0, i)
		if st == nil {
			v.add(p, "empty: want url and answers")
			continue
		}
		if !nameRE.MatchString(st.Name) || len(st.Name) > 64 {
			v.add(p+".name", "%q: want lower-case words joined by '-'", st.Name)
		}
		if j, dup := names[st.Name]; dup {
			v.add(p+".name", "%q is also step %d's name", st.Name, j)
		}
		names[st.Name] = i
		// Kept names are known from the step that keeps them on, this one
		// included: a later attempt of the same step may send them back.
		earlier := len(c.keepNames)
		for _, name := range slices.Sorted(maps.Keys(st.Keep)) {
			if _, ok := kept[name]; !ok {
				kept[name] = len(c.keepNames)
				c.keepNames = append(c.keepNames, name)
			}
		}
		sc := scope{shopper: true, kept: kept}
		cs := &cstep{name: st.Name, label: st.Name, method: st.Method, think: st.Think.D()}
		if journey != "" {
			cs.label = journey + "/" + st.Name
		}
		switch {
		case st.Think < 0:
			v.add(p+".think", "%s: must not be negative", st.Think.D())
		case st.Think > 0 && journey == "":
			v.add(p+".think", "a purchase's steps follow one another at once: think is for a journey's")
		case st.Think > 0 && i == 0:
			v.add(p+".think", "the first step is sent on arrival: think is the pause before a later step")
		}
		if !validMethod(st.Method) {
			v.add(p+".method", "%q: want GET, POST, PUT, PATCH or DELETE", st.Method)
		}
		if st.URL == "" {
			v.add(p+".url", "required: a path (/checkout) or an http(s) URL, a template")
		} else {
			u := st.URL
			if !strings.Contains(u, "://") {
				u = strings.TrimRight(s.BaseURL, "/") + "/" + strings.TrimLeft(u, "/")
			}
			cs.url = v.template(p+".url", u, sc)
		}
		for _, name := range slices.Sorted(maps.Keys(st.Headers)) {
			if !validHeaderName(name) {
				v.add(p+".headers."+name, "not a header name")
				continue
			}
			cs.headers = append(cs.headers, cheader{name: http.CanonicalHeaderKey(name), val: v.template(p+".headers."+name, st.Headers[name], sc)})
		}
		if st.Body != "" {
			cs.body = v.template(p+".body", st.Body, sc)
		}
		used := []*tmpl{cs.url, cs.body}
		for _, h := range cs.headers {
			used = append(used, h.val)
		}
		for _, t := range used {
			for _, part := range t.partsOrNone() {
				if part.f == fKept && part.kept < earlier && !slices.Contains(cs.needs, part.kept) {
					cs.needs = append(cs.needs, part.kept)
				}
			}
		}
		for _, name := range slices.Sorted(maps.Keys(st.Keep)) {
			e := st.Keep[name]
			if e == nil {
				v.add(p+".keep."+name, "want header or json")
				continue
			}
			x, err := compileExtract(e, false)
			if err != nil {
				v.add(p+".keep."+name, "%v", err)
				continue
			}
			where := "json: " + e.JSON
			if e.Header != "" {
				where = "header: " + e.Header
			}
			cs.keep = append(cs.keep, ckeep{index: kept[name], where: where, x: x})
		}
		if len(st.Answers) == 0 {
			v.add(p+".answers", "required: rules that read an answer into an outcome")
		}
		for j, r := range st.Answers {
			rp := fmt.Sprintf("%s.answers[%d]", p, j)
			if r == nil {
				v.add(rp, "empty: want conditions and an outcome")
				continue
			}
			means, ok := meaningOf(r.Outcome)
			allowed := purchaseMeanings
			if journey != "" {
				allowed = journeyMeanings
			}
			switch {
			case r.Outcome == "":
				v.add(rp+".outcome", "required: one of %s", strings.Join(allowed, ", "))
			case !ok || !slices.Contains(allowed, r.Outcome):
				what := "a purchase's answer means"
				if journey != "" {
					what = "a journey does not buy: its answers mean"
				}
				v.add(rp+".outcome", "%q: %s one of %s", r.Outcome, what, strings.Join(allowed, ", "))
			case means == load.MeansNext && i == len(steps)-1 && journey == "":
				v.add(rp+".outcome", "next: this is the last step (a purchase ends confirmed, declined, sold_out, too_late or error)")
			case means == load.MeansNext && i == len(steps)-1:
				v.add(rp+".outcome", "next: this is the journey's last step (it ends ok, unavailable or error)")
			}
			m, err := compileMatch(&r.Match)
			if err != nil {
				v.add(rp, "%v", err)
				continue
			}
			cs.rules = append(cs.rules, crule{m: m, means: means})
		}
		if i < len(steps)-1 && len(st.Answers) > 0 && !slices.ContainsFunc(st.Answers, func(r *Rule) bool {
			if r == nil {
				return false
			}
			m, _ := meaningOf(r.Outcome)
			return m == load.MeansNext
		}) {
			v.add(p+".answers", "no answer goes on to the next step (give the answer that does outcome: next); steps after this one would never run")
		}
		for j, e := range st.RetryAfter {
			if e == nil {
				v.add(fmt.Sprintf("%s.retry_after[%d]", p, j), "want header, json or after")
				continue
			}
			x, err := compileExtract(e, true)
			if err != nil {
				v.add(fmt.Sprintf("%s.retry_after[%d]", p, j), "%v", err)
				continue
			}
			cs.retry = append(cs.retry, x)
		}
		if st.Reason != nil {
			x, err := compileExtract(st.Reason, false)
			if err != nil {
				v.add(p+".reason", "%v", err)
			}
			cs.reason = x
		}
		if st.Degraded != nil {
			m, err := compileMatch(st.Degraded)
			if err != nil {
				v.add(p+".degraded", "%v", err)
			}
			cs.degraded = m
		}
		out = append(out, cs)
	}
	return out
}

// LoadJourneys is the system's journeys as a load plan knows them, by
// name: the share of each one's visitors who buy, and when (its think
// times after the arrival, times timeScale: a drill's -time-scale).
func (s *System) LoadJourneys(timeScale float64) []load.Journey {
	var out []load.Journey
	for _, name := range slices.Sorted(maps.Keys(s.Journeys)) {
		after := time.Duration(float64(s.ThinkTime(name)) * timeScale).Round(time.Millisecond)
		out = append(out, load.Journey{Name: name, Buy: s.Journeys[name].Buy, BuyAfter: after})
	}
	return out
}

// ThinkTime is the sum of a journey's think times: how long its visitor
// pauses between its pages, whatever they answer.
func (s *System) ThinkTime(journey string) time.Duration {
	var d time.Duration
	if j := s.Journeys[journey]; j != nil {
		for _, st := range j.Steps {
			if st != nil {
				d += st.Think.D()
			}
		}
	}
	return d
}
