package docker

import (
	"errors"
	"net"
	"strconv"
	"syscall"
	"testing"
)

// The port a container is to be published on stays reserved from the
// choice on: a program that does not share ports cannot bind it (so the
// kernel's ":0" cannot pick it), the next choice is another port, and Go's
// net.Listen, which sets SO_REUSEADDR as docker-proxy does, can listen on
// it.
func TestFreePortIsHeldForItsContainer(t *testing.T) {
	first, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	second, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	if first == second {
		t.Fatalf("freePort chose %s twice", first)
	}
	port, _ := strconv.Atoi(first)
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); !errors.Is(err, syscall.EADDRINUSE) {
		t.Errorf("bind 127.0.0.1:%s after freePort chose it: %v, want address in use", first, err)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", first))
	if err != nil {
		t.Fatalf("listen on the chosen port %s as the engine's proxy does: %v", first, err)
	}
	ln.Close()
}
