//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package matrix

import "errors"

// lockFile is not implemented where flock is missing: updating a matrix
// there would not be safe against a second run.
func lockFile(name string) (unlock func(), err error) {
	return nil, errors.New("locking the matrix needs flock, which this system lacks")
}
