package scenarios

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Every built-in scenario parses, validates, is named after its file and
// fits the catalogue's brief: a short drill at modest rates, with a
// description, a matrix row and promises to check.
func TestCatalogue(t *testing.T) {
	all, err := Catalogue()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"baseline", "drop-naive", "drop-reserve", "inventory-down", "inventory-latency", "inventory-lost-reply",
		"payment-429", "payment-down", "payment-killed", "payment-latency", "payment-lost-response", "payment-timeouts",
		"peak-deadline", "peak-fair", "peak-fair-deadline", "peak-lottery", "peak-paced", "peak-queue",
		"pod-hot-shop", "pod-inventory-down", "pod-move", "pod-shared-payment", "product-cache-flush", "product-hot-keys",
		"redis-killed", "redis-reset-peer", "replay-last-year", "sessions-down", "sessions-memory-limit", "store-day"}
	var names []string
	seen := map[string]bool{}
	rows := map[MatrixRow]string{}
	for _, s := range all {
		names = append(names, s.Name)
		if seen[s.Name] {
			t.Errorf("%s: name used twice", s.Name)
		}
		seen[s.Name] = true
		if other, dup := rows[s.Matrix]; dup {
			t.Errorf("%s and %s prove the same matrix row %+v", s.Name, other, s.Matrix)
		}
		rows[s.Matrix] = s.Name
		if s.File != "catalogue:"+s.Name {
			t.Errorf("%s: File %q", s.Name, s.File)
		}
		if err := s.Validate(); err != nil {
			t.Errorf("%s: %v", s.Name, err)
		}
		if strings.TrimSpace(s.Description) == "" || len(s.Summary()) > 100 {
			t.Errorf("%s: want a description whose first line (at most 100 characters) sums it up: %q", s.Name, s.Summary())
		}
		if len(s.Expect) == 0 {
			t.Errorf("%s: no expectation", s.Name)
		}
		if s.Environment.Kind != "local" {
			t.Errorf("%s: environment %q; the catalogue runs locally", s.Name, s.Environment.Kind)
		}
		// The flash-sale drills (docs/flash-sale.md) have the lengths and
		// rates their issue fixed, no fault and no abort guard (shoppers
		// turned away are what they measure); the fault drills are short,
		// moderate, guarded, and about the dependency they break.
		if flashSale := strings.HasPrefix(s.Name, "drop-") || strings.HasPrefix(s.Name, "peak-"); flashSale {
			if len(s.Faults) != 0 || s.Matrix.Dependency == "none" {
				t.Errorf("%s: a flash-sale drill has no fault and names the dependency it overloads, got %d faults, %q", s.Name, len(s.Faults), s.Matrix.Dependency)
			}
		} else if strings.HasPrefix(s.Name, "replay-") {
			// A replay is the recording's part at its speedup: longer
			// than a fault drill, its peak the recording's, bounded so
			// that it stays a drill of minutes on a small machine.
			if total := s.TotalDuration(); total < 30*time.Second || total > 3*time.Minute {
				t.Errorf("%s: load lasts %v, want 30s-3m", s.Name, total)
			}
			if peak := s.Load.PeakRate(); peak > 150 {
				t.Errorf("%s: peak %g arrivals/s, want at most 150", s.Name, peak)
			}
			if s.Load.Replay == nil || s.Abort == nil {
				t.Errorf("%s: a replay-* drill replays a recording, guarded", s.Name)
			}
		} else if strings.HasPrefix(s.Name, "store-") {
			// A store's day: the steady store's streams with a flash
			// sale on top, a drill of under a minute.
			if total := s.TotalDuration(); total < 20*time.Second || total > time.Minute {
				t.Errorf("%s: load lasts %v, want 20s-1m", s.Name, total)
			}
			if peak := s.PeakRate(); peak > 200 {
				t.Errorf("%s: peak %g arrivals/s (streams twice, for their funnels), want at most 200", s.Name, peak)
			}
			if len(s.Load.Streams) == 0 || s.Abort == nil {
				t.Errorf("%s: a store-* drill has streams, guarded", s.Name)
			}
		} else {
			if total := s.TotalDuration(); total < 20*time.Second || total > 40*time.Second {
				t.Errorf("%s: load lasts %v, want 20-40s", s.Name, total)
			}
			if peak := s.Load.PeakRate(); peak < 20 || peak > 60 {
				t.Errorf("%s: peak %g arrivals/s, want 20-60", s.Name, peak)
			}
			if s.Abort == nil {
				t.Errorf("%s: no abort guard", s.Name)
			}
			// A pods drill may overload a dependency every pod shares
			// (its row names it) with a flash sale instead of a fault.
			if pods := strings.HasPrefix(s.Name, "pod-"); (s.Matrix.Dependency == "none") != (len(s.Faults) == 0) && !(pods && len(s.Faults) == 0) {
				t.Errorf("%s: matrix dependency %q with %d faults", s.Name, s.Matrix.Dependency, len(s.Faults))
			}
		}
		if strings.HasPrefix(s.Name, "pod-") != (s.Environment.Pods > 0) {
			t.Errorf("%s: %d pods: the pods drills, and only they, are named pod-*", s.Name, s.Environment.Pods)
		}
		for _, f := range s.Faults {
			// A pods drill faults one pod's dependency: pod-2/inventory
			// on the inventory row.
			if _, dep, inPod := strings.Cut(f.Target, "/"); inPod && s.Environment.Pods > 0 {
				f.Target = dep
			}
			// A cache drill may slow the origin behind the cache too: the
			// day the cache is cleared is the day the origin struggles.
			if origin := strings.HasPrefix(s.Matrix.Failure, "cache-") && f.Target == "catalog"; f.Target != s.Matrix.Dependency && !origin {
				t.Errorf("%s: fault %s on %s, but the row is about %s", s.Name, f.Name, f.Target, s.Matrix.Dependency)
			}
		}
	}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("catalogue %v, want %v (sorted)", names, want)
	}
	if got := CatalogueNames(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("CatalogueNames() = %v", got)
	}

	// Each call returns fresh copies.
	again, err := Catalogue()
	if err != nil {
		t.Fatal(err)
	}
	all[0].Stock = -1
	if again[0].Stock == -1 {
		t.Error("Catalogue returned shared scenarios")
	}
}

func TestLookup(t *testing.T) {
	s, err := Lookup("payment-latency")
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "payment-latency" || s.File != "catalogue:payment-latency" {
		t.Errorf("Lookup(name) = %s from %s", s.Name, s.File)
	}

	// A path: with a slash, or ending in .yaml or .yml.
	s, err = Lookup("testdata/good/tiny.yaml")
	if err != nil || s.Name != "tiny" || s.File != "testdata/good/tiny.yaml" {
		t.Errorf("Lookup(path) = %v, %v", s, err)
	}
	dir := t.TempDir()
	data, _ := os.ReadFile("testdata/good/tiny.yaml")
	if err := os.WriteFile(filepath.Join(dir, "tiny.yml"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	if s, err := Lookup("tiny.yml"); err != nil || s.Name != "tiny" {
		t.Errorf("Lookup(tiny.yml) = %v, %v", s, err)
	}
	// A missing file is an error about the file, not the catalogue.
	if _, err := Lookup("baseline.yaml"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Lookup(baseline.yaml): %v, want a missing file", err)
	}

	_, err = Lookup("payment-slow")
	if !errors.Is(err, ErrNotInCatalogue) {
		t.Fatalf("Lookup(missing) = %v, want ErrNotInCatalogue", err)
	}
	for _, n := range CatalogueNames() {
		if !strings.Contains(err.Error(), n) {
			t.Errorf("error %q does not list %s", err, n)
		}
	}
}

func TestSummary(t *testing.T) {
	for in, want := range map[string]string{
		"":                         "",
		"One line.":                "One line.",
		"  First line.\nSecond.\n": "First line.",
		"\n\nAfter blanks\n":       "After blanks",
	} {
		if got := (&Scenario{Description: in}).Summary(); got != want {
			t.Errorf("Summary(%q) = %q, want %q", in, got, want)
		}
	}
}

// The example in the package documentation is a valid scenario.
func TestDocExample(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(src), "A short one:\n//\n")
	var b strings.Builder
	for line := range strings.Lines(rest) {
		yamlLine, ok := strings.CutPrefix(line, "//\t")
		if !ok {
			break
		}
		b.WriteString(yamlLine)
	}
	if b.Len() == 0 {
		t.Fatal("no example found in doc.go")
	}
	if _, err := Parse("doc.go example", []byte(b.String())); err != nil {
		t.Errorf("%v\n%s", err, b.String())
	}
}
