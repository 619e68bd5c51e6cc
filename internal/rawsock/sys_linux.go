//go:build linux && !race && !msan && !asan

package rawsock

import (
	"syscall"
	"unsafe"
)

// Read, Write and Quiet made raw: on a non-blocking socket they never
// block, so the scheduler need not be told (see the package comment).

// Read reads from the socket fd into b with one read(2).
func Read(fd uintptr, b []byte) (int, syscall.Errno) {
	n, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	return int(n), e
}

// Write writes b to the socket fd with one write(2).
func Write(fd uintptr, b []byte) (int, syscall.Errno) {
	n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	return int(n), e
}

// Quiet reports whether a socket has nothing to read (a peek that does
// not wait finds nothing).
func Quiet(fd uintptr) bool {
	var b [1]byte
	_, _, e := syscall.RawSyscall6(syscall.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&b[0])), 1, syscall.MSG_PEEK|syscall.MSG_DONTWAIT, 0, 0)
	return Again(e)
}
