package checkoutflags

import (
	"flag"
	"io"
	"math"
	"strings"
	"testing"
	"time"
)

// settings is a holder of one flag of each type, to bind.
type settings struct {
	s string
	i int
	n int64
	u uint32
	f float64
	d time.Duration
	z int // whose default is zero
}

func (s *settings) vars(zeroIsDefault bool) []Var {
	return []Var{
		Flag[string]{Name: "s", Default: "def", ZeroIsDefault: zeroIsDefault}.Bind(&s.s),
		Flag[int]{Name: "i", Default: 3, ZeroIsDefault: zeroIsDefault}.Bind(&s.i),
		Flag[int64]{Name: "n", Default: 4, ZeroIsDefault: zeroIsDefault}.Bind(&s.n),
		Flag[uint32]{Name: "u", Default: 5, ZeroIsDefault: zeroIsDefault}.Bind(&s.u),
		Flag[float64]{Name: "f", Default: 0.05, ZeroIsDefault: zeroIsDefault}.Bind(&s.f),
		Flag[time.Duration]{Name: "d", Default: time.Second, ZeroIsDefault: zeroIsDefault}.Bind(&s.d),
		Flag[int]{Name: "z", ZeroIsDefault: zeroIsDefault}.Bind(&s.z),
	}
}

func parse(t *testing.T, zeroIsDefault bool, args []string) settings {
	t.Helper()
	var got settings
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	Register(fs, got.vars(zeroIsDefault))
	if err := fs.Parse(args); err != nil {
		t.Fatalf("parse %q: %v", args, err)
	}
	return got
}

// Args, parsed after Register, gives the values back. It states every
// value, defaults included, but a zero that means the default.
func TestArgsRoundTrip(t *testing.T) {
	defaults := settings{"def", 3, 4, 5, 0.05, time.Second, 0}
	for _, tc := range []struct {
		name          string
		in            settings
		zeroIsDefault bool
		args          string // Args, joined by spaces
		want          settings
	}{
		// The defaults are stated, but a zero default.
		{"defaults", defaults, false, "-s def -i 3 -n 4 -u 5 -f 0.05 -d 1s", defaults},
		// Every value of its own is rendered, in the order bound.
		{"values", settings{"x y", -1, math.MaxInt64, math.MaxUint32, 1e-7, 1500 * time.Millisecond, 9}, false,
			"-s x y -i -1 -n 9223372036854775807 -u 4294967295 -f 1e-07 -d 1.5s -z 9",
			settings{"x y", -1, math.MaxInt64, math.MaxUint32, 1e-7, 1500 * time.Millisecond, 9}},
		// A zero is a value of its own: rendered, and read back as zero;
		// but where the default is zero there is nothing to say.
		{"zeros are values", settings{}, false, "-s  -i 0 -n 0 -u 0 -f 0 -d 0s", settings{}},
		// A zero standing for the default is left out: the default is
		// read back.
		{"zeros are defaults", settings{}, true, "", defaults},
		{"zero is default, values", settings{"def", 7, 4, 5, 0.5, 0, 0}, true, "-s def -i 7 -n 4 -u 5 -f 0.5",
			settings{"def", 7, 4, 5, 0.5, time.Second, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			args := Args(in.vars(tc.zeroIsDefault))
			if got := strings.Join(args, " "); got != tc.args {
				t.Errorf("Args = %q, want %q", got, tc.args)
			}
			if got := parse(t, tc.zeroIsDefault, args); got != tc.want {
				t.Errorf("parsed back %+v, want %+v", got, tc.want)
			}
		})
	}
}

// A bad whole number names the flag and the value.
func TestUint32FlagRefusesBadValues(t *testing.T) {
	for _, v := range []string{"-1", "4294967296", "five", ""} {
		var u uint32
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		Flag[uint32]{Name: "u"}.Bind(&u).Register(fs)
		err := fs.Parse([]string{"-u", v})
		if err == nil || !strings.Contains(err.Error(), "-u") || !strings.Contains(err.Error(), "want a whole number") {
			t.Errorf("-u %q: %v, want an error naming -u", v, err)
		}
	}
}

// Register shows the default in the help as the flag package does for its
// own types.
func TestHelpShowsTheDefault(t *testing.T) {
	var s settings
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	var out strings.Builder
	fs.SetOutput(&out)
	Register(fs, s.vars(false))
	fs.PrintDefaults()
	for _, want := range []string{`(default "def")`, "(default 3)", "(default 4)", "(default 5)", "(default 0.05)", "(default 1s)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("help lacks %s:\n%s", want, out.String())
		}
	}
}
