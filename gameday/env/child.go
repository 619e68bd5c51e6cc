package env

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
)

// child is a gameday server ("gameday serve payment|checkout") run as a
// child process, so that a drill can kill, pause and restart it. It dies
// with the runner (Pdeathsig) and its output goes to a log file in the run
// directory.
type child struct {
	name string
	bin  string
	args []string // without -listen
	env  []string // NAME=VALUE added to the runner's environment
	log  string   // log file path

	mu   sync.Mutex
	cmd  *exec.Cmd
	addr string
	done chan struct{}
}

var listeningRE = regexp.MustCompile(`msg=listening addr=(\S+)`)

// start runs the child with -listen listen and waits until it says where it
// listens.
func (c *child) start(ctx context.Context, listen string) error {
	f, err := os.OpenFile(c.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("open %s log: %w", c.name, err)
	}
	argv := append(append(execWrapper(), c.bin), append(append([]string{}, c.args...), "-listen", listen)...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if len(c.env) > 0 {
		cmd.Env = append(os.Environ(), c.env...) // the last of a name wins
	}
	cmd.Stdout = f
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("start %s: %w", c.name, err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		pw.Close()
		f.Close()
		close(done)
	}()
	addrc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(f, line)
			if m := listeningRE.FindStringSubmatch(line); m != nil {
				select {
				case addrc <- m[1]:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	select {
	case addr := <-addrc:
		c.mu.Lock()
		c.cmd, c.addr, c.done = cmd, addr, done
		c.mu.Unlock()
		return nil
	case <-done:
		return fmt.Errorf("start %s: exited before listening; see %s", c.name, c.log)
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		<-done
		return fmt.Errorf("start %s: %w", c.name, ctx.Err())
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		return fmt.Errorf("start %s: not listening after 20s; see %s", c.name, c.log)
	}
}

// execWrapper is the command the children run under, from
// GAMEDAY_EXEC_WRAPPER (split on spaces): "qemu-aarch64-static" runs an
// arm64 gameday's children under user emulation on another machine, as CI
// does to check the Raspberry Pi build. Empty means none.
func execWrapper() []string { return strings.Fields(os.Getenv("GAMEDAY_EXEC_WRAPPER")) }

func (c *child) Addr() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.addr
}

func (c *child) signal(sig syscall.Signal) error {
	c.mu.Lock()
	cmd := c.cmd
	c.mu.Unlock()
	if cmd == nil {
		return errors.New(c.name + " is not running")
	}
	return cmd.Process.Signal(sig)
}

// stop ends the child: SIGTERM, then SIGKILL after grace.
func (c *child) stop(grace time.Duration) error {
	c.mu.Lock()
	cmd, done := c.cmd, c.done
	c.mu.Unlock()
	if cmd == nil {
		return nil
	}
	_ = cmd.Process.Signal(syscall.SIGCONT)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
		return nil
	case <-time.After(grace):
	}
	_ = cmd.Process.Kill()
	<-done
	return nil
}

// Kill ends the child at once.
func (c *child) Kill() error {
	c.mu.Lock()
	cmd, done := c.cmd, c.done
	c.mu.Unlock()
	if cmd == nil {
		return nil
	}
	_ = cmd.Process.Kill()
	<-done
	return nil
}

// Start runs the child again on the address it had, unless it is running.
func (c *child) Start(ctx context.Context) error {
	c.mu.Lock()
	done := c.done
	c.mu.Unlock()
	if done != nil {
		select {
		case <-done:
		default:
			return nil
		}
	}
	return c.start(ctx, c.Addr())
}

// Pause stops the child (SIGSTOP).
func (c *child) Pause() error { return c.signal(syscall.SIGSTOP) }

// Resume continues it (SIGCONT).
func (c *child) Resume() error { return c.signal(syscall.SIGCONT) }

func (c *child) String() string { return c.name + " " + strings.Join(c.args, " ") }
