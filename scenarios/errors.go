package scenarios

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Error is one problem with a scenario file, located by file, line and
// field path. Parse and Validate return an *Error, or several joined with
// errors.Join; find them with errors.As, or [Errors].
type Error struct {
	File  string // as given to Parse or Load; "" if none
	Line  int    // 1-based; 0 when unknown (a Scenario built in code)
	Field string // path such as "faults[0].for"; "" for the file as a whole
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

// Errors returns every *Error in err, which may be one or a tree joined with
// errors.Join; nil when there is none.
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

// maxErrors bounds the errors reported at once: past it, a last error says
// how many more there were.
const maxErrors = 20

// joinSorted joins errs in the order of their lines (stable), at most
// maxErrors of them, or returns nil when there is none.
func joinSorted(errs []*Error) error {
	if len(errs) == 0 {
		return nil
	}
	slices.SortStableFunc(errs, func(a, b *Error) int { return cmp.Compare(a.Line, b.Line) })
	if len(errs) > maxErrors {
		rest := errs[maxErrors]
		more := &Error{File: rest.File, Line: rest.Line, Msg: fmt.Sprintf("and %d more problems", len(errs)-maxErrors)}
		errs = append(errs[:maxErrors:maxErrors], more)
	}
	all := make([]error, len(errs))
	for i, e := range errs {
		all[i] = e
	}
	return errors.Join(all...)
}

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
