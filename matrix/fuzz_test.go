package matrix

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/gameday-dev/gameday/scenarios"
)

// FuzzParse: any input gives a matrix or *Error values, never a panic. A
// matrix comes back byte for byte from Marshal, and applying a result to
// its first row gives a file that parses, holds that result, and does not
// change when the result is applied again.
func FuzzParse(f *testing.F) {
	for _, pattern := range []string{"testdata/*.yaml", "testdata/bad/*.yaml", "testdata/check/*.yaml"} {
		files, _ := filepath.Glob(pattern)
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	if scs, err := scenarios.Catalogue(); err == nil {
		if data, err := Starter(scs); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("version: 1\nrows:\n- dependency: a\n  failure: b\n  cadence: daily\n  scenario: x.yaml\n  last:\n"))
	f.Add([]byte("version: 1\nrows: [{dependency: a, failure: b, cadence: 1h, scenario: x.yaml}]"))

	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse("fuzz.yaml", data)
		if err != nil {
			if len(Errors(err)) == 0 {
				t.Fatalf("error without *Error: %v", err)
			}
			return
		}
		if out, _ := m.Marshal(); !bytes.Equal(out, data) {
			t.Fatal("Marshal changed the file")
		}
		rows := m.Rows()
		Due(m, now)
		if len(rows) == 0 {
			return
		}
		r := drills[1]
		r.Scenario = rows[0].Scenario
		if _, err := m.Apply(r); err != nil {
			if errors.Is(err, ErrNoRow) {
				t.Fatalf("the first row's scenario matches no row: %v", err)
			}
			t.Fatalf("Apply: %v", err)
		}
		out, _ := m.Marshal()
		m2, err := Parse("fuzz.yaml", out)
		if err != nil {
			t.Fatalf("Apply wrote a file that does not parse: %v\n%s", err, out)
		}
		if l := m2.Rows()[0].Last; l == nil || l.Verdict != r.Verdict || l.Figures.ChargesWithoutOrder != 2 {
			t.Fatalf("the result is not in row 0: %+v\n%s", l, out)
		}
		if changed, err := m2.Apply(r); err != nil || changed {
			t.Fatalf("second Apply: %v, %v", changed, err)
		}
	})
}
