package owner

import (
	"os"
	"os/exec"
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

// Of identifies another process as Self does this one: a child is alive
// until it exits, and its record then names a dead process even though
// the pid may come back. SameHost compares the host name only (a systemd
// unit or a program acts on the host, whatever the pid namespace).
func TestOfAndSameHost(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	o := Of(cmd.Process.Pid)
	if o.Pid != cmd.Process.Pid || o.Started == "" || o.Boot != Self().Boot || !o.Alive() || !o.Here() {
		t.Errorf("Of(child) = %+v: want its own start time, alive, here", o)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if o.Alive() {
		t.Errorf("Of(child) still alive after it exited: %+v", o)
	}
	self := Self()
	other := Owner{Pid: 1, Where: self.Host() + "@pid:[1]"}
	if !self.SameHost() || !other.SameHost() || other.Here() {
		t.Errorf("SameHost: self %v, another pid namespace here %v (Here %v)", self.SameHost(), other.SameHost(), other.Here())
	}
	for _, o := range []Owner{{Pid: 1, Where: "elsewhere@pid:[1]"}, {Pid: 1}} {
		if o.SameHost() {
			t.Errorf("SameHost(%q) = true", o.Where)
		}
	}
}
