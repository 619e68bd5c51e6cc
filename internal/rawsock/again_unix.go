//go:build unix

package rawsock

import "syscall"

// Again reports a call that would have had to wait (EAGAIN; EWOULDBLOCK,
// which is another number on some systems).
func Again(e syscall.Errno) bool { return e == syscall.EAGAIN || e == syscall.EWOULDBLOCK }
