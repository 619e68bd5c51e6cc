package ledger

import (
	"context"
	"fmt"
	"time"

	"github.com/gameday-dev/gameday/gameday/books"
	"github.com/gameday-dev/gameday/gameday/system"
	"github.com/gameday-dev/gameday/internal/wait"
)

// SettleRule says when a drill of sys reads its books after the load; ""
// for a system without books.
func SettleRule(sys *system.System) string {
	b := sys.Books
	switch {
	case !hasBooks(b):
		return ""
	case b.Settled != nil:
		return fmt.Sprintf("once books.settled says they are final, asked every 200ms for at most %s (settle_within)", b.SettleWithin.D())
	case b.SettleAfter.D() > 0:
		return fmt.Sprintf("%s after the load ends (settle_after)", b.SettleAfter.D())
	}
	return "the moment the load ends: " + unsettledWarning
}

// readFinal reports whether a drill reads b once they are final: after
// the system's own settle step (books.settled, or its settle_after), not
// the moment the load ends.
func readFinal(b system.Books) bool { return b.Settled != nil || b.SettleAfter.D() > 0 }

// unsettledWarning is what reading the books the moment the load ends
// risks, for a system that gives neither settled nor settle_after.
const unsettledWarning = "neither books.settled nor books.settle_after is given, so a purchase still finishing then (a hold, a charge, a void) is read half done: it can count as a lost unit, and a charge made after is not seen"

// settleBooks waits until the system says its books are final (its
// settled fact), asking every 200ms for at most its settle_within, or for
// a system without one waits its settle_after. It returns a note when the
// books did not settle in time, and open: they are then read as they are,
// and judged as final (what is still open is the shop's, as a hold never
// given back is, and so is a purchase it accepted and never finished:
// accepted_not_finished). A system that gives neither is read at once, with the note that
// warns of it. When books.settled never answered (every ask failed) the
// system never said whether its books were final: the error, an
// errNeverSettled, says so, and the books read after it only show what
// settling could undo (Provisional).
func settleBooks(ctx context.Context, r *books.Reader, sys *system.System, limit time.Duration) (note string, open bool, err error) {
	b := sys.Books
	if b.Settled == nil {
		if w := b.SettleAfter.D(); w > 0 {
			wait.For(ctx, w)
			return "", false, nil
		}
		if !hasBooks(b) {
			return "", false, nil
		}
		return "the books were read the moment the load ended: " + unsettledWarning, false, nil
	}
	if limit <= 0 {
		limit = b.SettleWithin.D()
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var last error
	var said string // what books.settled last answered; "" while it never did
	for {
		ok, detail, err := r.Settled(ctx, b.Settled)
		switch {
		case err == nil && ok:
			return "", false, nil
		case wait.Cut(ctx, err) && (said != "" || last != nil):
			// the wait's own deadline cut this ask short: keep what
			// books.settled said before it
		case err != nil:
			last = err
		default:
			said, last = detail, nil
		}
		if !wait.For(ctx, 200*time.Millisecond) {
			if said == "" {
				if last == nil {
					last = ctx.Err()
				}
				return "", false, &errNeverSettled{limit: limit, last: last}
			}
			if last != nil {
				said += fmt.Sprintf("; its last ask failed: %v", last)
			}
			return fmt.Sprintf("the books did not settle within %s (books.settled last said: %s); they were read as they were and judged as final: what is still open is the shop's (raise settle_within if it only takes longer)", limit, said), true, nil
		}
	}
}

// errNeverSettled is books.settled failing every ask until settle_within
// ran out: whether the books were final is not known, so they are read as
// they are and judged only as far as books read before they settle can be.
type errNeverSettled struct {
	limit time.Duration
	last  error
}

func (e *errNeverSettled) Error() string {
	return fmt.Sprintf("books.settled never answered within %s (settle_within), so whether the books were final is not known: %v", e.limit, e.last)
}

func (e *errNeverSettled) Unwrap() error { return e.last }
