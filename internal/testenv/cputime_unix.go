//go:build unix

package testenv

import (
	"syscall"
	"time"
)

// CPUTime is the user plus system CPU time this process has used, for
// benchmarks that report CPU per operation; false where it cannot be read.
func CPUTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
