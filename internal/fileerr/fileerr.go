// Package fileerr is the one error type of gameday's inputs: the strict
// files (scenarios, system files, the resiliency matrix), a problem
// located by file, line and field, reported several at a time, in line
// order, capped; and the configs checked in code (load.Plan,
// predict.Model, payment.Config, admission.Config), a problem named by
// field and value. Public packages name it with an alias (scenarios.Error,
// matrix.Error, load.FieldError, ...), since a program outside this module
// cannot import an internal package.
package fileerr

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Error is one problem with an input file or config, located by file, line
// and field path. Parsers and validators return an *Error, or several
// joined with errors.Join; find them with errors.As, or [All].
type Error struct {
	File  string // as given to the parser; "" if none (a config built in code)
	Line  int    // 1-based; 0 when unknown, or for the file as a whole
	Field string // path such as "faults[0].for"; "" when no field applies
	// Value is the field's value as the message shows it ("0s", "-1"), for
	// a config built in code, which has no line to point at; "" when Msg
	// says it or there is none to show.
	Value string
	Msg   string
}

// Error formats the error as "FILE:LINE: FIELD VALUE: MSG", leaving out
// what is unknown.
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
	switch {
	case e.Field != "" && e.Value != "":
		b.WriteString(e.Field + " " + e.Value + ": ")
	case e.Field != "" || e.Value != "":
		b.WriteString(e.Field + e.Value + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// All returns every *Error in err, which may be one or a tree joined with
// errors.Join; nil when there is none.
func All(err error) []*Error {
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

// Max bounds the problems reported at once: past it, a last error says how
// many more there were.
const Max = 20

// Join joins errs in the order of their lines (stable), at most Max of
// them, or returns nil when there is none.
func Join(errs []*Error) error {
	if len(errs) == 0 {
		return nil
	}
	slices.SortStableFunc(errs, func(a, b *Error) int { return cmp.Compare(a.Line, b.Line) })
	if len(errs) > Max {
		rest := errs[Max]
		more := &Error{File: rest.File, Line: rest.Line, Msg: fmt.Sprintf("and %d more problems", len(errs)-Max)}
		errs = append(errs[:Max:Max], more)
	}
	all := make([]error, len(errs))
	for i, e := range errs {
		all[i] = e
	}
	return errors.Join(all...)
}
