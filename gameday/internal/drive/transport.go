package drive

import (
	"slices"
	"sort"
	"strings"

	"github.com/gameday-dev/gameday/gameday/load"
	"github.com/gameday-dev/gameday/gameday/runrecord"
)

// transportKinds name the errors of a request that got no answer, by a
// word of their text; the first that matches.
var transportKinds = []struct{ kind, text string }{
	{"connection refused", "connection refused"},
	{"connection reset", "connection reset"},
	{"connection reset", "broken pipe"},
	{"timeout", "deadline exceeded"},
	{"timeout", "timeout"},
	{"EOF", "EOF"},
	{"no such host", "no such host"},
	{"TLS", "tls:"},
}

// transportErrors counts the requests of r (purchases and visits) that got no answer, by kind,
// most frequent first, each with the first one's error as a sample. A
// shopper's request cut by its own deadline is a timeout like any other.
func transportErrors(r *load.Report) []runrecord.TransportError {
	at := map[string]int{}
	var out []runrecord.TransportError
	// The visits' requests too: a product page's refused connection is
	// the system's as much as a purchase's.
	for _, s := range slices.Concat(r.Shoppers, r.Visits) {
		for _, a := range s.Attempts {
			if a.Code != 0 || a.Err == "" {
				continue
			}
			kind := "other"
			for _, k := range transportKinds {
				if strings.Contains(a.Err, k.text) {
					kind = k.kind
					break
				}
			}
			if j, ok := at[kind]; ok {
				out[j].Count++
				continue
			}
			at[kind] = len(out)
			out = append(out, runrecord.TransportError{Kind: kind, Count: 1, Sample: clipError(a.Err)})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Count > out[j].Count })
	return out
}

// clipError keeps an error's first 200 bytes.
func clipError(s string) string {
	if len(s) <= 200 {
		return s
	}
	return s[:200] + "…"
}
