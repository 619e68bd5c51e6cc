package relay

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"sync"

	"github.com/gameday-dev/gameday/gameday/toxi/tcp"
)

// Pick is the part every request-aware toxic shares: which of the requests
// it matches it acts on, and what it did. Of the matching requests the
// first First (0: no limit), of those every Every-th (0 or 1: each), of
// those a share Probability (absent: all). The draws follow Seed, so the
// same requests in the same order are picked the same way.
//
// Hits is filled by the relay and read back through the API. What a client
// sends for it is ignored.
//
// The toxic's toxicity, the share of connections it acts on, is drawn by
// the relay, once per connection; Toxicity holds it, so that Toxiproxy
// always runs the toxic's pass-through (package tcp says why).
type Pick struct {
	// Kind, when given, is the only kind of request the toxic matches
	// (Kind: "COMMIT", "EVAL", "POST /v1/charges"), without case.
	Kind        string   `json:"kind,omitempty"`
	First       int64    `json:"first"`
	Every       int64    `json:"every"`
	Probability *float64 `json:"probability,omitempty"`
	Seed        uint64   `json:"seed"`
	Hits        Hits     `json:"hits"`
	tcp.Toxicity

	mu      sync.Mutex
	rng     *rand.Rand
	rngSeed uint64
	matched int64
}

// pickAttributes are the attributes Pick adds to a toxic.
var pickAttributes = []string{"kind", "first", "every", "probability", "seed", "hits"}

// check checks the attributes Pick reads, as a client sent them.
func (p *Pick) check(kind string) error {
	if p.First < 0 {
		return fmt.Errorf("%s: first: %d is negative", kind, p.First)
	}
	if p.Every < 0 {
		return fmt.Errorf("%s: every: %d is negative", kind, p.Every)
	}
	if pr := p.Probability; pr != nil && !(*pr >= 0 && *pr <= 1) {
		return fmt.Errorf("%s: probability: %v is not between 0 and 1", kind, *pr)
	}
	return nil
}

// seedStream (re)starts the draws when the seed is new. The seed alone
// decides them: a toxic's name may carry a run's id (the runner's do), and
// the same seed must pick the same requests on every run. Only a toxic
// with no seed (0) draws from its name, so that two of them on one proxy
// do not pick alike. The caller holds the lock under which Toxiproxy
// changes the attributes.
func (p *Pick) seedStream(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.rng != nil && p.rngSeed == p.Seed {
		return
	}
	stream := p.Seed
	if stream == 0 {
		h := fnv.New64a()
		h.Write([]byte(name))
		stream = h.Sum64()
	}
	p.rng = rand.New(rand.NewPCG(stream, stream))
	p.rngSeed = p.Seed
}

// draw says yes with probability pr, from the toxic's seeded stream.
func (p *Pick) draw(pr float64) bool {
	if pr >= 1 {
		return true
	}
	if pr <= 0 {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rng.Float64() < pr
}

// take counts a matching request and says whether the toxic picks it
// (first, every, probability). What it then did is recorded where it did
// it (Hits.hit): a pick whose connection ended first did nothing.
func (p *Pick) take(first, every int64, prob float64) bool {
	p.mu.Lock()
	p.matched++
	k := p.matched
	p.mu.Unlock()
	p.Hits.matched(k)
	if first > 0 && k > first {
		return false
	}
	if every > 1 && k%every != 0 {
		return false
	}
	return p.draw(prob)
}

// Hits is what a request-aware toxic did, read back through the API: how
// many requests matched, how many it acted on (hit; for lost_reply also
// as lost), the first line of the first few of those, and how many
// requests an HTTP toxic let through because they were not HTTP.
type Hits struct {
	mu      sync.Mutex
	Matched int64
	Hit     int64
	First   []string
	NotHTTP int64
	// Kinds counts the requests acted on by kind (Kind).
	Kinds map[string]int64
	// lostToo: the counts also show hit as lost (lost_reply's word).
	lostToo bool
}

// shownHits is how many first lines are kept.
const shownHits = 5

func (h *Hits) matched(k int64) {
	h.mu.Lock()
	h.Matched = max(h.Matched, k)
	h.mu.Unlock()
}

func (h *Hits) hit(req []byte, kind string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.Hit++
	if h.Kinds == nil {
		h.Kinds = map[string]int64{}
	}
	if _, ok := h.Kinds[kind]; ok || len(h.Kinds) < maxKinds {
		h.Kinds[kind]++
	}
	if len(h.First) < shownHits {
		h.First = append(h.First, FirstLine(req))
	}
}

func (h *Hits) notHTTP() {
	h.mu.Lock()
	h.NotHTTP++
	h.mu.Unlock()
}

// Counts returns the counts as they are now.
func (h *Hits) Counts() (matched, hit, notHTTP int64, first []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.Matched, h.Hit, h.NotHTTP, append([]string{}, h.First...)
}

// MarshalJSON shows the counts as they are now.
func (h *Hits) MarshalJSON() ([]byte, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	first := h.First
	if first == nil {
		first = []string{}
	}
	out := struct {
		Matched int64            `json:"matched"`
		Hit     int64            `json:"hit"`
		Lost    *int64           `json:"lost,omitempty"`
		NotHTTP *int64           `json:"not_http,omitempty"`
		First   []string         `json:"first"`
		Kinds   map[string]int64 `json:"kinds,omitempty"`
	}{Matched: h.Matched, Hit: h.Hit, First: first, Kinds: h.Kinds}
	if h.lostToo {
		out.Lost = &h.Hit
	} else {
		out.NotHTTP = &h.NotHTTP
	}
	return json.Marshal(out)
}

// UnmarshalJSON ignores what a client sends: the counts are the relay's.
func (h *Hits) UnmarshalJSON([]byte) error { return nil }
