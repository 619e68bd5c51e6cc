//go:build !unix

package load

import "time"

// cpuTime is not measured where getrusage does not exist.
func cpuTime() (time.Duration, bool) { return 0, false }
