package checkout

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/gameday-dev/gameday/checkout/payment"
)

// voider gives money back in the background: a charge whose outcome is
// unknown, or whose unit is gone, is voided by its idempotency key, retried
// with backoff for a while when the provider cannot be reached. Voids do not
// go through the payment breaker: the breaker protects shoppers from waiting
// on a sick provider, and nobody waits on a void.
type voider struct {
	pay      *payment.Client
	retryFor time.Duration
	timeout  time.Duration
	log      *slog.Logger
	m        *metrics
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	sem      chan struct{}
}

const maxVoidsInFlight = 256

func newVoider(pay *payment.Client, retryFor, timeout time.Duration, log *slog.Logger, m *metrics) *voider {
	ctx, cancel := context.WithCancel(context.Background())
	return &voider{pay: pay, retryFor: retryFor, timeout: timeout, log: log, m: m, ctx: ctx, cancel: cancel, sem: make(chan struct{}, maxVoidsInFlight)}
}

// precheck runs before a void and may call it off (false): it is how a
// void waits until the inventory has made sure no order can appear.
type precheck func(ctx context.Context) (bool, error)

func (v *voider) enqueue(key, reason string, pre precheck) {
	v.m.voids.WithLabelValues("requested").Inc()
	v.wg.Add(1)
	go func() {
		defer v.wg.Done()
		select {
		case v.sem <- struct{}{}:
			defer func() { <-v.sem }()
		case <-v.ctx.Done():
			v.abandon(key, reason)
			return
		}
		v.run(key, reason, pre)
	}()
}

func (v *voider) run(key, reason string, pre precheck) {
	until := time.Now().Add(v.retryFor)
	backoff := 50 * time.Millisecond
	for {
		ctx, cancel := context.WithTimeout(v.ctx, v.timeout)
		err := error(nil)
		if pre != nil {
			var proceed bool
			proceed, err = pre(ctx)
			if err == nil && !proceed {
				cancel()
				v.m.voids.WithLabelValues("called_off").Inc()
				v.log.Info("void called off: the order exists", "checkout_id", key)
				return
			}
			if err == nil {
				pre = nil // abandoned for good; only the void is left to do
			}
		}
		if err == nil {
			err = v.pay.Void(ctx, key)
		}
		cancel()
		if err == nil {
			v.m.voids.WithLabelValues("done").Inc()
			v.log.Info("charge voided", "checkout_id", key, "reason", reason)
			return
		}
		if v.ctx.Err() != nil || time.Now().Add(backoff).After(until) {
			v.abandon(key, reason)
			return
		}
		select {
		case <-time.After(backoff):
		case <-v.ctx.Done():
			v.abandon(key, reason)
			return
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

func (v *voider) abandon(key, reason string) {
	v.m.voids.WithLabelValues("abandoned").Inc()
	v.log.Error("void abandoned; reconcile this charge by hand", "checkout_id", key, "reason", reason)
}

func (v *voider) close() {
	v.cancel()
	v.wg.Wait()
}
