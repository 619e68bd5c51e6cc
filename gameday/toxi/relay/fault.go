package relay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/Shopify/toxiproxy/v2/toxics"
)

// toxic is a request-aware toxic as Toxiproxy holds it.
type toxic interface {
	toxics.Toxic
	pick() *Pick
	check() error
}

// kinds are the request-aware toxic types: a new value of each, and the
// attributes a client may set besides Pick's.
var kinds = map[string]struct {
	make  func() toxic
	attrs []string
}{
	LostReplyType:        {func() toxic { return new(LostReply) }, []string{"match", "then"}},
	HTTPErrorType:        {func() toxic { return new(HTTPError) }, append(slices.Clone(httpMatchAttributes), "status", "retry_after", "body", "content_type")},
	HTTPLostResponseType: {func() toxic { return new(HTTPLostResponse) }, append(slices.Clone(httpMatchAttributes), "then")},
	HTTPLatencyType:      {func() toxic { return new(HTTPLatency) }, append(slices.Clone(httpMatchAttributes), "latency", "jitter")},
	HTTPMalformedType:    {func() toxic { return new(HTTPMalformed) }, append(slices.Clone(httpMatchAttributes), "how")},
}

func init() {
	for name, k := range kinds {
		toxics.Register(name, k.make())
	}
}

// Types are the request-aware toxic types, sorted: the toxics gameday's
// Toxiproxy serves beyond Toxiproxy's own, each on a proxy with a relay.
func Types() []string { return slices.Sorted(maps.Keys(kinds)) }

// IsType reports whether typ is a request-aware toxic type.
func IsType(typ string) bool { _, ok := kinds[typ]; return ok }

// IsHTTP reports whether typ is one of the HTTP toxics, which act only on
// connections that speak HTTP/1.x.
func IsHTTP(typ string) bool { return strings.HasPrefix(typ, "http_") && IsType(typ) }

// Check checks a request-aware toxic's attributes as a client sent them
// (a JSON object): each error names the attribute.
func Check(typ string, raw json.RawMessage) error {
	k, ok := kinds[typ]
	if !ok {
		return fmt.Errorf("%s is not a request-aware toxic", typ)
	}
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		raw = json.RawMessage("{}")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return fmt.Errorf("%s: attributes: %v", typ, err)
	}
	known := append(slices.Clone(k.attrs), pickAttributes...)
	for name := range m {
		if !slices.Contains(known, name) {
			shown := slices.DeleteFunc(slices.Clone(known), func(a string) bool { return a == "hits" })
			slices.Sort(shown)
			return fmt.Errorf("%s has no attribute %q; it has %s", typ, name, strings.Join(shown, ", "))
		}
	}
	t := k.make()
	if err := json.Unmarshal(raw, t); err != nil {
		return fmt.Errorf("%s: attributes: %v", typ, err)
	}
	return t.check()
}

// Fault is a request-aware toxic as the relay applies it: its attributes
// as they were when it was read, with its Pick for the draws and the hits,
// which last as long as the toxic does.
type Fault struct {
	Name     string
	Type     string
	toxicity float64
	first    int64
	every    int64
	prob     float64
	pick     *Pick
	// kind: only requests of this kind (Kind), compared without case.
	kind string

	// lost_reply: match over the request's bytes.
	match *regexp.Regexp
	// HTTP toxics: which requests, by method, target and one header.
	method, path *regexp.Regexp
	header       string
	headerValue  *regexp.Regexp

	// what it does: the answer lost (lost_reply, http_lost_response),
	// then held (hold) or answered 502 (bad), else reset.
	lose, hold, bad bool
	// http_error: the answer the relay gives itself.
	answer *synthetic
	// http_latency: the delay of the answer.
	latency, jitter time.Duration
	// http_malformed: how the answer is spoiled.
	malformed string
}

// http reports whether f acts only on HTTP requests.
func (f *Fault) http() bool { return IsHTTP(f.Type) }

// NewFault reads the request-aware toxic t's attributes (the caller holds
// the lock under which Toxiproxy changes them) into what the relay
// applies. ok is false for a toxic that is not request-aware.
func NewFault(name string, toxicity float32, t toxics.Toxic) (f *Fault, ok bool, err error) {
	rt, ok := t.(toxic)
	if !ok {
		return nil, false, nil
	}
	if err := rt.check(); err != nil {
		return nil, true, fmt.Errorf("%s: %v", name, err)
	}
	p := rt.pick()
	f = &Fault{Name: name, toxicity: float64(toxicity), first: p.First, every: p.Every, prob: 1, pick: p, kind: p.Kind}
	if p.Probability != nil {
		f.prob = *p.Probability
	}
	switch x := rt.(type) {
	case *LostReply:
		f.Type, f.lose, f.hold = LostReplyType, true, x.Then == "hold"
		if x.Match != "" {
			f.match = regexp.MustCompile(x.Match)
		}
		p.Hits.mu.Lock()
		p.Hits.lostToo = true
		p.Hits.mu.Unlock()
	case *HTTPError:
		f.Type = HTTPErrorType
		f.setMatch(&x.HTTPMatch)
		f.answer = x.synthetic()
	case *HTTPLostResponse:
		f.Type = HTTPLostResponseType
		f.setMatch(&x.HTTPMatch)
		f.lose, f.hold, f.bad = true, x.Then == "hang", x.Then == "502"
	case *HTTPLatency:
		f.Type = HTTPLatencyType
		f.setMatch(&x.HTTPMatch)
		f.latency, f.jitter = time.Duration(x.Latency)*time.Millisecond, time.Duration(x.Jitter)*time.Millisecond
	case *HTTPMalformed:
		f.Type = HTTPMalformedType
		f.setMatch(&x.HTTPMatch)
		f.malformed = x.How
		if f.malformed == "" {
			f.malformed = "truncate"
		}
	}
	p.seedStream(name)
	return f, true, nil
}

func (f *Fault) setMatch(m *HTTPMatch) {
	if m.Method != "" {
		f.method = regexp.MustCompile("^(?:" + m.Method + ")$")
	}
	if m.Path != "" {
		f.path = regexp.MustCompile(m.Path)
	}
	if name, value, ok := strings.Cut(m.Header, ":"); ok {
		f.header = http.CanonicalHeaderKey(strings.TrimSpace(name))
		f.headerValue = regexp.MustCompile(strings.TrimSpace(value))
	}
}

// takes says whether f acts on the request of kind kind whose first bytes
// are req (and, for an HTTP request, whose head is h), counting it when it
// matches.
func (f *Fault) takes(req []byte, h *head, kind string) bool {
	if f.kind != "" && !SameKind(f.kind, kind) {
		return false
	}
	if f.match != nil && !f.match.Match(req) {
		return false
	}
	if h != nil {
		if f.method != nil && !f.method.MatchString(h.method) {
			return false
		}
		if f.path != nil && !f.path.MatchString(h.target) {
			return false
		}
		if f.header != "" && !slices.ContainsFunc(h.header.Values(f.header), f.headerValue.MatchString) {
			return false
		}
	}
	return f.pick.take(f.first, f.every, f.prob)
}

// acted records that f did what it does to the request of kind kind whose
// first bytes are req: called as it does it, before the client can see it
// done.
func (f *Fault) acted(req []byte, kind string) { f.pick.Hits.hit(req, kind) }
