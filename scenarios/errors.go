package scenarios

import (
	"strconv"
	"unicode/utf8"

	"github.com/gameday-dev/gameday/internal/fileerr"
)

// Error is one problem with a scenario file, located by file, line and
// field path (Line 0 for a Scenario built in code). Parse and Validate
// return an *Error, or several joined with errors.Join; find them with
// errors.As, or [Errors].
type Error = fileerr.Error

// Errors returns every *Error in err, which may be one or a tree joined with
// errors.Join; nil when there is none.
func Errors(err error) []*Error { return fileerr.All(err) }

// maxErrors bounds the errors reported at once: past it, a last error says
// how many more there were.
const maxErrors = fileerr.Max

// joinSorted joins errs in the order of their lines (stable), at most
// maxErrors of them, or returns nil when there is none.
func joinSorted(errs []*Error) error { return fileerr.Join(errs) }

// clip shortens a value from the input for an error message, quoted: at
// most 60 characters of it.
func clip(s string) string {
	c, cut := cutRunes(s)
	if cut {
		return strconv.Quote(c) + "..."
	}
	return strconv.Quote(c)
}

// short is clip without the quotes, for numbers as written.
func short(s string) string {
	c, cut := cutRunes(s)
	if cut {
		return c + "..."
	}
	return c
}

// cutRunes returns the first 60 runes of s, and whether that cut any.
func cutRunes(s string) (string, bool) {
	n := 0
	for i := range s {
		if n == 60 {
			return s[:i], true
		}
		n++
	}
	return s, false
}

// clipField shortens a field path that holds a long key from the input.
func clipField(f string) string {
	if len(f) <= 200 {
		return f
	}
	for i := 197; i > 0; i-- {
		if utf8.RuneStart(f[i]) {
			return f[:i] + "..."
		}
	}
	return "..."
}
