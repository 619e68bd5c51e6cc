package fleet_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday/fleet"
	"github.com/gameday-dev/gameday/gameday/load"
)

// workerProcessEnv makes this test binary a worker process
// (TestHelperWorkerProcess) for a test that must stop one.
const workerProcessEnv = "GAMEDAY_FLEET_TEST_WORKER"

// TestHelperWorkerProcess is not a test: run by
// TestAPausedWorkersStallIsItsShardsEvidence as a child process, it is
// "gameday worker" for shard 0 of the coordinator it is given.
func TestHelperWorkerProcess(t *testing.T) {
	url := os.Getenv(workerProcessEnv)
	if url == "" {
		t.Skip("a worker process, run by TestAPausedWorkersStallIsItsShardsEvidence")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := fleet.Work(ctx, fleet.WorkerOptions{Coordinator: url, Token: os.Getenv(fleet.TokenEnv), Shard: 0, Log: os.Stderr}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// A worker process stopped for 400 ms mid-sale (SIGSTOP, as a starved or
// frozen machine is) reports the stall with its end, and the run's record
// has it for the worker's shard, counted from the sale's start on the
// coordinator's clock: the coordinator's clock here is 7 s ahead of the
// worker's, so a stall left on the worker's clock would be 7 s off (or,
// counted from a start the worker's clock has not reached, not there at
// all).
func TestAPausedWorkersStallIsItsShardsEvidence(t *testing.T) {
	const shift = 7 * time.Second
	const pause = 400 * time.Millisecond
	s := newShop(t)
	now := func() time.Time { return time.Now().Add(shift) }
	c, err := fleet.ListenOnClock("127.0.0.1:0", job(t, s.srv.URL, 1, load.Stage{Duration: 3 * time.Second, Target: 20}), "", now)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	var log bytes.Buffer
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWorkerProcess$", "-test.timeout=90s")
	cmd.Env = append(os.Environ(), workerProcessEnv+"="+c.URL(), fleet.TokenEnv+"="+c.Token())
	cmd.Stdout, cmd.Stderr = &log, &log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("the worker's log:\n%s", log.String())
		}
	}()

	if err := c.Join(ctx, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	at := now().Add(c.Lead())
	begun := at.Add(-shift) // the start on this machine's clock
	sent := make(chan error, 1)
	go func() {
		_, err := c.Send(ctx, at, nil)
		sent <- err
	}()
	time.Sleep(time.Until(begun.Add(time.Second)))
	stopped := time.Now()
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(pause)
	resumed := time.Now()
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if err := <-sent; err != nil {
		t.Fatalf("Send: %v", err)
	}
	if err := <-exited; err != nil {
		t.Errorf("the worker: %v", err)
	}
	exited <- nil // for the deferred wait

	from, to := stopped.Sub(begun).Milliseconds(), resumed.Sub(begun).Milliseconds()
	spans := c.Shards()[0].StarvedSpans
	for _, sp := range spans {
		// The stall is seen from the last tick before the stop (10 ms
		// apart) to the first after the resumption, give or take the
		// scheduling of a shared machine.
		if sp.FromMS >= from-150 && sp.FromMS <= from+100 && sp.ToMS >= to-100 && sp.ToMS <= to+250 {
			return
		}
	}
	t.Errorf("shard 0's stalls %+v: want one of about %d-%d ms from the sale's start", spans, from, to)
}
