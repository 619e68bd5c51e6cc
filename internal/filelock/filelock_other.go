//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package filelock

import "errors"

// Lock is not implemented where flock is missing: writing a shared file
// there would not be safe against a second writer.
func Lock(name string) (unlock func(), err error) {
	return nil, errors.New("locking " + name + " needs flock, which this system lacks")
}
