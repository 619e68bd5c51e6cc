package relay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"regexp"
	"sync"
	"unicode/utf8"

	"github.com/Shopify/toxiproxy/v2/toxics"
)

// LostReplyType is the toxic's type name in Toxiproxy's API.
const LostReplyType = "lost_reply"

func init() { toxics.Register(LostReplyType, new(LostReply)) }

// LostReply is the lost_reply toxic: a request the toxic picks reaches the
// upstream whole, the upstream does the work and answers, and the answer
// is discarded; the client's connection then ends at once (then: reset)
// or stays open and silent until the client gives up (then: hold).
//
// Which requests: those whose bytes match Match (a regular expression, Go
// syntax; empty matches every request), of those the first First (0: no
// limit), of those every Every-th (0 or 1: each), of those a share
// Probability (absent: all). Toxicity, as for every Toxiproxy toxic, is
// the share of connections it acts on, drawn once per connection. The
// draws follow Seed, so the same requests in the same order are hit the
// same way.
//
// Hits is filled by the relay and read back through the API: how many
// requests matched, how many answers were lost, and the first line of the
// first few lost ones. What a client sends for it is ignored.
type LostReply struct {
	Match       string   `json:"match"`
	First       int64    `json:"first"`
	Every       int64    `json:"every"`
	Probability *float64 `json:"probability,omitempty"`
	Then        string   `json:"then"`
	Seed        uint64   `json:"seed"`
	Hits        Hits     `json:"hits"`

	mu      sync.Mutex
	rng     *rand.Rand
	rngSeed uint64
	matched int64
}

// Pipe passes the data through: the relay behind the proxy does the work.
func (t *LostReply) Pipe(stub *toxics.ToxicStub) { passThrough(stub) }

// passThrough is Toxiproxy's noop: every chunk on, until interrupted or
// the stream ends.
func passThrough(stub *toxics.ToxicStub) {
	for {
		select {
		case <-stub.Interrupt:
			return
		case c := <-stub.Input:
			if c == nil {
				stub.Close()
				return
			}
			stub.Output <- c
		}
	}
}

// LostReplyAttributes are the attributes a client may set, for checking
// a request before Toxiproxy takes it.
var LostReplyAttributes = []string{"match", "first", "every", "probability", "then", "seed", "hits"}

// CheckLostReply checks a lost_reply toxic's attributes as a client sent
// them (a JSON object): each error names the attribute.
func CheckLostReply(raw json.RawMessage) error {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return fmt.Errorf("lost_reply: attributes: %v", err)
	}
	for k := range m {
		known := false
		for _, a := range LostReplyAttributes {
			known = known || k == a
		}
		if !known {
			return fmt.Errorf("lost_reply has no attribute %q; it has match, first, every, probability, then and seed", k)
		}
	}
	var a struct {
		Match       *string  `json:"match"`
		First       *int64   `json:"first"`
		Every       *int64   `json:"every"`
		Probability *float64 `json:"probability"`
		Then        *string  `json:"then"`
		Seed        *uint64  `json:"seed"`
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return fmt.Errorf("lost_reply: attributes: %v", err)
	}
	if a.Match != nil {
		if _, err := regexp.Compile(*a.Match); err != nil {
			return fmt.Errorf("lost_reply: match: %v", err)
		}
	}
	if a.First != nil && *a.First < 0 {
		return fmt.Errorf("lost_reply: first: %d is negative", *a.First)
	}
	if a.Every != nil && *a.Every < 0 {
		return fmt.Errorf("lost_reply: every: %d is negative", *a.Every)
	}
	if p := a.Probability; p != nil && !(*p >= 0 && *p <= 1) {
		return fmt.Errorf("lost_reply: probability: %v is not between 0 and 1", *p)
	}
	if a.Then != nil && *a.Then != "" && *a.Then != "reset" && *a.Then != "hold" {
		return fmt.Errorf("lost_reply: then: %q is neither reset nor hold", *a.Then)
	}
	return nil
}

// Fault is a lost_reply toxic as the relay applies it: its attributes as
// they were when it was read, with the toxic itself for the draws and the
// hits, which last as long as the toxic does.
type Fault struct {
	Name     string
	toxicity float64
	match    *regexp.Regexp
	first    int64
	every    int64
	prob     float64
	hold     bool
	toxic    *LostReply
}

// NewFault reads t's attributes (the caller holds the lock under which
// Toxiproxy changes them) into what the relay applies.
func NewFault(name string, toxicity float32, t *LostReply) (*Fault, error) {
	f := &Fault{Name: name, toxicity: float64(toxicity), first: t.First, every: t.Every, prob: 1, hold: t.Then == "hold", toxic: t}
	if t.Match != "" {
		re, err := regexp.Compile(t.Match)
		if err != nil {
			return nil, fmt.Errorf("lost_reply %s: match: %v", name, err)
		}
		f.match = re
	}
	if t.Probability != nil {
		f.prob = *t.Probability
	}
	t.mu.Lock()
	if t.rng == nil || t.rngSeed != t.Seed {
		// The seed alone: a toxic's name may carry a run's id (the
		// runner's do), and the same seed must pick the same requests on
		// every run. Only a toxic with no seed (0) draws from its name, so
		// that two of them on one proxy do not pick alike.
		stream := t.Seed
		if stream == 0 {
			h := fnv.New64a()
			h.Write([]byte(name))
			stream = h.Sum64()
		}
		t.rng = rand.New(rand.NewPCG(stream, stream))
		t.rngSeed = t.Seed
	}
	t.mu.Unlock()
	return f, nil
}

// draw says yes with probability p, from the toxic's seeded stream.
func (t *LostReply) draw(p float64) bool {
	if p >= 1 {
		return true
	}
	if p <= 0 {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.rng.Float64() < p
}

// hits says whether the request req (its first bytes) is one whose answer
// the fault loses, and records it when it is.
func (f *Fault) hits(req []byte) bool {
	if f.match != nil && !f.match.Match(req) {
		return false
	}
	t := f.toxic
	t.mu.Lock()
	t.matched++
	k := t.matched
	t.mu.Unlock()
	t.Hits.matched(k)
	if f.first > 0 && k > f.first {
		return false
	}
	if f.every > 1 && k%f.every != 0 {
		return false
	}
	if !t.draw(f.prob) {
		return false
	}
	t.Hits.lost(req)
	return true
}

// Hits is what a lost_reply toxic did, read back through the API.
type Hits struct {
	mu      sync.Mutex
	Matched int64    `json:"matched"`
	Lost    int64    `json:"lost"`
	First   []string `json:"first"`
}

// shownHits is how many lost requests' first lines are kept.
const shownHits = 5

func (h *Hits) matched(k int64) {
	h.mu.Lock()
	h.Matched = max(h.Matched, k)
	h.mu.Unlock()
}

func (h *Hits) lost(req []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.Lost++
	if len(h.First) < shownHits {
		h.First = append(h.First, FirstLine(req))
	}
}

// MarshalJSON shows the counts as they are now.
func (h *Hits) MarshalJSON() ([]byte, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	first := h.First
	if first == nil {
		first = []string{}
	}
	return json.Marshal(struct {
		Matched int64    `json:"matched"`
		Lost    int64    `json:"lost"`
		First   []string `json:"first"`
	}{h.Matched, h.Lost, first})
}

// UnmarshalJSON ignores what a client sends: the counts are the relay's.
func (h *Hits) UnmarshalJSON([]byte) error { return nil }

// FirstLine shows a request in a line of at most 100 characters: an
// HTTP request by its request line ("POST /v1/charges HTTP/1.1"), any
// other by its first bytes, those that are not printable text written as
// \xNN ("*3\x0d\x0a$4\x0d\x0aEVAL…" for Redis, "Q\x00\x00\x00\x0bcommit\x00"
// for a Postgres query).
func FirstLine(req []byte) string {
	if i := bytes.Index(req, []byte("\r\n")); i >= 0 && bytes.Contains(req[:i], []byte(" HTTP/1.")) {
		req = req[:i]
	}
	const most = 100
	var b []byte
	for len(req) > 0 && len(b) < most {
		r, size := utf8.DecodeRune(req)
		if r == utf8.RuneError || r < 0x20 || r == 0x7f {
			b = fmt.Appendf(b, `\x%02x`, req[0])
			req = req[1:]
			continue
		}
		b = append(b, req[:size]...)
		req = req[size:]
	}
	if len(req) > 0 {
		b = append(b, "…"...)
	}
	return string(b)
}
