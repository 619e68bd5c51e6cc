package fileerr_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gameday-dev/gameday/checkout/admission"
	"github.com/gameday-dev/gameday/checkout/payment"
	"github.com/gameday-dev/gameday/gameday/load"
	"github.com/gameday-dev/gameday/gameday/predict"
	"github.com/gameday-dev/gameday/gameday/system"
	"github.com/gameday-dev/gameday/internal/fileerr"
	"github.com/gameday-dev/gameday/matrix"
	"github.com/gameday-dev/gameday/scenarios"
)

// Every input file and every config gameday checks reports its problems as
// *fileerr.Error values, and nothing else: a caller finds them all with
// errors.As or fileerr.All, whichever parser or validator spoke, and each
// names its field and, for a config built in code, the value.
func TestEveryInputReportsOneErrorType(t *testing.T) {
	parse := func(err error) func() error { return func() error { return err } }
	_, scenarioErr := scenarios.Parse("s.yaml", []byte("name: x\nstock: ten\n"))
	_, systemErr := system.Parse("sys.yaml", []byte("name: x\nbogus: 1\n"), nil)
	_, matrixErr := matrix.Parse("m.yaml", []byte("version: 1\nrows:\n  - dependency: payment\n    ownr: x\n"))
	for _, c := range []struct {
		name  string
		err   func() error
		field string // the first error's field
		text  string // in the first error's text: the value, or the line
	}{
		// Files: located by file and line.
		{"scenario file", parse(scenarioErr), "stock", "s.yaml:2: "},
		{"system file", parse(systemErr), "bogus", "sys.yaml:2: "},
		{"matrix", parse(matrixErr), "rows[0].failure", "m.yaml:3: "},
		// Configs built in code: named by field and value.
		{"load plan", load.Plan{Stages: []load.Stage{{Duration: 1, Target: 1}}, Patience: 1}.Validate, "max_shoppers", "max_shoppers 0: "},
		{"predictor model", predict.Model{}.Validate, "stages", "stages 0: "},
		{"payment stand-in", payment.Config{Slots: -1}.Validate, "Slots", "Slots -1: "},
		{"waiting room", admission.Config{InProgress: -1}.Validate, "admission.in_progress", "admission.in_progress -1: "},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.err()
			var first *fileerr.Error
			if !errors.As(err, &first) {
				t.Fatalf("%v: no *fileerr.Error", err)
			}
			if first.Field != c.field || !strings.Contains(first.Error(), c.text) {
				t.Errorf("first error %q (field %q), want field %q and %q", first, first.Field, c.field, c.text)
			}
			for _, leaf := range leaves(err) {
				if _, ok := leaf.(*fileerr.Error); !ok {
					t.Errorf("%q is a %T, not a *fileerr.Error", leaf, leaf)
				}
			}
			if len(fileerr.All(err)) != len(leaves(err)) {
				t.Errorf("fileerr.All found %d of %d errors", len(fileerr.All(err)), len(leaves(err)))
			}
		})
	}
	// The public packages' names are the one type, for callers outside
	// the module.
	var _ *scenarios.Error = (*matrix.Error)(nil)
	var _ *load.FieldError = (*predict.ModelError)(nil)
	var _ *payment.ConfigError = (*admission.ConfigError)(nil)
	var _ *system.Error = (*load.FieldError)(nil)
	var _ *fileerr.Error = (*payment.ConfigError)(nil)
}

// leaves returns the errors in err's tree that wrap nothing.
func leaves(err error) []error {
	switch e := err.(type) {
	case nil:
		return nil
	case interface{ Unwrap() []error }:
		var out []error
		for _, x := range e.Unwrap() {
			out = append(out, leaves(x)...)
		}
		return out
	case interface{ Unwrap() error }:
		return leaves(e.Unwrap())
	}
	return []error{err}
}
