package drive

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/gameday-dev/gameday/gameday/runrecord"
)

// requestsTimeout bounds the reading of the requests the relays saw.
const requestsTimeout = 5 * time.Second

// requests reads what kinds of request each dependency received since
// start, from the relays behind their proxies (docs/explore.md): only
// gameday's Toxiproxy has relays, and only a proxy with one sees requests.
// A Toxiproxy that has none gives none and no error.
func (d *drill) requests(ctx context.Context, start time.Time) ([]runrecord.DependencyRequests, error) {
	tp := d.Environment.Toxiproxy()
	if tp == nil || d.Sys == nil {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), requestsTimeout)
	defer cancel()
	caps, stock, err := tp.Served(ctx)
	if err != nil || stock || len(caps.Relayed) == 0 {
		return nil, nil // no relay: nothing seen, and nothing wrong
	}
	var out []runrecord.DependencyRequests
	for _, dep := range slices.Sorted(maps.Keys(d.Sys.Dependencies)) {
		proxy, ok := d.Environment.ProxyName(dep)
		if !ok || !slices.Contains(caps.Relayed, proxy) {
			continue
		}
		got, err := tp.Requests(ctx, proxy, start.Unix())
		if err != nil {
			return out, fmt.Errorf("read the requests %s received from the Toxiproxy at %s: %w", dep, tp.Addr(), err)
		}
		dr := runrecord.DependencyRequests{Dependency: dep, Kinds: []runrecord.RequestKind{}}
		for _, k := range got.Kinds {
			rk := runrecord.RequestKind{Kind: k.Kind}
			for sec, n := range k.Seconds {
				i := int(sec - start.Unix())
				if i < 0 {
					continue
				}
				for len(rk.PerSecond) <= i {
					rk.PerSecond = append(rk.PerSecond, 0)
				}
				rk.PerSecond[i] += n
				rk.Count += n
			}
			if rk.Count > 0 {
				dr.Kinds = append(dr.Kinds, rk)
			}
		}
		out = append(out, dr)
	}
	return out, nil
}
