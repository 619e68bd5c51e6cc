package checkout

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/gameday-dev/gameday/checkout/payment"
)

// voider gives money back. A void is first recorded in the inventory Redis
// (Inventory.Abandon, or by the claim and sweep scripts), so it survives
// this process; then the provider is asked at once, and the sweeper asks
// again every interval until the provider has confirmed. Voids do not go
// through the payment breaker: it protects shoppers from waiting on a sick
// provider, and nobody waits on a void.
type voider struct {
	inv      *Inventory
	pay      *payment.Client
	timeout  time.Duration // one call to the provider
	grace    time.Duration // how long an expired lease's payment may still be claimed
	interval time.Duration
	log      *slog.Logger
	m        *metrics

	stop   chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	sem    chan struct{}
}

const (
	maxVoidsInFlight = 32
	voidRetry        = 2 * time.Second
	sweepBatch       = 200
)

func newVoider(inv *Inventory, pay *payment.Client, timeout, grace, interval time.Duration, log *slog.Logger, m *metrics) *voider {
	ctx, cancel := context.WithCancel(context.Background())
	v := &voider{inv: inv, pay: pay, timeout: timeout, grace: grace, interval: interval, log: log, m: m,
		stop: make(chan struct{}), ctx: ctx, cancel: cancel, sem: make(chan struct{}, maxVoidsInFlight)}
	v.wg.Add(1)
	go v.sweepLoop()
	return v
}

// now asks the provider to void a charge already recorded as pending.
func (v *voider) now(sku, key string) {
	v.wg.Add(1)
	go func() {
		defer v.wg.Done()
		select {
		case v.sem <- struct{}{}:
			defer func() { <-v.sem }()
		case <-v.ctx.Done():
			return // still pending in Redis: the next sweeper voids it
		}
		v.void(sku, key)
	}()
}

func (v *voider) void(sku, key string) {
	ctx, cancel := context.WithTimeout(v.ctx, v.timeout)
	err := v.pay.Void(ctx, key)
	cancel()
	retry := time.Duration(0)
	if err != nil {
		retry = voidRetry
		v.m.voids.WithLabelValues("failed").Inc()
		v.log.Warn("void failed; it stays pending and will be retried", "charge_key", key, "err", err)
	} else {
		v.m.voids.WithLabelValues("done").Inc()
		v.log.Info("charge voided", "charge_key", key)
	}
	rctx, rcancel := context.WithTimeout(context.Background(), v.timeout)
	defer rcancel()
	if err := v.inv.Voided(rctx, sku, key, retry); err != nil {
		v.log.Warn("could not record the void's progress; the sweeper will ask the provider again", "charge_key", key, "err", err)
	}
}

// sweepLoop finds the charges of leases that expired unclaimed (their
// checkout died or gave up) and every void not yet confirmed, and voids
// them.
func (v *voider) sweepLoop() {
	defer v.wg.Done()
	t := time.NewTicker(v.interval)
	defer t.Stop()
	for {
		select {
		case <-v.stop:
			return
		case <-t.C:
		}
		v.sweep()
	}
}

func (v *voider) sweep() {
	ctx, cancel := context.WithTimeout(v.ctx, 5*time.Second)
	defer cancel()
	skus, err := v.inv.SKUs(ctx)
	if err != nil {
		return // inventory unreachable: try again next tick
	}
	var wg sync.WaitGroup
	for _, sku := range skus {
		keys, err := v.inv.Sweep(ctx, sku, v.grace, sweepBatch)
		if err != nil {
			continue
		}
		for _, key := range keys {
			select {
			case v.sem <- struct{}{}:
			case <-v.ctx.Done():
				wg.Wait()
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-v.sem }()
				v.void(sku, key)
			}()
		}
	}
	wg.Wait()
}

// close stops the sweeper and gives the voids in flight a few seconds to
// finish. Voids not yet confirmed stay pending in Redis, for the next
// checkout's sweeper.
func (v *voider) close() {
	close(v.stop)
	done := make(chan struct{})
	go func() { v.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		v.cancel()
		<-done
	}
	v.cancel()
}
