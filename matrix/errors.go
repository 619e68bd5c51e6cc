package matrix

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Error is one problem with a matrix file, located by file, line and field
// path. Parse returns an *Error, or several joined with errors.Join; find
// them with errors.As or [Errors].
type Error struct {
	File  string // as given to Parse or Load
	Line  int    // 1-based; 0 for the file as a whole
	Field string // path such as "rows[2].last.at"; "" when no field applies
	Msg   string
}

// Error formats the error as "FILE:LINE: FIELD: MSG", leaving out what is
// unknown.
func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			b.WriteString(":" + strconv.Itoa(e.Line))
		}
		b.WriteString(": ")
	} else if e.Line > 0 {
		b.WriteString("line " + strconv.Itoa(e.Line) + ": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors returns every *Error in err, which may be one or a tree joined
// with errors.Join; nil when there is none.
func Errors(err error) []*Error {
	var out []*Error
	var walk func(error)
	walk = func(err error) {
		switch e := err.(type) {
		case nil:
		case *Error:
			out = append(out, e)
		case interface{ Unwrap() []error }:
			for _, x := range e.Unwrap() {
				walk(x)
			}
		case interface{ Unwrap() error }:
			walk(e.Unwrap())
		}
	}
	walk(err)
	return out
}

// ErrNoRow is wrapped by Apply's error when no row of the matrix names the
// result's scenario. A runner that drills scenarios outside the matrix can
// test for it with errors.Is and warn instead of failing.
var ErrNoRow = errors.New("no row of the matrix names this scenario")

// maxErrors bounds the problems reported at once.
const maxErrors = 20

// joinErrors joins errs in line order (stable), at most maxErrors of them
// and a last one saying how many were left out; nil when there is none.
func joinErrors(errs []*Error) error {
	if len(errs) == 0 {
		return nil
	}
	slices.SortStableFunc(errs, func(a, b *Error) int { return cmp.Compare(a.Line, b.Line) })
	if len(errs) > maxErrors {
		rest := errs[maxErrors]
		more := &Error{File: rest.File, Line: rest.Line, Msg: fmt.Sprintf("and %d more problems", len(errs)-maxErrors)}
		errs = append(errs[:maxErrors:maxErrors], more)
	}
	if len(errs) == 1 {
		return errs[0]
	}
	out := make([]error, len(errs))
	for i, e := range errs {
		out[i] = e
	}
	return errors.Join(out...)
}

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
