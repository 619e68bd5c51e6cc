//go:build unix

package testenv

import "syscall"

// RaiseOpenFiles raises this process's limit on open files to at least n
// (the hard limit too, which needs the privilege to).
func RaiseOpenFiles(n uint64) error {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return err
	}
	if l.Cur >= n {
		return nil
	}
	l.Cur = n
	l.Max = max(l.Max, n)
	return syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
}
