package system

import "testing"

// What a process handle can do: a container, a systemd unit and a pid
// file (always with its start) all three actions; a command handle what
// its programs give; no handle nothing.
func TestProcessCan(t *testing.T) {
	argv := []string{"true"}
	for _, c := range []struct {
		name               string
		p                  *Process
		kill, pause, other bool
	}{
		{"none", nil, false, false, false},
		{"container", &Process{Container: "redis"}, true, true, false},
		{"systemd", &Process{Systemd: "redis.service"}, true, true, false},
		{"pid file", &Process{PIDFile: "redis.pid", Start: argv}, true, true, false},
		{"command: kill and start", &Process{Command: &Commands{Kill: argv, Start: argv}}, true, false, false},
		{"command: kill alone", &Process{Command: &Commands{Kill: argv}}, false, false, false},
		{"command: pause and resume", &Process{Command: &Commands{Pause: argv, Resume: argv}}, false, true, false},
		{"command: pause alone", &Process{Command: &Commands{Pause: argv}}, false, false, false},
	} {
		if got := [4]bool{c.p.Can("kill"), c.p.Can("restart"), c.p.Can("pause"), c.p.Can("freeze")}; got != [4]bool{c.kill, c.kill, c.pause, c.other} {
			t.Errorf("%s: kill, restart, pause, freeze = %v", c.name, got)
		}
	}
}
