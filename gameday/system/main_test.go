package system_test

import (
	"os"
	"testing"
)

// TestMain lets the test binary double as the benchmarks' HTTP target: run
// with benchServerEnv=1 it serves (see serveBench) instead of testing, so
// that the server's CPU and memory are not counted as the load generator's;
// with benchWaitingEnv set it is one of two generator processes that hold
// shoppers waiting (see waitBench).
func TestMain(m *testing.M) {
	if os.Getenv(benchServerEnv) == "1" {
		serveBench()
		os.Exit(0)
	}
	if os.Getenv(benchWaitingEnv) != "" {
		os.Exit(waitBench())
	}
	os.Exit(m.Run())
}
