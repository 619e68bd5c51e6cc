package system

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gameday-dev/gameday/gameday/load"
	"github.com/gameday-dev/gameday/gameday/runrecord"
	"github.com/gameday-dev/gameday/internal/noredirect"
)

// maxAnswer bounds the body read from one answer, maxKept a value kept
// from one (a longer one is not kept: the shopper would carry it on every
// later request).
const (
	maxAnswer = 64 << 10
	maxKept   = 4 << 10
)

// Flow is a system's purchase as a load.Target: for each call it renders
// the step's request, sends it, and reads the answer with the step's
// rules. It keeps a sample of every kind of answer no rule understood.
type Flow struct {
	c   *compiled
	sku string
	run string
	hc  *http.Client
	now func() time.Time
	// think scales the journeys' think times (a drill's -time-scale).
	think float64

	mu        sync.Mutex
	unmatched map[unmatchedKey]*Unmatched
	// empty counts, by step and kept value, the requests sent with a
	// value an earlier step keeps still empty.
	empty map[emptyKey]int
}

type emptyKey struct {
	step *cstep
	kept int
}

var (
	_ load.Target = (*Flow)(nil)
	_ load.Keeper = (*Flow)(nil)
)

// Unmatched is one kind of answer no rule of a step understood: its step
// and status, how many came, and the first one's content type and body
// (its first 512 bytes), as run.json keeps it.
type Unmatched = runrecord.Unmatched

type unmatchedKey struct {
	step string
	code int
}

// maxUnmatchedKinds bounds the kinds of unmatched answers kept.
const maxUnmatchedKinds = 32

// Flow returns the purchase as a load.Target that sends with hc (nil:
// load.NewClient()), never following a redirect (a copy of hc that refuses
// them: a 3xx is the checkout's answer, for the rules). run is the run's
// id prefix ({{.Run}}).
func (s *System) Flow(hc *http.Client, run string) *Flow {
	if hc == nil {
		hc = load.NewClient()
	} else {
		hc = noredirect.Refuse(hc)
	}
	return &Flow{c: s.compiled, sku: s.SKU, run: run, hc: hc, now: time.Now, think: 1, unmatched: map[unmatchedKey]*Unmatched{}, empty: map[emptyKey]int{}}
}

// ScaleThink scales the journeys' think times by x (a drill's
// -time-scale: its patience is scaled, and a visitor's pauses with it).
// Call it before the load starts.
func (f *Flow) ScaleThink(x float64) {
	if x > 0 {
		f.think = x
	}
}

// ShopSKU is the SKU a shop sells in a sale across shops (a scenario's
// shops, docs/pods.md): the shop's name, a dot and the system's SKU
// ("hot.sku-1"), so that shops that share a pod never share stock. {{.SKU}}
// renders it in a purchase step, and in the setup and books of each shop.
func ShopSKU(shop, sku string) string {
	if shop == "" {
		return sku
	}
	return shop + "." + sku
}

// Keeps is how many values a shopper keeps (see load.Keeper).
func (f *Flow) Keeps() int { return len(f.c.keepNames) }

// buffers hold answers while they are read; nothing read from one outlives
// Do but copies.
var buffers = sync.Pool{New: func() any { b := make([]byte, 0, 1<<10); return &b }}

// readAnswer reads up to maxAnswer bytes of r into b's spare room, growing
// it as needed (an answer past maxAnswer is cut there).
func readAnswer(b []byte, r io.Reader) ([]byte, error) {
	for len(b) < maxAnswer {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):min(cap(b), maxAnswer)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
	return b, nil
}

// Do sends call's step and reads its answer.
func (f *Flow) Do(ctx context.Context, call *load.Call) (load.Answer, error) {
	steps := f.c.steps
	if call.Journey != "" {
		var ok bool
		if steps, ok = f.c.journeys[call.Journey]; !ok {
			return load.Answer{}, fmt.Errorf("no journey %q", call.Journey)
		}
	}
	if call.Step < 0 || call.Step >= len(steps) {
		return load.Answer{}, fmt.Errorf("no step %d (the %s has %d)", call.Step, cmp.Or(call.Journey, "purchase"), len(steps))
	}
	st := steps[call.Step]
	v := Values{CheckoutID: call.CheckoutID, Shopper: call.Shopper, Number: call.Number, Session: call.Session,
		Step: st.name, Attempt: call.Attempt, Deadline: call.Deadline, Kept: call.Kept, SKU: f.sku, Shop: call.Shop, Run: f.run}
	if call.Shop != "" {
		v.SKU = ShopSKU(call.Shop, f.sku)
	}
	for _, k := range st.needs {
		if k < len(call.Kept) && call.Kept[k] == "" {
			f.mu.Lock()
			f.empty[emptyKey{st, k}]++
			f.mu.Unlock()
		}
	}
	var scratch [256]byte
	u := string(st.url.render(scratch[:0], &v))
	var body io.Reader
	if st.body != nil {
		// The body is the request's own: the transport may still be
		// reading it after Do returns (an answer that came before the
		// whole body went).
		body = bytes.NewBuffer(st.body.render(make([]byte, 0, 256), &v))
	}
	req, err := http.NewRequestWithContext(ctx, st.method, u, body)
	if err != nil {
		return load.Answer{}, fmt.Errorf("%s: %w", st.label, err)
	}
	for _, h := range st.headers {
		val := h.val.render(scratch[:0], &v)
		if len(val) > 0 {
			req.Header[h.name] = []string{string(val)}
		}
	}
	resp, err := f.hc.Do(req)
	if err != nil {
		return load.Answer{}, fmt.Errorf("%s: %w", st.label, err)
	}
	defer resp.Body.Close()
	buf := buffers.Get().(*[]byte)
	b, err := readAnswer((*buf)[:0], resp.Body)
	defer func() { *buf = b[:0]; buffers.Put(buf) }()
	ans := load.Answer{Code: resp.StatusCode}
	if err != nil {
		return ans, fmt.Errorf("%s: read the answer: %w", st.label, err)
	}
	for _, k := range st.keep {
		if val, ok := k.x.text(resp.Header, b); ok && len(val) <= maxKept && k.index < len(call.Kept) {
			call.Kept[k.index] = val
		}
	}
	matched := false
	for i := range st.rules {
		if st.rules[i].m.match(resp.StatusCode, resp.Header, b) {
			ans.Means, matched = st.rules[i].means, true
			break
		}
	}
	if !matched {
		ans.Means, ans.Unmatched = load.MeansError, true
		f.sample(st.label, resp, b)
	}
	if ans.Means == load.MeansNext && call.Step+1 < len(steps) {
		ans.Think = time.Duration(float64(steps[call.Step+1].think) * f.think)
	}
	// A wait is read only where the shopper would heed it: a fixed
	// after would otherwise be put on every answer.
	for _, x := range st.retry {
		if ans.Means != load.MeansUnavailable && ans.Means != load.MeansRetryLater {
			break
		}
		if w := x.wait(resp.Header, b, f.now); w > 0 {
			ans.RetryAfter = w
			break
		}
	}
	if st.reason != nil {
		ans.Reason, _ = st.reason.text(resp.Header, b)
	}
	if st.degraded != nil {
		ans.Degraded = st.degraded.match(resp.StatusCode, resp.Header, b)
	}
	return ans, nil
}

func (f *Flow) sample(step string, resp *http.Response, body []byte) {
	k := unmatchedKey{step, resp.StatusCode}
	f.mu.Lock()
	defer f.mu.Unlock()
	if u, ok := f.unmatched[k]; ok {
		u.Count++
		return
	}
	if len(f.unmatched) >= maxUnmatchedKinds {
		return
	}
	s := body[:min(len(body), 512)]
	u := &Unmatched{Step: step, Code: resp.StatusCode, Count: 1,
		ContentType: resp.Header.Get("Content-Type"), Sample: string(bytes.ToValidUTF8(s, []byte(string(utf8.RuneError))))}
	if rq := resp.Request; rq != nil && rq.URL != nil {
		// The method and path as rendered (a kept value that was never
		// found renders empty: /cart//pay); not the host, nor the query,
		// which may carry a key.
		u.Request = rq.Method + " " + rq.URL.EscapedPath()
	}
	f.unmatched[k] = u
}

// Unmatched lists the kinds of answers no rule understood, most frequent
// first.
func (f *Flow) Unmatched() []Unmatched {
	f.mu.Lock()
	out := make([]Unmatched, 0, len(f.unmatched))
	for _, u := range f.unmatched {
		out = append(out, *u)
	}
	f.mu.Unlock()
	return runrecord.JoinUnmatched(out)
}

// EmptyKept says, for each step that sent a value an earlier step keeps
// while it was still empty, how many requests did, in the order of the
// steps: a keep whose path the answers never had (a typo, a field the
// service names otherwise) sends every later step an empty value, and
// the service's answers to that can look like the money's fault.
func (f *Flow) EmptyKept() []runrecord.EmptyKept {
	f.mu.Lock()
	defer f.mu.Unlock()
	order := map[*cstep]int{}
	for i, st := range f.c.all() {
		order[st] = i
	}
	keys := slices.SortedFunc(maps.Keys(f.empty), func(a, b emptyKey) int {
		return cmp.Or(cmp.Compare(order[a.step], order[b.step]), cmp.Compare(a.kept, b.kept))
	})
	var out []runrecord.EmptyKept
	for _, k := range keys {
		out = append(out, runrecord.EmptyKept{Step: k.step.label, Kept: f.c.keepNames[k.kept], Requests: f.empty[k], KeptBy: f.keptBy(k.kept)})
	}
	return out
}

// keptBy names the steps that keep kept value k.
func (f *Flow) keptBy(k int) string {
	var names []string
	for _, st := range f.c.all() {
		for _, kp := range st.keep {
			if kp.index == k {
				names = append(names, fmt.Sprintf("step %s's keep.%s (%s)", st.label, f.c.keepNames[k], kp.where))
			}
		}
	}
	return strings.Join(names, " and ")
}

// CloseIdleConnections closes the client's idle keep-alive connections.
func (f *Flow) CloseIdleConnections() { f.hc.CloseIdleConnections() }
