package system_test

import (
	"runtime"
	"strings"
	"testing"
)

// TestHoldSplitHoldsEveryShopperAtOnce runs the two-process hold of
// BenchmarkMemoryPerWaitingShopper small: 400 shoppers, 200 from each
// generator process, all waiting at once, every one confirmed when let go,
// and the figures summed over both processes.
func TestHoldSplitHoldsEveryShopperAtOnce(t *testing.T) {
	a, b := startBenchServers(t), startBenchServers(t)
	w, err := holdSplit(a[0], b[0], 400)
	if err != nil {
		t.Fatal(err)
	}
	if w.Shoppers != 400 {
		t.Errorf("held %d shoppers, want 400", w.Shoppers)
	}
	if runtime.GOOS == "linux" && w.RSS <= 0 {
		t.Errorf("resident memory of the generators: %d, want their sum", w.RSS)
	}
	if w.Heap+w.Stack <= 0 {
		t.Errorf("heap %.0f and stack %.0f grew by nothing with 400 shoppers waiting", w.Heap, w.Stack)
	}
}

// TestHoldSplitFailsWhenAHalfCannotWait: a generator whose server is
// not there cannot hold its shoppers, and the hold says which, rather
// than reporting the other half's memory as the whole.
func TestHoldSplitFailsWhenAHalfCannotWait(t *testing.T) {
	a := startBenchServers(t)
	_, err := holdSplit(a[0], "http://127.0.0.1:1", 200)
	if err == nil {
		t.Fatal("a hold with one generator's server missing succeeded")
	}
	if !strings.Contains(err.Error(), "generator") {
		t.Errorf("error %q does not name the generator", err)
	}
	t.Log(err)
}
