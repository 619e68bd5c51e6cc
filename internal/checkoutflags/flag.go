// Package checkoutflags is the one list of the reference system's flags:
// those of "gameday serve checkout" and "gameday serve payment", each with
// its name, its default (from package checkoutdefaults) and its help.
//
// Whatever holds the settings binds its fields to these flags, and the
// bound flags both register themselves on a flag set and render the
// arguments that give those settings: checkout.Config and payment.Config
// do so (their RegisterFlags and Args), and the runner binds a scenario's
// fields to start the two (gameday's checkoutArgs and paymentArgs). The
// package imports nothing of the system under test, so that the runner,
// which links none of it (gameday/deps_test.go), may use it.
//
// Arguments state every setting, defaults included, but a zero that means
// the default: a command line then says what the process was told, and a
// process of another build (another GAMEDAY_IMAGE) runs the settings it
// was given rather than its own defaults.
package checkoutflags

import (
	"flag"
	"fmt"
	"strconv"
	"time"
)

// Value is the type of a flag's value.
type Value interface {
	string | int | int64 | uint32 | float64 | time.Duration
}

// Flag is one command-line flag.
type Flag[T Value] struct {
	// Name is the flag's name, without the dash.
	Name string
	// Default is what a command line without the flag runs with.
	Default T
	// Usage is the flag's help.
	Usage string
	// ZeroIsDefault says that a zero value stands for the default, as
	// every zero field of checkout.Config does: Args leaves it out.
	// Without it a zero is a value of its own (a stand-in with zero
	// latency answers at once) and Args renders it, unless the default is
	// zero too.
	ZeroIsDefault bool
}

// Var is a flag bound to the variable that holds its value.
type Var interface {
	// Register defines the flag on fs, writing to the variable, and sets
	// the variable to the flag's default.
	Register(fs *flag.FlagSet)
	// Args renders the variable as "-name", "value", the default
	// included; nothing for a zero that means the default.
	Args() []string
}

// Bind binds the flag to *p.
func (f Flag[T]) Bind(p *T) Var { return bound[T]{f, p} }

var _ Var = bound[string]{}

type bound[T Value] struct {
	f Flag[T]
	p *T
}

func (b bound[T]) Register(fs *flag.FlagSet) {
	name, usage := b.f.Name, b.f.Usage
	switch p := any(b.p).(type) {
	case *string:
		fs.StringVar(p, name, any(b.f.Default).(string), usage)
	case *int:
		fs.IntVar(p, name, any(b.f.Default).(int), usage)
	case *int64:
		fs.Int64Var(p, name, any(b.f.Default).(int64), usage)
	case *float64:
		fs.Float64Var(p, name, any(b.f.Default).(float64), usage)
	case *time.Duration:
		fs.DurationVar(p, name, any(b.f.Default).(time.Duration), usage)
	case *uint32:
		*p = any(b.f.Default).(uint32)
		fs.Var((*uint32Value)(p), name, usage)
	}
}

func (b bound[T]) Args() []string {
	var zero T
	if *b.p == zero && (b.f.ZeroIsDefault || b.f.Default == zero) {
		return nil
	}
	return []string{"-" + b.f.Name, format(*b.p)}
}

// format writes v as its flag reads it.
func format(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case int:
		return strconv.Itoa(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case uint32:
		return strconv.FormatUint(uint64(v), 10)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case time.Duration:
		return v.String()
	}
	panic(fmt.Sprintf("checkoutflags: no format for %T", v))
}

// uint32Value is a flag.Value for a uint32 (the flag package has none).
type uint32Value uint32

func (v *uint32Value) String() string { return strconv.FormatUint(uint64(*v), 10) }

func (v *uint32Value) Set(s string) error {
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return fmt.Errorf("want a whole number, got %q", s)
	}
	*v = uint32Value(n)
	return nil
}

// Register registers every var on fs.
func Register(fs *flag.FlagSet, vars []Var) {
	for _, v := range vars {
		v.Register(fs)
	}
}

// Args renders every var, in their order.
func Args(vars []Var) []string {
	var args []string
	for _, v := range vars {
		args = append(args, v.Args()...)
	}
	return args
}
