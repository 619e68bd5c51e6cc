//go:build unix && (!linux || race || msan || asan)

package rawsock

import "syscall"

// Read, Write and Quiet the ordinary way: where Go makes system calls
// through the C library, a raw one is not the cheap path; and under the
// race detector, whose model of a program learns from syscall.Read and
// syscall.Write that what one goroutine wrote to a socket another read
// (a test's server and client in one process), which raw calls would hide
// (and the memory and address sanitizers, which annotate those calls too).
// scripts/test.sh runs the tests of this package and of the generator's
// transport without the detector too, so that the raw calls are tested.

func errno(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	if e, ok := err.(syscall.Errno); ok {
		return e
	}
	return syscall.EIO
}

// Read reads from the socket fd into b with one read(2).
func Read(fd uintptr, b []byte) (int, syscall.Errno) {
	n, err := syscall.Read(int(fd), b)
	return max(n, 0), errno(err)
}

// Write writes b to the socket fd with one write(2).
func Write(fd uintptr, b []byte) (int, syscall.Errno) {
	n, err := syscall.Write(int(fd), b)
	return max(n, 0), errno(err)
}

// Quiet reports whether a socket has nothing to read (a peek that does
// not wait finds nothing).
func Quiet(fd uintptr) bool {
	var b [1]byte
	_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	return Again(errno(err))
}
