package fileerr

import (
	"errors"
	"fmt"
	"testing"
)

func TestErrorFormat(t *testing.T) {
	for _, c := range []struct {
		e    Error
		want string
	}{
		// Everything known.
		{Error{File: "payment-latency.yaml", Line: 14, Field: "faults[0].for", Msg: `"2" is not a duration (write "2s")`}, `payment-latency.yaml:14: faults[0].for: "2" is not a duration (write "2s")`},
		// The file as a whole.
		{Error{File: "a.yaml", Msg: "empty"}, "a.yaml: empty"},
		// No field applies.
		{Error{File: "a.yaml", Line: 3, Msg: "bad YAML"}, "a.yaml:3: bad YAML"},
		// Parsed from bytes without a name.
		{Error{Line: 3, Field: "stock", Msg: "required"}, "line 3: stock: required"},
		// Built in code: no file, no line.
		{Error{Field: "stock", Msg: "required"}, "stock: required"},
		// A config built in code names the value instead of a line.
		{Error{Field: "max_shoppers", Value: "0", Msg: "must be between 1 and 1000000"}, "max_shoppers 0: must be between 1 and 1000000"},
	} {
		if got := c.e.Error(); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
}

func TestJoinSortsCapsAndAllFindsThem(t *testing.T) {
	var errs []*Error
	for i := Max + 5; i > 0; i-- {
		errs = append(errs, &Error{File: "f", Line: i, Msg: fmt.Sprint("problem ", i)})
	}
	joined := Join(errs)
	all := All(fmt.Errorf("wrapped: %w", joined))
	if len(all) != Max+1 {
		t.Fatalf("%d errors, want %d and a summary", len(all), Max+1)
	}
	for i := range Max {
		if all[i].Line != i+1 {
			t.Fatalf("error %d is line %d: not in line order", i, all[i].Line)
		}
	}
	if last := all[Max]; last.Msg != "and 5 more problems" {
		t.Errorf("summary = %q", last.Msg)
	}
	if Join(nil) != nil || All(errors.New("plain")) != nil {
		t.Error("nothing to join or find should be nil")
	}
}
