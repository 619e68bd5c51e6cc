//go:build !unix

package predict_test

import "time"

// cpuTime is not measured where getrusage does not exist.
func cpuTime() (time.Duration, bool) { return 0, false }
