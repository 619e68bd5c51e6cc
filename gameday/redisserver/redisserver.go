// Package redisserver starts and stops real redis-server processes on
// loopback, for the local drill environment and for the project's tests.
//
// Each server keeps nothing on disk (no RDB snapshots, no AOF) and binds to
// loopback. Start waits until the server answers PING, so callers never sleep
// and hope.
package redisserver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gameday-dev/gameday/internal/ports"
)

// ErrNotInstalled is returned when no redis-server binary can be found.
var ErrNotInstalled = errors.New("redis-server is not installed (apt-get install redis-server, or run scripts/setup.sh)")

// Options configure Start. The zero value starts "redis-server" from PATH on
// a free port of 127.0.0.1.
type Options struct {
	// Bin is the redis-server binary; "" finds redis-server on PATH.
	Bin string
	// Host is the address to bind; "" means 127.0.0.1.
	Host string
	// Port is the TCP port; 0 picks a free one, reserved for the server
	// (internal/ports.Shared) until Close.
	Port int
	// StartTimeout bounds the wait for the first PONG; 0 means 10s.
	StartTimeout time.Duration
	// Dir is the working directory (where an append-only file is kept); ""
	// means the system's temporary directory.
	Dir string
	// Persist turns on the append-only file with an fsync per write, so a
	// server killed and started again on the same Dir keeps its data, as a
	// production inventory store would.
	Persist bool
}

// Server is one running redis-server process.
type Server struct {
	addr string
	cmd  *exec.Cmd
	done chan struct{}
	once sync.Once
	werr error
	opts Options
	port *ports.Reservation // holds the port until Close; nil if none could
}

// Find returns the path of redis-server or ErrNotInstalled.
func Find(bin string) (string, error) {
	if bin == "" {
		bin = "redis-server"
	}
	p, err := exec.LookPath(bin)
	if err != nil {
		return "", ErrNotInstalled
	}
	return p, nil
}

// Start starts a redis-server and waits until it answers PING.
func Start(ctx context.Context, opts Options) (*Server, error) {
	bin, err := Find(opts.Bin)
	if err != nil {
		return nil, err
	}
	opts.Bin = bin
	if opts.Host == "" {
		opts.Host = "127.0.0.1"
	}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 10 * time.Second
	}
	// The port is reserved before redis-server binds it, and while it runs
	// and after it dies, until Close (internal/ports): nobody else is
	// handed it by ":0" meanwhile, so a restart finds it free.
	var res *ports.Reservation
	if opts.Port == 0 {
		if res, err = ports.Shared(opts.Host); err != nil {
			return nil, fmt.Errorf("start redis-server: %w", err)
		}
		opts.Port = res.Port()
	} else if res, err = ports.Keep(opts.Host, opts.Port); err != nil {
		// Someone listens there (or holds it for himself): redis-server
		// says so when it cannot bind it.
		res = nil
	}
	s, err := start(ctx, opts, res)
	if err != nil && res != nil {
		res.Close()
	}
	return s, err
}

func start(ctx context.Context, opts Options, res *ports.Reservation) (*Server, error) {
	port := opts.Port
	addr := net.JoinHostPort(opts.Host, strconv.Itoa(port))
	dir, aof := opts.Dir, "no"
	if dir == "" {
		dir = os.TempDir()
	}
	if opts.Persist {
		aof = "yes"
	}
	cmd := exec.Command(opts.Bin,
		"--bind", opts.Host,
		"--port", strconv.Itoa(port),
		"--save", "",
		"--appendonly", aof,
		"--appendfsync", "always",
		"--protected-mode", "no",
		"--daemonize", "no",
		"--dir", dir,
		"--loglevel", "warning",
	)
	// Its own process group, so a Ctrl-C in the terminal reaches the runner
	// first and the runner decides when Redis stops.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	out := &limitedWriter{n: 64 << 10}
	cmd.Stdout = out
	cmd.Stderr = out
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start redis-server: %w", err)
	}
	s := &Server{addr: addr, cmd: cmd, done: make(chan struct{}), opts: opts, port: res}
	go func() { s.werr = cmd.Wait(); close(s.done) }()
	deadline := time.Now().Add(opts.StartTimeout)
	for {
		if err := ping(ctx, addr); err == nil {
			return s, nil
		}
		select {
		case <-s.done:
			return nil, fmt.Errorf("redis-server on %s exited at start: %v: %s", addr, s.werr, strings.TrimSpace(out.String()))
		case <-ctx.Done():
			s.Kill()
			return nil, fmt.Errorf("start redis-server on %s: %w", addr, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.Kill()
			return nil, fmt.Errorf("start redis-server on %s: no PONG after %s", addr, opts.StartTimeout)
		}
	}
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return s.addr }

// Port is the server's TCP port.
func (s *Server) Port() int {
	_, p, _ := net.SplitHostPort(s.addr)
	n, _ := strconv.Atoi(p)
	return n
}

// Pid is the process id.
func (s *Server) Pid() int { return s.cmd.Process.Pid }

// Pause stops the process (SIGSTOP): connections stay open and nothing is
// answered, like a server stuck in a long garbage collection or swap.
func (s *Server) Pause() error { return s.cmd.Process.Signal(syscall.SIGSTOP) }

// Resume continues a paused process (SIGCONT).
func (s *Server) Resume() error { return s.cmd.Process.Signal(syscall.SIGCONT) }

// Done is closed when the process has exited.
func (s *Server) Done() <-chan struct{} { return s.done }

// Stop asks the server to shut down (SIGTERM) and waits for it, killing it
// after 5s.
func (s *Server) Stop() error {
	select {
	case <-s.done:
		return nil
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
		return nil
	case <-time.After(5 * time.Second):
		return s.Kill()
	}
}

// Kill ends the process at once (SIGKILL) and waits for it.
func (s *Server) Kill() error {
	select {
	case <-s.done:
		return nil
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGCONT)
	err := s.cmd.Process.Kill()
	<-s.done
	if err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("kill redis-server: %w", err)
	}
	return nil
}

// Close kills the server, if it runs, and gives its port back. Stop and
// Kill keep the port reserved, for a start on it again; a Server dropped
// without Close gives it back when it is garbage-collected.
func (s *Server) Close() error {
	err := s.Kill()
	if s.port != nil {
		s.port.Close()
	}
	return err
}

// Restart kills the server and starts it again on the same address and
// directory, as a supervisor would after a crash. With Persist it comes back
// with its data; without, empty.
func (s *Server) Restart(ctx context.Context) (*Server, error) {
	if err := s.Kill(); err != nil {
		return nil, err
	}
	o := s.opts
	o.Port = s.Port()
	return Start(ctx, o)
}

func ping(ctx context.Context, addr string) error {
	d := net.Dialer{Timeout: 200 * time.Millisecond}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(500 * time.Millisecond))
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "+PONG") {
		return fmt.Errorf("unexpected answer to PING: %q", line)
	}
	return nil
}

// limitedWriter keeps the first n bytes the process prints, for errors.
type limitedWriter struct {
	mu sync.Mutex
	w  strings.Builder
	n  int
}

func (l *limitedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.String()
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if room := l.n - l.w.Len(); room > 0 {
		if len(p) > room {
			l.w.Write(p[:room])
		} else {
			l.w.Write(p)
		}
	}
	return len(p), nil
}
