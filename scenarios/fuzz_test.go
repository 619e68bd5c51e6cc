package scenarios

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: whatever the input, Parse does not panic, and either returns
// a scenario that validates (and can be scaled and sent to Toxiproxy) or
// errors that are all *Error, naming the file, with a line >= 0.
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*/*.yaml")
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	builtin, _ := fs.Glob(catalog, "catalog/*.yaml")
	for _, p := range builtin {
		b, err := catalog.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("a: &a [x]\nb: *a\n"))
	f.Add([]byte("name: x\n---\nname: y\n"))
	f.Add([]byte("{"))
	f.Add([]byte("\xff\xfe"))

	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("fuzz.yaml", data)
		if err != nil {
			if s != nil {
				t.Errorf("Parse returned a scenario and an error")
			}
			if !onlyErrors(err) {
				t.Fatalf("error is not made of *Error: %#v", err)
			}
			for _, e := range Errors(err) {
				if e.Line < 0 || e.File != "fuzz.yaml" || e.Msg == "" {
					t.Errorf("bad *Error %#v", e)
				}
			}
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("parsed scenario does not validate: %v", err)
		}
		for _, fl := range s.Faults {
			if fl.Toxic != nil {
				if _, err := fl.Toxic.APIAttributes(); err != nil {
					t.Errorf("validated toxic: %v", err)
				}
			}
		}
		_ = s.Scaled(1.5, 0.2)
		_ = s.Load.ShopperPool()
	})
}

// onlyErrors reports whether err is an *Error or a join of them.
func onlyErrors(err error) bool {
	switch e := err.(type) {
	case *Error:
		return true
	case interface{ Unwrap() []error }:
		for _, x := range e.Unwrap() {
			if !onlyErrors(x) {
				return false
			}
		}
		return len(e.Unwrap()) > 0
	}
	return false
}
