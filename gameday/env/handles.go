package env

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gameday-dev/gameday/gameday/system"
	"github.com/gameday-dev/gameday/internal/health"
	"github.com/gameday-dev/gameday/internal/owner"
	"github.com/gameday-dev/gameday/internal/redact"
	"github.com/gameday-dev/gameday/internal/wait"
)

// handle is a dependency's process as its system file declares it. Every
// action is bounded by the handle's timeout and none goes through a shell;
// Start waits until the dependency answers at its ready URL.
type handle struct {
	dep     string
	timeout time.Duration
	ready   string
	kill    func(ctx context.Context) error
	start   func(ctx context.Context) error
	pause   func(ctx context.Context) error
	resume  func(ctx context.Context) error
	close   func() error // nil: nothing to release
	// container is the engine's id of the container behind a container
	// handle; "" for the others.
	container string
	// record says how to resume a pause of this handle from another
	// process (systemd, command and pid_file handles; nil for a
	// container's, which the injector journals itself). journal, when
	// set (JournalPauses), is told of each pause before it is made and
	// of each resume once done.
	record  func() (Paused, error)
	journal PauseJournal
}

// ContainerID identifies a container handle's container, for the fault
// journal: a kill or pause of it on a system whose Toxiproxy outlives the
// runner is journaled, and a later cleanup brings the container back
// through its engine. "" for a handle that is not a container.
func (h *handle) ContainerID() string { return h.container }

var _ Process = (*handle)(nil)

func (h *handle) do(what string, fn func(ctx context.Context) error) error {
	if fn == nil {
		return fmt.Errorf("%s %s: the system file gives no way to (add it to dependencies.%s.process): %w", what, h.dep, h.dep, ErrNoProcess)
	}
	ctx, cancel := context.WithTimeout(context.Background(), h.timeout)
	defer cancel()
	if err := fn(ctx); err != nil {
		return fmt.Errorf("%s %s: %w", what, h.dep, err)
	}
	return nil
}

func (h *handle) Kill() error { return h.do("kill", h.kill) }

// Pause stops the process. With a journal, the pause is journaled first:
// a runner killed while the process is stopped leaves a record that
// cleanup resumes it by.
func (h *handle) Pause() error {
	if h.journal != nil && h.pause != nil && h.record != nil {
		p, err := h.record()
		if err != nil {
			return fmt.Errorf("pause %s: %w", h.dep, err)
		}
		if err := h.journal.Pausing(h.dep, p); err != nil {
			return fmt.Errorf("pause %s: journal it first: %w", h.dep, err)
		}
	}
	return h.do("pause", h.pause)
}

// Resume continues the process; with a journal, its pause is then
// forgotten.
func (h *handle) Resume() error {
	if err := h.do("resume", h.resume); err != nil {
		return err
	}
	if h.journal != nil && h.record != nil {
		if err := h.journal.Resumed(h.dep); err != nil {
			return fmt.Errorf("resume %s: resumed, but the journal still holds its pause: %w", h.dep, err)
		}
	}
	return nil
}

// PauseJournal records a pause made through a system file's process
// handle (systemd, command, pid_file) before it is made, and forgets it
// once the process is resumed: a runner killed in between leaves a record
// by which a cleanup resumes the process (a SIGSTOP must not outlive the
// runner). Package faults' journal is one (faults.PauseJournal).
type PauseJournal interface {
	Pausing(dependency string, p Paused) error
	Resumed(dependency string) error
}

// JournalPauses makes every process handle of a described system that
// pauses through systemd, a command or a pid file record its pauses in j
// (a container's pauses are the injector's to journal). A paused process
// outlives the runner whoever's Toxiproxy the drill uses, so this is
// wanted in every drill of a described system. It reports whether e has
// such handles at all.
func JournalPauses(e Environment, j PauseJournal) bool {
	d, ok := e.(*Described)
	if !ok {
		return false
	}
	found := false
	for _, h := range d.procs {
		if h.record != nil {
			h.journal, found = j, true
		}
	}
	return found
}

// Paused is a process paused through a system file's handle as the fault
// journal keeps it: enough for another process (gameday cleanup, the next
// drill) to resume it once the runner that paused it is gone, without the
// system file.
type Paused struct {
	// Handle is "systemd", "command" or "pid_file".
	Handle string `json:"handle"`
	// Systemd is the unit: resumed by systemctl kill --signal=SIGCONT.
	Systemd string `json:"systemd,omitempty"`
	// Command is a command handle's resume program, run in Dir; none if
	// the system file gives none (only a person can resume it then).
	Command []string `json:"command,omitempty"`
	Dir     string   `json:"dir,omitempty"`
	// PIDFile is the pid file's path, and Process the process it named
	// when paused, as package owner writes it (pid, start time, boot,
	// host and pid namespace): SIGCONT goes to it only while it is still
	// that process.
	PIDFile string `json:"pid_file,omitempty"`
	Process string `json:"process,omitempty"`
	// Where is the host and pid namespace of the runner that paused it
	// (package owner's): systemd and a command act on that host alone.
	Where string `json:"where"`
}

// String names how the process is resumed, with the command's secrets
// masked.
func (p Paused) String() string {
	switch p.Handle {
	case "systemd":
		return "systemd unit " + p.Systemd
	case "command":
		if len(p.Command) == 0 {
			return "a command handle with no resume program"
		}
		return "resume program " + redact.Command(p.Command)
	case "pid_file":
		pid := "?"
		if o, ok := owner.Parse(p.Process); ok {
			pid = strconv.Itoa(o.Pid)
		}
		return "pid " + pid + " of " + p.PIDFile
	}
	return "a " + p.Handle + " handle"
}

// Resume continues the paused process from any process on the host that
// paused it: SIGCONT through systemd, the resume program, or SIGCONT to
// the pid file's process if it is still the one paused (a process that
// is gone, or whose pid now belongs to another, needs nothing). From
// another host it refuses, naming the host where it must be done.
func (p Paused) Resume(ctx context.Context) error {
	where := owner.Owner{Where: p.Where}
	switch p.Handle {
	case "systemd", "command":
		if !where.SameHost() {
			return fmt.Errorf("paused on host %s: resume it there (gameday cleanup there does)", where.Host())
		}
		if p.Handle == "systemd" {
			return runArgv(ctx, "", "systemctl", "kill", "--signal=SIGCONT", p.Systemd)
		}
		if len(p.Command) == 0 {
			return fmt.Errorf("%s: the system file gives no resume command: resume the process by hand", p)
		}
		return runArgv(ctx, p.Dir, p.Command[0], p.Command[1:]...)
	case "pid_file":
		o, ok := owner.Parse(p.Process)
		if !ok {
			return fmt.Errorf("%s: no process recorded: resume it by hand", p)
		}
		if !o.Here() {
			return fmt.Errorf("paused on host %s, in another pid namespace: resume it there (gameday cleanup there does)", o.Host())
		}
		if !o.Alive() {
			return nil // gone, or its pid reused: nothing paused is left
		}
		if err := syscall.Kill(o.Pid, syscall.SIGCONT); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("%s: SIGCONT: %w", p, err)
		}
		return nil
	}
	return fmt.Errorf("a pause through a %q handle: this gameday cannot resume it: resume it by hand", p.Handle)
}

// Start starts the process again and waits until it answers at its ready
// URL.
func (h *handle) Start(ctx context.Context) error {
	if h.start == nil {
		return h.do("start", nil)
	}
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	if err := h.start(ctx); err != nil {
		return fmt.Errorf("start %s: %w", h.dep, err)
	}
	if h.ready == "" {
		return nil
	}
	var last error
	for {
		cctx, ccancel := context.WithTimeout(ctx, time.Second)
		_, err := health.Check(cctx, h.ready)
		ccancel()
		if err == nil {
			return nil
		}
		last = wait.Last(ctx, last, err)
		if !wait.For(ctx, 100*time.Millisecond) {
			return fmt.Errorf("start %s: not ready at %s within %s: %v", h.dep, health.Redact(h.ready), h.timeout, last)
		}
	}
}

// newHandle makes the handle a system file declares for dep. Its commands
// run in dir (the system file's directory), where a relative pid_file is.
func newHandle(ctx context.Context, dep string, p *system.Process, dir string, engine Engine) (*handle, error) {
	h := &handle{dep: dep, timeout: p.Timeout.D(), ready: p.Ready}
	switch {
	case p.Systemd != "":
		unit := p.Systemd
		h.kill = func(ctx context.Context) error {
			return runArgv(ctx, "", "systemctl", "kill", "--signal=SIGKILL", unit)
		}
		h.start = func(ctx context.Context) error { return runArgv(ctx, "", "systemctl", "start", unit) }
		h.pause = func(ctx context.Context) error {
			return runArgv(ctx, "", "systemctl", "kill", "--signal=SIGSTOP", unit)
		}
		h.resume = func(ctx context.Context) error {
			return runArgv(ctx, "", "systemctl", "kill", "--signal=SIGCONT", unit)
		}
		h.record = func() (Paused, error) {
			return Paused{Handle: "systemd", Systemd: unit, Where: owner.Self().Where}, nil
		}
	case p.Command != nil:
		c := p.Command
		for _, x := range []struct {
			argv []string
			dst  *func(context.Context) error
		}{{c.Kill, &h.kill}, {c.Start, &h.start}, {c.Pause, &h.pause}, {c.Resume, &h.resume}} {
			if len(x.argv) > 0 {
				argv := x.argv
				*x.dst = func(ctx context.Context) error { return runArgv(ctx, dir, argv[0], argv[1:]...) }
			}
		}
		h.record = func() (Paused, error) {
			return Paused{Handle: "command", Command: c.Resume, Dir: absDir(dir), Where: owner.Self().Where}, nil
		}
	case p.PIDFile != "":
		file, start := p.PIDFile, p.Start
		if !filepath.IsAbs(file) {
			file = filepath.Join(dir, file)
		}
		signal := func(sig syscall.Signal) func(context.Context) error {
			return func(context.Context) error {
				pid, err := readPID(file)
				if err != nil {
					return err
				}
				if err := syscall.Kill(pid, sig); err != nil && !(sig == syscall.SIGKILL && errors.Is(err, syscall.ESRCH)) {
					return fmt.Errorf("signal %d (%s): %w", pid, file, err)
				}
				return nil
			}
		}
		h.kill, h.pause, h.resume = signal(syscall.SIGKILL), signal(syscall.SIGSTOP), signal(syscall.SIGCONT)
		h.record = func() (Paused, error) {
			pid, err := readPID(file)
			if err != nil {
				return Paused{}, err
			}
			return Paused{Handle: "pid_file", PIDFile: absDir(file), Process: owner.Of(pid).String(), Where: owner.Self().Where}, nil
		}
		h.start = func(ctx context.Context) error { return startDetached(dir, start) }
	case p.Container != "":
		if engine == nil {
			return nil, fmt.Errorf("dependency %s: container %q: %w", dep, p.Container, ErrNoEngine)
		}
		c, err := engine.Container(ctx, p.Container)
		if err != nil {
			return nil, fmt.Errorf("dependency %s: container %q: %w", dep, p.Container, err)
		}
		h.kill = func(context.Context) error { return c.Kill() }
		h.start = c.Start
		h.pause = func(context.Context) error { return c.Pause() }
		h.resume = func(context.Context) error { return c.Resume() }
		h.close, h.container = c.Close, c.ID()
	}
	return h, nil
}

// runArgv runs a program (no shell) in dir within ctx; its output, cut
// short, goes into the error. The error shows the command as
// redact.Command does, and what the program printed with the values it
// masks masked too: the error reaches run.json, the summary and the
// reports.
func runArgv(ctx context.Context, dir, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.WaitDelay = time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		argv := append([]string{name}, args...)
		msg := strings.TrimSpace(out.String())
		for _, h := range hidden(argv) {
			msg = strings.ReplaceAll(msg, h, redact.Mask)
		}
		if len(msg) > 300 {
			msg = msg[:300] + "..."
		}
		return fmt.Errorf("%s: %w: %s", redact.Command(argv), err, msg)
	}
	return nil
}

// hidden lists the values redact.Command masks in argv, longest first:
// each argument it does not show whole, the value of one written
// NAME=VALUE, and a URL's password and query values. A program that
// prints its own arguments must not show them either. Values shorter
// than 4 bytes are left: masking them everywhere would mangle the rest.
func hidden(argv []string) []string {
	shown := " " + redact.Command(argv) + " "
	var out []string
	add := func(v string) {
		if len(v) >= 4 && v != redact.Mask {
			out = append(out, v)
		}
	}
	for _, a := range argv[1:] {
		if strings.Contains(shown, " "+a+" ") {
			continue
		}
		add(a)
		if _, v, ok := strings.Cut(a, "="); ok {
			add(v)
		}
		raw := a // a URL, or --flag=URL
		if i := strings.Index(a, "="); i > 0 && i < strings.Index(a, "://") {
			raw = a[i+1:]
		}
		if u, err := url.Parse(raw); err == nil && u.Scheme != "" {
			if p, ok := u.User.Password(); ok {
				add(p)
			}
			for _, vs := range u.Query() {
				for _, v := range vs {
					add(v)
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

// startDetached starts a program that keeps running after the runner
// (a process started again outlives the drill), in its own session.
func startDetached(dir string, argv []string) error {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", argv[0], err)
	}
	go func() { _ = cmd.Wait() }()
	return nil
}

// absDir is path made absolute, for a record read from another working
// directory; as given if that fails.
func absDir(path string) string {
	if a, err := filepath.Abs(path); err == nil {
		return a
	}
	return path
}

func readPID(file string) (int, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		return 0, fmt.Errorf("%s: no pid in it", file)
	}
	return pid, nil
}
