package toxi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/Shopify/toxiproxy/v2/stream"
	"github.com/Shopify/toxiproxy/v2/toxics"

	"github.com/gameday-dev/gameday/gameday/toxi/tcp"
)

// Each direction of a proxy's chain in Toxiproxy starts with a
// pass-through of Toxiproxy's own (its noop, built into the chain), whose
// send watches nothing else. While it is the last of its chain, adding a
// toxic interrupts it; when nothing reads what it hands on (a client that
// reads nothing of a large answer, or has gone), it never sees the
// interrupt, and the addition waits for ever holding the proxy's lock.
//
// gameday's Toxiproxy therefore puts a head of its own after it, in each
// direction of every proxy, before the proxy takes its first connection: a
// pass-through of package tcp (its noop), whose send an interrupt cuts
// short, which it never removes. Toxiproxy interrupts a stub only to add a
// toxic after it (when it is the last), to change or remove its toxic, or
// to remove the toxic after it: with a head that stays after it, the
// chain's first pass-through is never interrupted. The API hides the
// heads: no answer shows them, and their names answer as toxics that are
// not there (an addition under one, as a toxic that exists).

// headNames are the heads' names, by direction.
var headNames = [stream.NumDirections]string{
	stream.Upstream:   "gameday.head.upstream",
	stream.Downstream: "gameday.head.downstream",
}

// isHead reports whether a toxic's name is a head's.
func isHead(name string) bool {
	return name == headNames[stream.Upstream] || name == headNames[stream.Downstream]
}

// addHeads puts the heads in the chains of p, a proxy that has not
// started (it has no connection, and is in no collection yet).
func addHeads(p *toxiproxy.Proxy) error {
	for dir, name := range headNames {
		body := fmt.Sprintf(`{"name":%q,"type":"noop","stream":%q,"toxicity":1}`, name, stream.Direction(dir).String())
		w, err := p.Toxics.AddToxicJson(strings.NewReader(body))
		if err != nil {
			return fmt.Errorf("add gameday's head to proxy %s: %w", p.Name, err)
		}
		// Whatever the registry holds under noop (a test may put
		// Toxiproxy's back), the head is gameday's.
		p.Toxics.Lock()
		w.Toxic, w.BufferSize = new(tcp.Noop), 0
		p.Toxics.Unlock()
	}
	return nil
}

// createProxy is Toxiproxy's route that creates a proxy, with the heads
// put in before the proxy starts: the same body, checks, errors and
// answer, from Toxiproxy's own parts (its proxy, collection and errors).
func createProxy(api *toxiproxy.ApiServer) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		in := toxiproxy.Proxy{Enabled: true}
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			toxiproxyError(w, joined(toxiproxy.ErrBadRequestBody, err.Error()))
			return
		}
		switch {
		case in.Name == "":
			toxiproxyError(w, joined(toxiproxy.ErrMissingField, "name"))
			return
		case in.Upstream == "":
			toxiproxyError(w, joined(toxiproxy.ErrMissingField, "upstream"))
			return
		}
		p := toxiproxy.NewProxy(api, in.Name, in.Listen, in.Upstream)
		if err := addHeads(p); err != nil {
			toxiproxyError(w, err)
			return
		}
		if err := api.Collection.Add(p, in.Enabled); err != nil {
			toxiproxyError(w, err)
			return
		}
		writeJSON(w, http.StatusCreated, withToxics(p))
	}
}

// populate is Toxiproxy's route that creates or replaces a list of
// proxies, with the heads put in before each new proxy starts: every
// entry checked before any is applied, then each in turn, stopping at the
// first that fails, answered with the proxies applied before it.
func populate(api *toxiproxy.ApiServer) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var in []struct {
			toxiproxy.Proxy
			Enabled *bool `json:"enabled"`
		}
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			populated(w, nil, joined(toxiproxy.ErrBadRequestBody, err.Error()))
			return
		}
		for i := range in {
			switch {
			case in[i].Name == "":
				populated(w, nil, joined(toxiproxy.ErrMissingField, fmt.Sprintf("name at proxy %d", i+1)))
				return
			case in[i].Upstream == "":
				populated(w, nil, joined(toxiproxy.ErrMissingField, fmt.Sprintf("upstream at proxy %d", i+1)))
				return
			}
		}
		var done []*toxiproxy.Proxy
		for i := range in {
			p := toxiproxy.NewProxy(api, in[i].Name, in[i].Listen, in[i].Upstream)
			if err := addHeads(p); err != nil {
				populated(w, done, err)
				return
			}
			// A proxy that is the same as the one of that name stays,
			// heads and all; another replaces it.
			got, err := api.Collection.AddOrReplace(p, in[i].Enabled == nil || *in[i].Enabled)
			if err != nil {
				populated(w, done, err)
				return
			}
			done = append(done, got)
		}
		populated(w, done, nil)
	}
}

// populated answers a populate as Toxiproxy does: the proxies applied,
// and the error that stopped it, if any, in the same object.
func populated(w http.ResponseWriter, done []*toxiproxy.Proxy, err error) {
	status := http.StatusCreated
	out := map[string]any{"proxies": nil}
	if err != nil {
		e := asAPIError(err)
		status = e.StatusCode
		out["error"], out["status"] = e.Message, e.StatusCode
	}
	if done != nil {
		ps := make([]any, len(done))
		for i, p := range done {
			ps[i] = withToxics(p)
		}
		out["proxies"] = ps
	}
	writeJSON(w, status, out)
}

// resetToxics is Toxiproxy's reset (every proxy enabled, every toxic
// removed), leaving the heads in place: Toxiproxy's own reset removes
// every stub after its first pass-through, the heads with them.
func resetToxics(api *toxiproxy.ApiServer) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for _, p := range api.Collection.Proxies() {
			if err := p.Start(); err != nil && !errors.Is(err, toxiproxy.ErrProxyAlreadyStarted) {
				toxiproxyError(w, err)
				return
			}
			for _, t := range p.Toxics.GetToxicArray() {
				tw, ok := t.(*toxics.ToxicWrapper)
				if !ok || isHead(tw.Name) {
					continue
				}
				if err := p.Toxics.RemoveToxic(r.Context(), tw.Name); err != nil && !errors.Is(err, toxiproxy.ErrToxicNotFound) {
					toxiproxyError(w, err)
					return
				}
			}
		}
		w.WriteHeader(http.StatusNoContent)
	}
}

// withToxics is how Toxiproxy shows a proxy: its fields and its toxics
// (the heads among them, which the API's answers hide).
func withToxics(p *toxiproxy.Proxy) any {
	return struct {
		*toxiproxy.Proxy
		Toxics []toxics.Toxic `json:"toxics"`
	}{p, p.Toxics.GetToxicArray()}
}

// joined is one of Toxiproxy's errors with a detail, as Toxiproxy words it.
func joined(e *toxiproxy.ApiError, detail string) *toxiproxy.ApiError {
	return &toxiproxy.ApiError{Message: e.Message + ": " + detail, StatusCode: e.StatusCode}
}

// asAPIError is err as Toxiproxy answers it: its own errors with their
// status, any other with 500.
func asAPIError(err error) *toxiproxy.ApiError {
	var e *toxiproxy.ApiError
	if errors.As(err, &e) {
		return e
	}
	return &toxiproxy.ApiError{Message: err.Error(), StatusCode: http.StatusInternalServerError}
}

func toxiproxyError(w http.ResponseWriter, err error) {
	e := asAPIError(err)
	apiError(w, e.StatusCode, e.Message)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		apiError(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
