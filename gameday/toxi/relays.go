package toxi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"sync"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/Shopify/toxiproxy/v2/toxics"
	"github.com/gorilla/mux"

	"github.com/gameday-dev/gameday/gameday/toxi/relay"
	"github.com/gameday-dev/gameday/gameday/toxi/tcp"
)

// RequestAwareToxics are the toxic types gameday's Toxiproxy serves beyond
// Toxiproxy's own (package relay); a stock Toxiproxy refuses them.
var RequestAwareToxics = relay.Types()

// relays puts a relay (package relay) behind the proxies of the embedded
// Toxiproxy that ask for one: a proxy created with "request_aware": true
// (a field of gameday's, which Toxiproxy ignores), or every proxy when the
// server was started so (EmbeddedOptions.RequestAware). Such a proxy's
// upstream, as Toxiproxy holds it, is its relay's loopback address, and
// the relay forwards to the upstream the API was given. Every route that
// takes or shows a proxy goes through here, so a client of the API sees
// and sets the upstream it named, never the relay. A proxy without a relay
// is Toxiproxy's alone, at Toxiproxy's cost per request.
type relays struct {
	api *toxiproxy.ApiServer
	all bool

	mu     sync.Mutex
	byName map[string]*relay.Relay
	// upstreams maps a relay's address to the upstream it forwards to,
	// for the answers that show a proxy.
	upstreams map[string]string
}

func newRelays(api *toxiproxy.ApiServer, all bool) *relays {
	return &relays{api: api, all: all, byName: map[string]*relay.Relay{}, upstreams: map[string]string{}}
}

// requestAwareField is the field of a proxy, in the API, that asks for a
// relay behind it when the proxy is created (or populated); answers show
// it on the proxies that have one.
const requestAwareField = "request_aware"

// relayFor returns the relay address to give Toxiproxy for proxy name
// toward upstream: the proxy's own relay when it already forwards there,
// so that Toxiproxy sees no change, else a new relay (fresh), which the
// caller keeps or closes.
func (rs *relays) relayFor(name, upstream string) (addr string, fresh *relay.Relay, err error) {
	if r := rs.byName[name]; r != nil && r.Upstream() == upstream {
		return r.Addr(), nil, nil
	}
	r, err := relay.Listen(upstream)
	if err != nil {
		return "", nil, err
	}
	return r.Addr(), r, nil
}

// keep makes r the relay of proxy name, closing the one it replaces.
func (rs *relays) keep(name string, r *relay.Relay) {
	if old := rs.byName[name]; old != nil {
		delete(rs.upstreams, old.Addr())
		_ = old.Close()
	}
	rs.byName[name] = r
	rs.upstreams[r.Addr()] = r.Upstream()
}

// drop closes the relay of a proxy that is gone or no longer has one.
func (rs *relays) drop(name string) {
	if old := rs.byName[name]; old != nil {
		delete(rs.upstreams, old.Addr())
		delete(rs.byName, name)
		_ = old.Close()
	}
}

// closeAll closes every relay.
func (rs *relays) closeAll() {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for name := range rs.byName {
		rs.drop(name)
	}
}

// proxies wraps a route whose body is one proxy (or, many, a list of
// them). A proxy being created (update false) gets a relay when it asks
// for one; a proxy being changed (update) keeps the kind it has, and a
// new upstream of one with a relay gets a new relay. Each upstream given
// to a relayed proxy is swapped for its relay on the way in, and every
// relay address back for the upstream on the way out.
func (rs *relays) proxies(next http.HandlerFunc, many, update bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, ok := readAPIBody(w, r)
		if !ok {
			return
		}
		var err error
		var items []map[string]any
		if many {
			err = decodeNumbers(body, &items)
		} else {
			var one map[string]any
			err = decodeNumbers(body, &one)
			items = []map[string]any{one}
		}
		if err != nil {
			// Toxiproxy answers a body it cannot read as it always does.
			r.Body = io.NopCloser(bytes.NewReader(body))
			rs.showing(next)(w, r)
			return
		}
		rs.mu.Lock()
		defer rs.mu.Unlock()
		fresh := map[string]*relay.Relay{} // relays to keep if Toxiproxy takes the change
		defer func() {
			for _, f := range fresh {
				_ = f.Close()
			}
		}()
		for _, p := range items {
			if p == nil {
				continue
			}
			asked, _ := p[requestAwareField].(bool)
			delete(p, requestAwareField)
			name, _ := p["name"].(string)
			if v := mux.Vars(r)["proxy"]; v != "" {
				name = v
			}
			upstream, ok := p["upstream"].(string)
			if !ok || upstream == "" || name == "" {
				continue // Toxiproxy refuses it, or keeps the upstream it has
			}
			relayed := rs.all || asked
			if update {
				relayed = rs.byName[name] != nil
			}
			if !relayed {
				continue
			}
			addr, f, err := rs.relayFor(name, upstream)
			if err != nil {
				apiError(w, http.StatusInternalServerError, err.Error())
				return
			}
			if f != nil {
				if old := fresh[name]; old != nil {
					_ = old.Close()
				}
				fresh[name] = f
			}
			p["upstream"] = addr
		}
		if many {
			body, err = json.Marshal(items)
		} else {
			body, err = json.Marshal(items[0])
		}
		if err != nil {
			apiError(w, http.StatusInternalServerError, err.Error())
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := newRecorder()
		next(rec, r)
		// Toxiproxy applies a list one proxy at a time, and an update
		// changes the upstream before a restart that may fail: an answer
		// that is not 2xx may still have changed some. What it holds now
		// decides, whatever it answered.
		rs.reconcileLocked(fresh)
		rs.shown(w, rec)
	}
}

// reconcileLocked makes the relays agree with the proxies Toxiproxy holds:
// a fresh relay a proxy now dials is kept (closing the one it replaces),
// and a relay no proxy dials any more (its proxy deleted, or created again
// or changed to dial elsewhere) is closed. Fresh relays left over are
// closed by the caller. Then each relay gets its proxy's request-aware
// toxics. rs.mu is held.
func (rs *relays) reconcileLocked(fresh map[string]*relay.Relay) {
	for name, f := range fresh {
		if rs.dials(name) == f.Addr() {
			rs.keep(name, f)
			delete(fresh, name)
		}
	}
	for name, r := range rs.byName {
		if rs.dials(name) != r.Addr() {
			rs.drop(name)
		}
	}
	rs.refreshLocked("")
}

// dials is the upstream Toxiproxy's proxy name dials, or "" when there is
// no such proxy.
func (rs *relays) dials(name string) string {
	p, err := rs.api.Collection.Get(name)
	if err != nil {
		return ""
	}
	p.Lock()
	defer p.Unlock()
	return p.Upstream
}

// deleted wraps the route that removes a proxy: its relay goes with it.
func (rs *relays) deleted(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rs.mu.Lock()
		defer rs.mu.Unlock()
		rec := newRecorder()
		next(rec, r)
		rs.reconcileLocked(nil)
		rs.shown(w, rec)
	}
}

// showing wraps a route that shows proxies: every relay address in its
// answer reads as the upstream it forwards to.
func (rs *relays) showing(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rec := newRecorder()
		next(rec, r)
		rs.mu.Lock()
		defer rs.mu.Unlock()
		rs.shown(w, rec)
	}
}

// toxicsChanged wraps a route that adds, changes or removes toxics (or
// resets them all): a request-aware toxic's attributes are checked first,
// and the relays apply what the proxy holds afterwards.
func (rs *relays) toxicsChanged(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		proxy := mux.Vars(r)["proxy"]
		if r.Method == http.MethodPost || r.Method == http.MethodPatch {
			body, ok := readAPIBody(w, r)
			if !ok {
				return
			}
			if err := rs.checkToxic(proxy, mux.Vars(r)["toxic"], body); err != nil {
				apiError(w, http.StatusBadRequest, err.Error())
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		next(w, r)
		rs.mu.Lock()
		defer rs.mu.Unlock()
		rs.refreshLocked(proxy)
	}
}

// checkToxic checks the attributes of a request-aware toxic being added
// (toxic empty: its type is in the body) or changed; it returns what is
// wrong, or nil (Toxiproxy checks the rest).
func (rs *relays) checkToxic(proxy, toxic string, body []byte) error {
	var t struct {
		Type       string          `json:"type"`
		Attributes json.RawMessage `json:"attributes"`
	}
	if json.Unmarshal(body, &t) != nil {
		return nil // Toxiproxy answers a body it cannot read
	}
	if toxic != "" {
		t.Type = ""
		if p, err := rs.api.Collection.Get(proxy); err == nil {
			if w := p.Toxics.GetToxic(toxic); w != nil {
				t.Type = w.Type
			}
		}
	}
	if relay.IsType(t.Type) {
		if err := relay.Check(t.Type, t.Attributes); err != nil {
			return err
		}
		if rs.relayed(proxy) == nil {
			if _, err := rs.api.Collection.Get(proxy); err != nil {
				return nil // Toxiproxy answers 404
			}
			return fmt.Errorf("proxy %s has no relay behind it, which a %s toxic needs: create the proxy with %q: true, or run gameday serve toxiproxy -request-aware", proxy, t.Type, requestAwareField)
		}
	}
	return nil
}

// relayed returns the relay of proxy name, or nil.
func (rs *relays) relayed(name string) *relay.Relay {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.byName[name]
}

// refreshLocked gives each relay (of proxy, or of every proxy when it is
// empty) the request-aware toxics its proxy holds now. rs.mu is held.
func (rs *relays) refreshLocked(proxy string) {
	names := []string{proxy}
	if proxy == "" {
		names = slices.Collect(maps.Keys(rs.byName))
	}
	for _, name := range names {
		r := rs.byName[name]
		if r == nil {
			continue
		}
		p, err := rs.api.Collection.Get(name)
		if err != nil {
			r.SetFaults(nil)
			continue
		}
		var fs []*relay.Fault
		for _, t := range p.Toxics.GetToxicArray() {
			w, ok := t.(*toxics.ToxicWrapper)
			if !ok {
				continue
			}
			// Toxiproxy changes a toxic's attributes under this lock.
			p.Toxics.Lock()
			f, aware, err := relay.NewFault(w.Name, tcp.ToxicityOf(w), w.Toxic)
			p.Toxics.Unlock()
			if aware && err == nil {
				fs = append(fs, f)
			}
		}
		r.SetFaults(fs)
	}
}

// shown writes a recorded answer, each relay address in it replaced by
// the upstream the relay forwards to. rs.mu is held.
func (rs *relays) shown(w http.ResponseWriter, rec *recorder) {
	body := rec.body.Bytes()
	var v any
	if len(rs.upstreams) > 0 && decodeNumbers(body, &v) == nil {
		if rs.unrelay(v) {
			if b, err := json.Marshal(v); err == nil {
				body = b
			}
		}
	}
	for k, vs := range rec.header {
		w.Header()[k] = vs
	}
	w.Header().Del("Content-Length")
	w.WriteHeader(rec.status)
	_, _ = w.Write(body)
}

// unrelay replaces, anywhere in v, an "upstream" that is a relay's address
// by the upstream it forwards to, and marks its proxy request_aware; it
// reports whether it replaced any.
func (rs *relays) unrelay(v any) bool {
	changed := false
	switch x := v.(type) {
	case map[string]any:
		if s, ok := x["upstream"].(string); ok {
			if up, ok := rs.upstreams[s]; ok {
				x["upstream"] = up
				x[requestAwareField] = true
				changed = true
			}
		}
		for k, e := range x {
			if k != "upstream" {
				changed = rs.unrelay(e) || changed
			}
		}
	case []any:
		for _, e := range x {
			changed = rs.unrelay(e) || changed
		}
	}
	return changed
}

// decodeNumbers decodes JSON keeping numbers as they were written, so that
// what is encoded again says the same (a seed above 2^53 included).
func decodeNumbers(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return d.Decode(v)
}

// recorder holds a handler's answer so that it can be rewritten.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func newRecorder() *recorder {
	return &recorder{header: http.Header{}, status: http.StatusOK}
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(code int) { r.status = code }

func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }

// Capabilities is what gameday's Toxiproxy answers at CapabilitiesPath: the
// toxic types it serves, those of them that need a relay behind the proxy,
// and the proxies that have one. A stock Toxiproxy answers that path 404.
type Capabilities struct {
	Toxics       []string `json:"toxics"`
	RequestAware []string `json:"request_aware"`
	Relayed      []string `json:"relayed"`
}

// CapabilitiesPath is the route of Capabilities.
const CapabilitiesPath = "/gameday/toxics"

func (rs *relays) capabilities(w http.ResponseWriter, _ *http.Request) {
	types := slices.Sorted(maps.Keys(toxics.ToxicRegistry))
	types = slices.DeleteFunc(types, func(t string) bool { return t == "noop" })
	rs.mu.Lock()
	relayed := slices.Sorted(maps.Keys(rs.byName))
	rs.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(Capabilities{Toxics: types, RequestAware: RequestAwareToxics, Relayed: relayed})
}

// RequestsPath is the route that says what kinds of request a relayed
// proxy's relay saw (Requests), from the second given as ?since= (Unix
// time; 0 or none: all it keeps, the last hour).
const RequestsPath = "/gameday/proxies/{proxy}/requests"

// Requests is what gameday's Toxiproxy answers at RequestsPath: the kinds
// of the requests the proxy's relay saw (relay.Kind), each by the second.
type Requests struct {
	Proxy string            `json:"proxy"`
	Kinds []relay.KindCount `json:"kinds"`
}

func (rs *relays) requests(w http.ResponseWriter, r *http.Request) {
	name := mux.Vars(r)["proxy"]
	rl := rs.relayed(name)
	if rl == nil {
		apiError(w, http.StatusNotFound, fmt.Sprintf("proxy %s has no relay behind it: only a relayed proxy sees requests", name))
		return
	}
	var since int64
	if v := r.URL.Query().Get("since"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			apiError(w, http.StatusBadRequest, fmt.Sprintf("since: %q is not a Unix time in seconds", v))
			return
		}
		since = n
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(Requests{Proxy: name, Kinds: rl.Kinds(since)})
}
