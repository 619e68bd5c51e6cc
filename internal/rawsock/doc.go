// Package rawsock makes a TCP connection's reads and writes as raw system
// calls, for the processes of a drill whose cost is measured: the load
// generator's transport, the servers `gameday serve` runs (the reference
// checkout, the payment stand-in, the router), and the checkout's Redis and
// payment clients, which wrap their connections in a Conn.
//
// A Go socket is non-blocking: its reads and writes never block, they
// return EAGAIN and the runtime's poller waits. Made the ordinary way
// (syscall.Read, net.Conn), each still tells the scheduler that the thread
// may block. Between two arrivals of a drill every processor is idle and
// the runtime's monitor thread sleeps; the first such call wakes it, and a
// call that lasts past 20 µs (a write on loopback runs the receiver's TCP
// stack too) lets the monitor hand the processor to another thread, which
// has to be woken and later put back to sleep. Made raw, the call keeps its
// thread and tells nobody; it cannot block, so there is nothing to tell.
// The generator's CPU a request fell by a third this way, and the
// checkout's in a drop by a tenth (docs/benchmarks.md, fourth and ninth
// passes).
//
// Under the race detector, and off Linux, the calls are the ordinary ones
// (sys_other.go); scripts/test.sh runs this package's tests without the
// detector too.
package rawsock
