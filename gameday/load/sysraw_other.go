//go:build unix && (!linux || race)

package load

import "syscall"

// The socket calls of sock, the ordinary way: where Go makes system calls
// through the C library, a raw one is not the cheap path; and under the
// race detector, whose model of a program learns from syscall.Read and
// syscall.Write that what one goroutine wrote to a socket another read
// (a test's server and client in one process), which raw calls would hide.
// scripts/test.sh runs this package's tests without the detector too, so
// that the raw calls are tested.

func errno(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	if e, ok := err.(syscall.Errno); ok {
		return e
	}
	return syscall.EIO
}

func sysRead(fd uintptr, b []byte) (int, syscall.Errno) {
	n, err := syscall.Read(int(fd), b)
	return max(n, 0), errno(err)
}

func sysWrite(fd uintptr, b []byte) (int, syscall.Errno) {
	n, err := syscall.Write(int(fd), b)
	return max(n, 0), errno(err)
}

func sysQuiet(fd uintptr) bool {
	var b [1]byte
	_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	return again(errno(err))
}
