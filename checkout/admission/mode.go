package admission

import (
	"fmt"
	"strings"
)

// Mode is how the checkout admits requests; see the package doc.
type Mode string

// The admission modes.
const (
	ModeNone         Mode = ""              // today's behaviour: admit all, honour the deadline
	ModeQueue        Mode = "queue"         // admit all, ignore the deadline, detached charge
	ModeDeadline     Mode = "deadline"      // admit all, honour the deadline
	ModeLottery      Mode = "lottery"       // at most N in progress, the rest refused at once
	ModeFair         Mode = "fair"          // waiting room in order of first attempt
	ModeFairDeadline Mode = "fair-deadline" // fair, and honour the deadline
	ModePaced        Mode = "paced"         // in order of first attempt, each told when to come back or "not today"
)

var modes = []Mode{ModeNone, ModeQueue, ModeDeadline, ModeLottery, ModeFair, ModeFairDeadline, ModePaced}

// Modes returns every mode, ModeNone first.
func Modes() []Mode { return append([]Mode(nil), modes...) }

// ParseMode reads a mode by name; "" and "none" are ModeNone.
func ParseMode(s string) (Mode, error) {
	if s == "none" {
		return ModeNone, nil
	}
	for _, m := range modes {
		if string(m) == s {
			return m, nil
		}
	}
	names := make([]string, len(modes))
	for i, m := range modes {
		names[i] = m.String()
	}
	return "", fmt.Errorf("admission mode %q: want one of %s", s, strings.Join(names, ", "))
}

// String is the mode's name, "none" for ModeNone. The predicates below
// take "none" as ModeNone too, as ParseMode does.
func (m Mode) String() string {
	if m == ModeNone {
		return "none"
	}
	return string(m)
}

// HonoursDeadline reports whether the checkout honours the shopper's
// deadline: it answers too_late instead of starting a charge it cannot
// finish in time, and abandons a charge still waiting at the deadline.
func (m Mode) HonoursDeadline() bool {
	return m == ModeNone || m == "none" || m == ModeDeadline || m == ModeFairDeadline || m == ModePaced
}

// DetachedCharge reports whether a charge survives the shopper's request
// going away: the checkout ignores the deadline and runs the purchase on a
// context that the request's end does not cancel.
func (m Mode) DetachedCharge() bool {
	return m == ModeQueue || m == ModeLottery || m == ModeFair
}

// WaitingRoom reports whether the mode limits the checkouts in progress and
// answers the others with RefusalWaitingRoom.
func (m Mode) WaitingRoom() bool {
	return m == ModeLottery || m == ModeFair || m == ModeFairDeadline || m == ModePaced
}

// Fair reports whether the mode admits in order of first attempt, with
// signed tokens (and a room that wants Tick called).
func (m Mode) Fair() bool { return m == ModeFair || m == ModeFairDeadline || m == ModePaced }
