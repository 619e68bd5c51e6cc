package ports_test

import (
	"testing"

	"github.com/gameday-dev/gameday/internal/ports"
)

// Ten thousand ports handed out one after the other, each given back at
// once, are ten thousand different ports: a port given back is free for
// the kernel's ":0" again, never for the allocator's next reservation.
// (An allocator of the test's own: the process's would have a third of the
// ephemeral range left after a run, none after three of -count=10.)
func TestTenThousandPortsNeverRepeat(t *testing.T) {
	var a ports.Allocator
	seen := map[int]int{}
	for i := range 10000 {
		take := a.Shared
		if i%2 == 1 {
			take = a.Closed
		}
		r, err := take("")
		if err != nil {
			t.Fatalf("reservation %d: %v", i, err)
		}
		if j, ok := seen[r.Port()]; ok {
			t.Fatalf("reservation %d is port %d, handed out before as reservation %d", i, r.Port(), j)
		}
		seen[r.Port()] = i
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// A host that is neither an address nor a name refuses, naming it.
func TestABadHostIsNamed(t *testing.T) {
	if _, err := ports.Shared("no such host.invalid"); err == nil {
		t.Fatal("reserved a port on a host that does not exist")
	}
	if _, err := ports.Keep("", 70000); err == nil {
		t.Fatal("kept port 70000")
	}
}
