package testenv

import (
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// gwbridge is the network a swarm node's containers reach the host by.
const gwbridge = "docker_gwbridge"

// Swarm makes sure the Docker Engine is in a swarm for the test: one it
// is already in is used and left as it was; otherwise the test makes a
// single-node swarm on loopback and leaves it when it ends, pass or fail,
// and removes the docker_gwbridge network joining it made.
func Swarm(tb testing.TB, docker string) {
	tb.Helper()
	state, err := exec.Command(docker, "info", "--format", "{{.Swarm.LocalNodeState}}").Output()
	if err != nil {
		tb.Fatalf("docker info: %v", err)
	}
	if strings.TrimSpace(string(state)) == "active" {
		return
	}
	// docker swarm init makes the bridge network docker_gwbridge, which
	// leaving the swarm keeps: it is removed too, unless it was there before.
	hadBridge := exec.Command(docker, "network", "inspect", gwbridge).Run() == nil
	if out, err := exec.Command(docker, "swarm", "init", "--advertise-addr", "127.0.0.1").CombinedOutput(); err != nil {
		tb.Fatalf("docker swarm init: %v\n%s", err, out)
	}
	Undo(tb, func() {
		if out, err := exec.Command(docker, "swarm", "leave", "--force").CombinedOutput(); err != nil {
			tb.Errorf("docker swarm leave: %v\n%s", err, out)
		}
		if !hadBridge {
			if out, err := exec.Command(docker, "network", "rm", gwbridge).CombinedOutput(); err != nil {
				tb.Errorf("docker network rm %s: %v\n%s", gwbridge, err, out)
			}
		}
	})
}

// Undo runs f when the test ends, and also when the test binary is
// interrupted (SIGINT, SIGTERM) before that: for what a test changed
// outside itself (the Docker engine's state), which must not outlive it.
// Undos run last first, once each.
func Undo(tb testing.TB, f func()) {
	var once sync.Once
	run := func() { once.Do(f) }
	undos.Lock()
	undos.list = append(undos.list, run)
	if !undos.watching {
		undos.watching = true
		c := make(chan os.Signal, 1)
		signal.Notify(c, os.Interrupt, syscall.SIGTERM)
		go func() {
			<-c
			undos.Lock()
			list := undos.list
			undos.Unlock()
			for i := len(list) - 1; i >= 0; i-- {
				list[i]()
			}
			os.Exit(2)
		}()
	}
	undos.Unlock()
	tb.Cleanup(run)
}

var undos struct {
	sync.Mutex
	list     []func()
	watching bool
}
