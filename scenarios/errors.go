package scenarios

import (
	"github.com/gameday-dev/gameday/internal/fileerr"
	"github.com/gameday-dev/gameday/internal/strictyaml"
)

// Error is one problem with a scenario file, located by file, line and
// field path (Line 0 for a Scenario built in code). Parse and Validate
// return an *Error, or several joined with errors.Join; find them with
// errors.As, or [Errors]. It is the one error type of every input file and
// config gameday checks (matrix.Error, load.FieldError, ...).
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

// clip and clipField shorten what a message quotes from the input, as
// every strict input does: a value, quoted; a field path holding a long
// key.
var (
	clip      = strictyaml.Quote
	clipField = strictyaml.ClipField
)
