package fleet

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Local is one worker process per shard on this machine, each standing in
// for a machine of its own: "BINARY worker -coordinator URL -shard K",
// the token in its environment. They die with this process (Pdeathsig),
// and Stop ends any still running.
type Local struct {
	procs []*exec.Cmd
	wg    sync.WaitGroup
	done  chan struct{}
}

// StartLocal starts a worker for every shard of c with binary (a gameday
// executable), each writing its log to dir/worker-K.log. A worker that
// exits with an error is reported to c as lost.
func StartLocal(c *Coordinator, binary, dir string) (*Local, error) {
	if binary == "" {
		return nil, errors.New("local workers: no gameday executable named")
	}
	l := &Local{done: make(chan struct{})}
	for k := range c.job.Of {
		logPath := filepath.Join(dir, "worker-"+strconv.Itoa(k)+".log")
		f, err := os.Create(logPath)
		if err != nil {
			l.Stop()
			return nil, fmt.Errorf("local workers: %w", err)
		}
		cmd := exec.Command(binary, "worker", "-coordinator", c.URL(), "-shard", strconv.Itoa(k))
		cmd.Env = append(os.Environ(), TokenEnv+"="+c.Token())
		cmd.Stdout, cmd.Stderr = f, f
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			f.Close()
			l.Stop()
			return nil, fmt.Errorf("local workers: start shard %d: %w", k, err)
		}
		l.procs = append(l.procs, cmd)
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			err := cmd.Wait()
			f.Close()
			if err != nil {
				c.Lost(k, fmt.Errorf("its process ended: %v (its log: %s)", err, logPath))
			}
		}()
	}
	go func() { l.wg.Wait(); close(l.done) }()
	return l, nil
}

// Stop waits a moment for the workers to end on their own (a finished
// sale ends them), then kills any left, and waits for them.
func (l *Local) Stop() {
	if l.done == nil {
		return
	}
	if len(l.procs) > 0 {
		select {
		case <-l.done:
			return
		case <-time.After(2 * time.Second):
		}
	}
	for _, p := range l.procs {
		if p.Process != nil {
			_ = p.Process.Kill()
		}
	}
	l.wg.Wait()
}
