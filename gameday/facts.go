package gameday

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/gameday-dev/gameday/gameday/books"
	"github.com/gameday-dev/gameday/gameday/system"
)

// readFacts reads the books of sys after the drill: every fact the system
// describes, the rows of this run only (their checkout ids start with
// prefix). A fact that cannot be read is an error: the run cannot be
// reconciled.
func readFacts(ctx context.Context, r *books.Reader, sys *system.System, prefix string) (*facts, error) {
	f := &facts{}
	b := sys.Books
	if st := b.Stock; st != nil {
		for _, x := range []struct {
			name string
			q    *system.Query
			dst  **int64
		}{{"available", st.Available, &f.available}, {"initial", st.Initial, &f.initial}, {"reserved", st.Reserved, &f.reserved}, {"sold", st.Sold, &f.sold}} {
			if x.q == nil {
				continue
			}
			v, err := r.Value(ctx, x.q)
			if err != nil {
				return nil, fmt.Errorf("read books.stock.%s: %w", x.name, err)
			}
			n := int64(math.Round(v))
			*x.dst = &n
		}
	}
	if b.Orders != nil {
		rows, err := r.Rows(ctx, b.Orders, []string{"checkout_id", "charge", "units"})
		if err != nil {
			return nil, fmt.Errorf("read books.orders: %w", err)
		}
		f.ordersKnown = true
		for _, row := range rows {
			if !ofRun(row["checkout_id"], prefix) {
				continue
			}
			o := order{checkoutID: row["checkout_id"], charge: row["charge"], units: 1}
			if u, err := strconv.ParseInt(row["units"], 10, 64); err == nil {
				o.units = u
			}
			f.orderCharges = f.orderCharges || o.charge != ""
			f.orders = append(f.orders, o)
		}
	}
	if c := b.Charges; c != nil {
		rows, err := r.Rows(ctx, &c.Query, []string{"checkout_id", "status", "id", "created_at"})
		if err != nil {
			return nil, fmt.Errorf("read books.charges: %w", err)
		}
		words := map[string]string{}
		for canon, ws := range c.Statuses {
			for _, w := range ws {
				words[w] = canon
			}
		}
		f.chargesKnown = true
		for _, row := range rows {
			if !ofRun(row["checkout_id"], prefix) {
				continue
			}
			ch := charge{checkoutID: row["checkout_id"], id: row["id"], status: words[row["status"]]}
			if t, ok := parseTime(row["created_at"]); ok {
				ch.at, f.chargeTimes = t, true
			}
			f.charges = append(f.charges, ch)
		}
	}
	return f, nil
}

// settleBooks waits until the system says its books are final (its
// settled fact), asking every 200ms for at most its settle_within, or for
// a system without one waits its settle_after. It returns a note when the
// books did not settle in time: they are then read as they are.
func settleBooks(ctx context.Context, r *books.Reader, sys *system.System, limit time.Duration) (string, error) {
	b := sys.Books
	if b.Settled == nil {
		if w := b.SettleAfter.D(); w > 0 {
			t := time.NewTimer(w)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
			}
		}
		return "", nil
	}
	if limit <= 0 {
		limit = b.SettleWithin.D()
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var last string
	for {
		ok, detail, err := r.Settled(ctx, b.Settled)
		switch {
		case err == nil && ok:
			return "", nil
		case err != nil:
			last = err.Error()
		default:
			last = detail
		}
		t := time.NewTimer(200 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Sprintf("the books did not settle within %s (books.settled last said: %s); they were read as they were", limit, last), nil
		case <-t.C:
		}
	}
}
