package matrix

import (
	"errors"

	"github.com/gameday-dev/gameday/internal/fileerr"
)

// Error is one problem with a matrix file, located by file, line and field
// path. Parse returns an *Error, or several joined with errors.Join; find
// them with errors.As or [Errors]. It is the one error type of every input
// file and config gameday checks (scenarios.Error, load.FieldError, ...).
type Error = fileerr.Error

// Errors returns every *Error in err, which may be one or a tree joined
// with errors.Join; nil when there is none.
func Errors(err error) []*Error { return fileerr.All(err) }

// ErrNoRow is wrapped by Apply's error when no row of the matrix names the
// result's scenario. A runner that drills scenarios outside the matrix can
// test for it with errors.Is and warn instead of failing.
var ErrNoRow = errors.New("no row of the matrix names this scenario")
