//go:build !unix

package testenv

import "time"

// CPUTime is not measured where getrusage does not exist.
func CPUTime() (time.Duration, bool) { return 0, false }
