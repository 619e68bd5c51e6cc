package toxi

import (
	"encoding/json"
	"net/http"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/gorilla/mux"
)

// asSet wraps every route of the API so that a client sees what it set:
// a toxic's toxicity as it set it (toxicity.go), and none of gameday's
// heads (heads.go), whose names answer as toxics that are not there.
func asSet(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isHead(mux.Vars(r)["toxic"]) {
			apiError(w, toxiproxy.ErrToxicNotFound.StatusCode, toxiproxy.ErrToxicNotFound.Message)
			return
		}
		rec := newRecorder()
		next.ServeHTTP(rec, r)
		body := rec.body.Bytes()
		var v any
		if decodeNumbers(body, &v) == nil {
			if v, changed := shownAsSet(v); changed {
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
	})
}

// shownAsSet is v, an answer of the API, with every head left out of the
// lists of toxics and every toxic's toxicity as its client set it; it
// reports whether it changed anything.
func shownAsSet(v any) (any, bool) {
	changed := false
	switch x := v.(type) {
	case map[string]any:
		changed = restoreToxicity(x)
		for k, e := range x {
			if e, c := shownAsSet(e); c {
				x[k], changed = e, true
			}
		}
	case []any:
		kept := x[:0]
		for _, e := range x {
			if t, ok := e.(map[string]any); ok {
				if name, _ := t["name"].(string); isHead(name) && t["type"] != nil {
					changed = true
					continue
				}
			}
			e, c := shownAsSet(e)
			changed = changed || c
			kept = append(kept, e)
		}
		return kept, changed
	}
	return v, changed
}
