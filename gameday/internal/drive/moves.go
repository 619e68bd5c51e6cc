package drive

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gameday-dev/gameday/gameday/env"
	"github.com/gameday-dev/gameday/gameday/podmove"
	"github.com/gameday-dev/gameday/gameday/runrecord"
	"github.com/gameday-dev/gameday/gameday/system"
	"github.com/gameday-dev/gameday/internal/stats"
	"github.com/gameday-dev/gameday/internal/wait"
)

// MoveShop carries out one move; tests replace it with a mover broken on
// purpose.
var MoveShop = func(ctx context.Context, m *podmove.Move) podmove.Result { return m.Run(ctx) }

// moves runs a scenario's moves on the load's timeline.
type moves struct {
	wg sync.WaitGroup
	// noMore ends the wait for moves not begun (the load is over).
	noMore context.CancelFunc
	mu     sync.Mutex
	recs   []runrecord.Move
	rdb    *redis.Client
}

// startMoves starts the scenario's moves, each at its time from start,
// one after the other in time order (a move that starts while the one
// before it runs waits for it). When ctx ends first, the moves not begun
// never begin, and one under way rolls back; when the load ends (wait),
// the moves not begun never begin, and one under way finishes.
func (d *drill) startMoves(ctx context.Context, start time.Time) *moves {
	waitCtx, noMore := context.WithCancel(ctx)
	ms := &moves{noMore: noMore}
	plan := d.Scenario.MovesByTime()
	if len(plan) == 0 {
		return ms
	}
	p, ok := d.Environment.(env.Podded)
	if !ok {
		return ms // refused at setup: moves need pods
	}
	pods := p.Pods()
	addr, password := p.RoutingStore()
	ms.rdb = redis.NewClient(&redis.Options{Addr: addr, Password: password, MaxRetries: -1, DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second})
	h := http.Header{}
	if tok := d.Environment.AdminToken(); tok != "" {
		h.Set("Authorization", "Bearer "+tok)
	}
	where := map[string]string{}
	for _, sh := range d.Scenario.Shops {
		where[sh.Name] = sh.Pod
	}
	ms.wg.Add(1)
	go func() {
		defer ms.wg.Done()
		for _, m := range plan {
			from := where[m.Shop]
			rec := runrecord.Move{Name: m.Name, Shop: m.Shop, From: from, To: m.To}
			if !wait.Until(waitCtx, start.Add(m.At.D())) {
				ms.add(rec)
				continue
			}
			if from == m.To {
				// An earlier move of the shop did not complete, and it is
				// still on the pod this one would take it to.
				rec.Error = fmt.Sprintf("%s is on %s already (an earlier move of it did not complete): not moved", m.Shop, from)
				ms.add(rec)
				continue
			}
			mv := &podmove.Move{
				ID: d.Prefix + "-" + m.Name, Shop: m.Shop, SKU: system.ShopSKU(m.Shop, d.Sys.SKU),
				From: podmove.Pod{Name: from, URL: pods[from], Header: h}, To: podmove.Pod{Name: m.To, URL: pods[m.To], Header: h},
				Router: d.Environment.CheckoutURL(), Store: ms.rdb,
			}
			r := MoveShop(ctx, mv)
			rec.AtMS = stats.MS(r.Began.Sub(start))
			rec.Outcome, rec.Units, rec.ReadOnlyMS, rec.Steps, rec.Error = r.Outcome, r.Units, stats.MS(r.ReadOnly), r.Steps, r.Err
			if r.Outcome == podmove.Completed {
				where[m.Shop] = m.To
			}
			ms.add(rec)
		}
	}()
	return ms
}

func (ms *moves) add(r runrecord.Move) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	ms.recs = append(ms.recs, r)
}

// wait begins no more moves, waits for the one under way to end and
// returns what they did.
func (ms *moves) wait() []runrecord.Move {
	ms.noMore()
	ms.wg.Wait()
	if ms.rdb != nil {
		_ = ms.rdb.Close()
	}
	return ms.recs
}
