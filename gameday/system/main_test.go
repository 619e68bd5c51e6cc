package system_test

import (
	"os"
	"testing"
)

// TestMain lets the test binary double as the benchmarks' HTTP target: run
// with benchServerEnv=1 it serves (see serveBench) instead of testing, so
// that the server's CPU and memory are not counted as the load generator's.
func TestMain(m *testing.M) {
	if os.Getenv(benchServerEnv) == "1" {
		serveBench()
		os.Exit(0)
	}
	os.Exit(m.Run())
}
