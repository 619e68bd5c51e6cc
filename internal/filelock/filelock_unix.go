//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

// Package filelock is the lock file gameday's writers of shared files (the
// resiliency matrix, the fault journal) take, so that two runners never
// write one at once, and that leaves no file behind.
package filelock

import (
	"errors"
	"os"
	"syscall"
)

// Lock takes an exclusive flock on the file name, creating it, and waits
// while another process or goroutine holds it. unlock removes the file,
// then releases the lock, so that no lock file stays behind.
//
// Removing a lock file keeps it a lock: a waiter checks, once it holds the
// lock, that the name still refers to the file it locked; when the holder
// removed it meanwhile, the waiter starts again on a new file, so two
// holders never both hold it. (A program that locks the same name without
// this check, such as a gameday older than it, is not kept out.)
func Lock(name string) (unlock func(), err error) {
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
				f.Close() // releases the lock
			}, nil
		}
		f.Close()
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
}
