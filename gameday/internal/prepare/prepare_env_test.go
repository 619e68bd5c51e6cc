package prepare

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gameday-dev/gameday/scenarios"
)

// A drive's scenario names the prepared system by any path to it: one
// relative to the working directory, one absolute, one from another
// directory. Another stock is another environment.
func TestSameEnvironmentComparesFilesNotPaths(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.MkdirAll("drills", 0o755); err != nil {
		t.Fatal(err)
	}
	parse := func(file, system string, stock int) *scenarios.Scenario {
		t.Helper()
		src := "name: s\nsystem: " + system + "\nmatrix: {dependency: none, failure: baseline}\nstock: " + strings.Repeat("1", stock) + "\nload:\n  stages: [{duration: 1s, target: 5}]\n"
		sc, err := scenarios.Parse(file, []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		return sc
	}
	base := parse("base.yaml", "shop.yaml", 2)
	for _, sc := range []*scenarios.Scenario{
		parse("drills/x.yaml", "../shop.yaml", 2),
		parse(filepath.Join(dir, "y.yaml"), filepath.Join(dir, "shop.yaml"), 2),
	} {
		if err := SameEnvironment(base, sc); err != nil {
			t.Errorf("%s (system %s): %v", sc.File, sc.System, err)
		}
	}
	if err := SameEnvironment(base, parse("z.yaml", "shop.yaml", 3)); err == nil || !strings.Contains(err.Error(), "stock: differs") {
		t.Errorf("another stock: %v", err)
	}
}
