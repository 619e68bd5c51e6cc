package matrix

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gameday-dev/gameday/internal/fileerr"
)

// Error is one problem with a matrix file, located by file, line and field
// path. Parse returns an *Error, or several joined with errors.Join; find
// them with errors.As or [Errors].
type Error = fileerr.Error

// Errors returns every *Error in err, which may be one or a tree joined
// with errors.Join; nil when there is none.
func Errors(err error) []*Error { return fileerr.All(err) }

// ErrNoRow is wrapped by Apply's error when no row of the matrix names the
// result's scenario. A runner that drills scenarios outside the matrix can
// test for it with errors.Is and warn instead of failing.
var ErrNoRow = errors.New("no row of the matrix names this scenario")

// maxErrors bounds the problems reported at once.
const maxErrors = fileerr.Max

// joinErrors joins errs in line order (stable), at most maxErrors of them.
func joinErrors(errs []*Error) error { return fileerr.Join(errs) }

// clip shortens a value quoted in an error message, so that a huge or
// multi-line value cannot flood the terminal.
func clip(s string) string {
	const max = 60
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i] + "…"
	}
	if utf8.RuneCountInString(s) > max {
		r := []rune(s)
		s = string(r[:max]) + "…"
	}
	return strconv.Quote(s)
}
