package toxi

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/Shopify/toxiproxy/v2/toxics"
	"github.com/gorilla/mux"

	"github.com/gameday-dev/gameday/gameday/toxi/tcp"
)

// A toxic of gameday's draws its toxicity itself (tcp.Toxicity says why):
// Toxiproxy must see it with toxicity 1, so that it always runs the
// toxic's own Pipe, and a client must see the toxicity it set. The routes
// that add or change a toxic move a client's toxicity into the toxic's
// attributes (tcp.ToxicityAttribute) and hand Toxiproxy 1 (toxicityToToxic);
// every answer moves it back (restoreToxicity). Toxiproxy's own toxics
// (reset_peer) keep Toxiproxy's toxicity.

// toxicityToToxic wraps the route that adds a toxic, or the one that
// changes one ({toxic} in the path): a toxicity the body sets on a toxic
// of gameday's goes to the toxic, and Toxiproxy is handed 1.
func toxicityToToxic(api *toxiproxy.ApiServer, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, ok := readAPIBody(w, r)
		if !ok {
			return
		}
		v := mux.Vars(r)
		r.Body = io.NopCloser(bytes.NewReader(toxicityMoved(api, v["proxy"], v["toxic"], body)))
		next(w, r)
	}
}

// toxicityMoved is the body of a request that adds a toxic (toxic empty)
// or changes toxic, with the toxicity moved to the toxic's attributes
// when the toxic draws its own; any other body as it came. So is a body
// that Toxiproxy refuses (it is not an object, its toxicity not a number
// or its attributes not an object), so that Toxiproxy answers it.
func toxicityMoved(api *toxiproxy.ApiServer, proxy, toxic string, body []byte) []byte {
	var m map[string]any
	if decodeNumbers(body, &m) != nil || m == nil {
		return body
	}
	var t toxics.Toxic
	if toxic == "" {
		tk, n := jsonKey(m, "type")
		if n > 1 {
			return body
		}
		typ, _ := m[tk].(string)
		t = toxics.New(&toxics.ToxicWrapper{Type: typ})
	} else if p, err := api.Collection.Get(proxy); err == nil {
		if w := p.Toxics.GetToxic(toxic); w != nil {
			t = w.Toxic
		}
	}
	if t == nil || !tcp.DrawsItsToxicity(t) {
		return body
	}
	ak, n := jsonKey(m, "attributes")
	attrs, isObject := m[ak].(map[string]any)
	switch {
	case n > 1:
		return body
	case n == 0:
		ak, attrs = "attributes", map[string]any{}
	case m[ak] == nil:
		attrs = map[string]any{}
	case !isObject:
		return body
	}
	// What a client sets there directly is not its to set.
	for k := range attrs {
		if strings.EqualFold(k, tcp.ToxicityAttribute) {
			delete(attrs, k)
		}
	}
	tk, n := jsonKey(m, "toxicity")
	switch {
	case n > 1:
		return body
	case n == 1 && m[tk] != nil:
		x, isNumber := m[tk].(json.Number)
		if !isNumber {
			return body
		}
		if _, err := strconv.ParseFloat(string(x), 32); err != nil {
			return body
		}
		attrs[tcp.ToxicityAttribute] = x
		m[tk] = json.Number("1")
	}
	m[ak] = attrs
	b, err := json.Marshal(m)
	if err != nil {
		return body
	}
	return b
}

// jsonKey is the key of m that encoding/json decodes into a struct field
// of that name (it matches case-insensitively), and how many keys of m
// match it: more than one, and Toxiproxy reads them as it reads them.
func jsonKey(m map[string]any, name string) (key string, n int) {
	for k := range m {
		if strings.EqualFold(k, name) {
			key, n = k, n+1
		}
	}
	return key, n
}

// restoreToxicity shows a toxic (x, as an answer shows it) of gameday's
// with the toxicity its client set, which its attributes hold, and
// reports whether x was one.
func restoreToxicity(x map[string]any) bool {
	attrs, ok := x["attributes"].(map[string]any)
	if !ok {
		return false
	}
	v, ok := attrs[tcp.ToxicityAttribute]
	if !ok {
		return false
	}
	if _, isToxic := x["toxicity"]; !isToxic {
		return false
	}
	x["toxicity"] = v
	delete(attrs, tcp.ToxicityAttribute)
	return true
}
