package env

import (
	"context"
	"maps"
	"os/exec"
	"strings"
	"testing"
)

// The local environment names the processes it started for the system
// under test, each with its pid: a child that a fault killed is left out
// until it runs again, and the embedded Redis, which runs in the runner's
// own process, is never in it.
func TestLocalSystemPIDs(t *testing.T) {
	run := func(name string) *child {
		t.Helper()
		cmd := exec.Command("sleep", "30")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
		return &child{name: name, cmd: cmd, done: done}
	}
	l := &Local{payment: run("payment"), checkout: run("checkout"), redis: map[string]Process{Inventory: &miniProc{}}}
	find, none := SystemProcesses(l)
	if find == nil || none != "" {
		t.Fatalf("the local environment gives no way to find its processes: %q", none)
	}
	got, err := find(context.Background())
	want := map[string]int{"payment": l.payment.cmd.Process.Pid, "checkout": l.checkout.cmd.Process.Pid}
	if err != nil || !maps.Equal(got, want) {
		t.Errorf("found %v, %v; want %v", got, err, want)
	}
	if err := l.payment.Kill(); err != nil {
		t.Fatal(err)
	}
	got, _ = find(context.Background())
	if _, ok := got["payment"]; ok || len(got) != 1 {
		t.Errorf("after the payment stand-in was killed: %v", got)
	}
}

// An environment that does not run the system under test knows none of
// its processes, and says so.
func TestExternalSystemUnwatched(t *testing.T) {
	e, err := NewExternal(ExternalOptions{Toxiproxy: "127.0.0.1:1", CheckoutURL: "http://127.0.0.1:2"})
	if err != nil {
		t.Fatal(err)
	}
	find, none := SystemProcesses(e)
	if find != nil || !strings.Contains(none, "external") {
		t.Errorf("find %v, none %q", find != nil, none)
	}
}
