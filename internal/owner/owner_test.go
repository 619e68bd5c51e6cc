package owner

import (
	"os"
	"testing"
)

// An owner is alive only if the pid, its start time and the boot all match:
// a reused pid (in a container every runner is pid 1) must not keep a dead
// runner's faults or containers alive.
func TestAliveChecksMoreThanThePid(t *testing.T) {
	self := Self()
	if self.Pid != os.Getpid() || self.Started == "" || self.Boot == "" {
		t.Fatalf("this machine has /proc: start time and boot id must be read, got %+v", self)
	}
	cases := []struct {
		name string
		o    Owner
		want bool
	}{
		{"this process", self, true},
		{"same pid, started at another time", Owner{Pid: self.Pid, Started: "1", Boot: self.Boot}, false},
		{"same pid, before a reboot", Owner{Pid: self.Pid, Started: self.Started, Boot: "another-boot"}, false},
		{"no such pid", Owner{Pid: 1 << 30}, false},
		{"an old record with a pid only", Owner{Pid: self.Pid}, true},
	}
	for _, c := range cases {
		if got := c.o.Alive(); got != c.want {
			t.Errorf("%s: Alive = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestStringParses(t *testing.T) {
	self := Self()
	got, ok := Parse(self.String())
	if !ok || got != self {
		t.Fatalf("Parse(%q) = %+v, %v; want %+v", self.String(), got, ok, self)
	}
	if !self.Here() || (Owner{Pid: 1, Where: "elsewhere@pid:[1]"}).Here() {
		t.Errorf("Here: this process %v, another host's true", self.Here())
	}
	for _, bad := range []string{"", "12", "x/1/b", "0/1/b", "-3/1/b"} {
		if _, ok := Parse(bad); ok {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}
