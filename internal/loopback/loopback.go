// Package loopback serves raw TCP on a loopback port for tests: an
// upstream that echoes, streams, answers a scripted HTTP exchange, or
// hangs, written as the one function that serves a connection.
package loopback

import (
	"net"
	"testing"
)

// Serve listens on a free loopback port until the test ends and serves
// every connection it accepts with serve, in a goroutine of its own,
// closing the connection when serve returns; i counts the connections
// from 0. It returns the address, host:port.
func Serve(tb testing.TB, serve func(i int, c net.Conn)) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ln.Close() })
	go func() {
		for i := 0; ; i++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				serve(i, c)
			}()
		}
	}()
	return ln.Addr().String()
}
