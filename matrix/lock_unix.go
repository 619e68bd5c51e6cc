//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package matrix

import (
	"errors"
	"os"
	"syscall"
)

// lockFile takes an exclusive flock on the file name, creating it, and
// waits while another process or goroutine holds it. unlock removes the
// file and releases the lock, so that no lock file stays behind.
//
// Removing a lock file is safe because a waiter checks, once it holds the
// lock, that the name still refers to the file it locked; if a holder
// removed it meanwhile, the waiter starts again on the new file.
func lockFile(name string) (unlock func(), err error) {
	for {
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o666)
		if err != nil {
			return nil, err
		}
		for {
			err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
			if !errors.Is(err, syscall.EINTR) {
				break
			}
		}
		if err != nil {
			f.Close()
			return nil, &os.PathError{Op: "flock", Path: name, Err: err}
		}
		held, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, err
		}
		now, err := os.Stat(name)
		if err == nil && os.SameFile(held, now) {
			return func() {
				os.Remove(name)
				f.Close()
			}, nil
		}
		f.Close()
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
}
