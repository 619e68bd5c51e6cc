// Package owner identifies a process across pid reuse and reboots, so that
// what a runner leaves behind (faults in a journal, containers) is cleaned
// up only once that runner is gone.
package owner

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Owner identifies a process across pid reuse and reboots: its pid, its
// start time and the kernel's boot id. Journal entries and the containers a
// runner starts carry it, so that cleanup removes only what a dead runner
// left.
type Owner struct {
	Pid     int
	Started string // start time in clock ticks since boot ("" if unknown)
	Boot    string // the kernel's boot id ("" if unknown)
	// Where is the host name and the pid namespace: a pid means something
	// only there. "" if unknown (an older record).
	Where string
}

// Self is this process.
func Self() Owner {
	pid := os.Getpid()
	return Owner{Pid: pid, Started: procStart(pid), Boot: bootID(), Where: where()}
}

// Of is the process pid of this host and pid namespace, identified as
// Self is: its start time, the boot and where it runs. A pid that does not
// run has no start time ("").
func Of(pid int) Owner {
	return Owner{Pid: pid, Started: procStart(pid), Boot: bootID(), Where: where()}
}

// where is this process's host name and pid namespace.
func where() string {
	host, _ := os.Hostname()
	ns, _ := os.Readlink("/proc/self/ns/pid")
	return strings.NewReplacer("/", "_").Replace(host + "@" + ns)
}

// Here reports whether the owner's pid can be judged from this process:
// same host, same pid namespace. A runner elsewhere (another machine on a
// shared Docker engine, another container) is never judged dead from here.
func (o Owner) Here() bool { return o.Where == "" || o.Where == where() }

// SameHost reports whether the owner ran on this host (its host name;
// the pid namespace may differ): what a host's systemd or a program run
// there acts on. An owner whose host is unknown is not on this host.
func (o Owner) SameHost() bool {
	return o.Where != "" && hostOf(o.Where) == hostOf(where())
}

// Host is the owner's host name, "" if unknown.
func (o Owner) Host() string { return hostOf(o.Where) }

func hostOf(where string) string {
	if i := strings.LastIndexByte(where, '@'); i >= 0 {
		return where[:i]
	}
	return where
}

// Alive reports whether the process may still run: a pid that exists, on
// this boot, started when the owner did.
func (o Owner) Alive() bool {
	if o.Pid <= 0 {
		return false
	}
	if err := syscall.Kill(o.Pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	if o.Boot != "" && o.Boot != bootID() {
		return false // rebooted since: nothing of it runs
	}
	if o.Started != "" && procStart(o.Pid) != o.Started {
		return false // the pid now belongs to another process
	}
	return true
}

// String is "pid/started/boot/where", the form Parse reads.
func (o Owner) String() string {
	return strconv.Itoa(o.Pid) + "/" + o.Started + "/" + o.Boot + "/" + o.Where
}

// Parse reads what String wrote.
func Parse(s string) (Owner, bool) {
	parts := strings.SplitN(s, "/", 4)
	if len(parts) < 3 {
		return Owner{}, false
	}
	pid, err := strconv.Atoi(parts[0])
	if err != nil || pid <= 0 {
		return Owner{}, false
	}
	o := Owner{Pid: pid, Started: parts[1], Boot: parts[2]}
	if len(parts) == 4 {
		o.Where = parts[3]
	}
	return o, true
}

func procStart(pid int) string {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	// The command name (field 2) may hold spaces: count from after it.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return ""
	}
	return f[19] // field 22: fields 3.. start at index 0
}

func bootID() string {
	data, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}
