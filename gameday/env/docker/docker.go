package docker

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/gameday-dev/gameday/gameday/env"
	"github.com/gameday-dev/gameday/internal/owner"
	"github.com/gameday-dev/gameday/internal/wait"
)

// Labels on every container and network the containers environment makes,
// so that cleanup finds them, and only them, whoever started them.
const (
	// LabelEnv marks a container or network of the containers environment.
	LabelEnv = "dev.gameday.env"
	// LabelOwner is the runner that made it (faults.Owner's String): its
	// parts are removed by cleanup only once that runner is gone.
	LabelOwner = "dev.gameday.owner"
)

// dockerClient connects to the Docker Engine named by the environment
// (DOCKER_HOST, or the local socket), speaking the engine's API version.
func dockerClient() (*client.Client, error) {
	c, err := client.New(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		return nil, fmt.Errorf("connect to docker: %w", err)
	}
	return c, nil
}

// dockerCall bounds one Docker API call: a hung engine must not hang a
// drill's fault timeline.
const dockerCall = 30 * time.Second

// containerProc is a container a fault can kill, pause and start again.
// Killing a container keeps its filesystem, so Redis's append-only file and
// the payment stand-in's books come back with it, as the local
// environment's processes come back with their data directories.
type containerProc struct {
	cli  *client.Client
	id   string
	name string // for errors: the service name
	// reach, when set, is how Start knows the container is back for the
	// rest of the environment; nil: Docker's own health check.
	reach *reach
}

// reach checks that a container is reachable by its peers: a health check
// ("gameday health URL", with the container's network alias in URL) run
// inside another container of the environment, every reachPoll, until it
// passes. Docker's own health check runs inside the container itself and
// says healthy before Docker's DNS answers for the alias again, which on a
// busy machine takes seconds; for those seconds the system under test
// still cannot reach the dependency, and a drill that took it for back
// would blame the checkout for the engine's lag. Checking from a peer
// measures what the checkout sees, and costs a few execs while a restart
// is waited for, instead of a health check every second of the run.
type reach struct {
	peer func(ctx context.Context) (string, error) // the container to run it in
	cmd  []string
}

const reachPoll = 200 * time.Millisecond

var _ env.Process = (*containerProc)(nil)

// ContainerID identifies the container, for the fault journal.
func (c *containerProc) ContainerID() string { return c.id }

// Engine is Docker's side of gameday (env.Engine): it acts on the
// containers a system file names, and brings back the containers a killed
// runner's process faults left stopped or frozen (the fault journal's
// cleanup). It connects to the engine DOCKER_HOST names, or the local
// socket.
type Engine struct{}

var _ env.Engine = Engine{}

// Container finds the container called name (or with that id).
func (Engine) Container(ctx context.Context, name string) (env.Container, error) {
	cli, err := dockerClient()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, dockerCall)
	defer cancel()
	r, err := cli.ContainerInspect(ctx, name, client.ContainerInspectOptions{})
	if err != nil {
		cli.Close()
		return nil, err
	}
	return found{&containerProc{cli: cli, id: r.Container.ID, name: name}}, nil
}

// found is a container Engine found: Start starts it and does not wait for
// what runs in it (the system file's ready check, or nothing for cleanup,
// which undoes a fault and does not drill).
type found struct{ *containerProc }

func (f found) ID() string                      { return f.id }
func (f found) Start(ctx context.Context) error { return f.startOnly(ctx) }
func (f found) Close() error                    { return f.cli.Close() }

// startOnly starts the container unless it runs, and waits until it runs:
// cleanup undoes a fault, it does not drill.
func (c *containerProc) startOnly(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, dockerCall)
	defer cancel()
	st, err := c.state(ctx)
	if err != nil {
		return fmt.Errorf("start %s: %w", c.name, err)
	}
	if st.Running {
		return nil
	}
	if _, err := c.cli.ContainerStart(ctx, c.id, client.ContainerStartOptions{}); err != nil {
		return fmt.Errorf("start %s: %w", c.name, err)
	}
	for {
		if st, err := c.state(ctx); err == nil && st.Running {
			return nil
		}
		if !wait.For(ctx, 100*time.Millisecond) {
			return fmt.Errorf("start %s: %w", c.name, ctx.Err())
		}
	}
}

func (c *containerProc) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), dockerCall)
}

// Kill sends SIGKILL and waits until the container has stopped.
func (c *containerProc) Kill() error {
	ctx, cancel := c.ctx()
	defer cancel()
	if _, err := c.cli.ContainerKill(ctx, c.id, client.ContainerKillOptions{Signal: "SIGKILL"}); err != nil {
		// Killing a container that is not running is what was wanted.
		if st, ierr := c.state(ctx); ierr == nil && !st.Running {
			return nil
		}
		return fmt.Errorf("kill %s: %w", c.name, err)
	}
	for ctx.Err() == nil {
		st, err := c.state(ctx)
		if err != nil {
			return fmt.Errorf("kill %s: %w", c.name, err)
		}
		if !st.Running {
			return nil
		}
		wait.For(ctx, 50*time.Millisecond)
	}
	return fmt.Errorf("kill %s: still running after %s", c.name, dockerCall)
}

// Start starts the container again unless it runs, and waits until its
// peers reach it again (see reach), or, without a reach check, until it
// runs.
func (c *containerProc) Start(ctx context.Context) error {
	if c.reach == nil {
		return c.startOnly(ctx)
	}
	ctx, cancel := context.WithTimeout(ctx, dockerCall)
	defer cancel()
	st, err := c.state(ctx)
	if err != nil {
		return fmt.Errorf("start %s: %w", c.name, err)
	}
	if !st.Running {
		if _, err := c.cli.ContainerStart(ctx, c.id, client.ContainerStartOptions{}); err != nil {
			return fmt.Errorf("start %s: %w", c.name, err)
		}
	}
	return c.waitReachable(ctx)
}

// waitReachable runs the reach check from the peer until it passes, the
// container exits, or ctx ends.
func (c *containerProc) waitReachable(ctx context.Context) error {
	var last error
	for {
		st, err := c.state(ctx)
		if err != nil {
			return fmt.Errorf("start %s: %w", c.name, err)
		}
		if !st.Running && st.Status == container.StateExited {
			return fmt.Errorf("start %s: exited (code %d)", c.name, st.ExitCode)
		}
		if st.Running {
			err := c.reachOnce(ctx)
			if err == nil {
				return nil
			}
			last = wait.Last(ctx, last, err)
		}
		if !wait.For(ctx, reachPoll) {
			return fmt.Errorf("start %s: not reachable by its peers: %w (last check: %v)", c.name, ctx.Err(), last)
		}
	}
}

// reachOnce runs the reach check once and reports whether it passed.
func (c *containerProc) reachOnce(ctx context.Context) error {
	peer, err := c.reach.peer(ctx)
	if err != nil {
		return err
	}
	return dockerExec(ctx, c.cli, peer, c.reach.cmd)
}

// dockerExec runs cmd in a running container and waits for it to exit
// (at most a few seconds); a non-zero exit is an error.
func dockerExec(ctx context.Context, cli *client.Client, id string, cmd []string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ex, err := cli.ExecCreate(ctx, id, client.ExecCreateOptions{Cmd: cmd})
	if err != nil {
		return fmt.Errorf("exec %v: %w", cmd, err)
	}
	if _, err := cli.ExecStart(ctx, ex.ID, client.ExecStartOptions{Detach: true}); err != nil {
		return fmt.Errorf("exec %v: %w", cmd, err)
	}
	for {
		r, err := cli.ExecInspect(ctx, ex.ID, client.ExecInspectOptions{})
		if err != nil {
			return fmt.Errorf("exec %v: %w", cmd, err)
		}
		if !r.Running {
			if r.ExitCode != 0 {
				return fmt.Errorf("%v exited %d", cmd, r.ExitCode)
			}
			return nil
		}
		if !wait.For(ctx, 20*time.Millisecond) {
			return fmt.Errorf("exec %v: %w", cmd, ctx.Err())
		}
	}
}

// Pause freezes every process of the container (the cgroup freezer, like
// SIGSTOP for a whole container); Resume thaws it.
func (c *containerProc) Pause() error {
	ctx, cancel := c.ctx()
	defer cancel()
	if _, err := c.cli.ContainerPause(ctx, c.id, client.ContainerPauseOptions{}); err != nil {
		return fmt.Errorf("pause %s: %w", c.name, err)
	}
	return nil
}

func (c *containerProc) Resume() error {
	ctx, cancel := c.ctx()
	defer cancel()
	st, err := c.state(ctx)
	if err == nil && !st.Paused {
		return nil
	}
	if _, err := c.cli.ContainerUnpause(ctx, c.id, client.ContainerUnpauseOptions{}); err != nil {
		return fmt.Errorf("resume %s: %w", c.name, err)
	}
	return nil
}

func (c *containerProc) state(ctx context.Context) (*container.State, error) {
	r, err := c.cli.ContainerInspect(ctx, c.id, client.ContainerInspectOptions{})
	if err != nil {
		return nil, err
	}
	if r.Container.State == nil {
		return nil, errors.New("the engine reported no state")
	}
	return r.Container.State, nil
}

// Leftover is a container or network that cleanup removed.
type Leftover struct {
	Kind  string // "container" or "network"
	Name  string
	Owner string
}

// CleanupContainers removes the containers and networks of containers
// environments whose runner is gone (killed outright, so that its own
// teardown never ran). Those of a runner that still runs are left alone.
func CleanupContainers(ctx context.Context) ([]Leftover, error) {
	if os.Getenv("DOCKER_HOST") == "" {
		if _, err := os.Stat("/var/run/docker.sock"); errors.Is(err, fs.ErrNotExist) {
			return nil, nil // no Docker here: no container of ours either
		}
	}
	cli, err := dockerClient()
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(ctx, 2*dockerCall)
	defer cancel()
	// Only owners this process can judge: a runner on another machine
	// sharing the engine, or in another pid namespace, is left alone.
	dead := func(labels map[string]string) bool {
		o, ok := owner.Parse(labels[LabelOwner])
		return ok && o.Here() && !o.Alive()
	}
	var removed []Leftover
	var errs []error
	cs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: make(client.Filters).Add("label", LabelEnv)})
	if err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	for _, c := range cs.Items {
		if !dead(c.Labels) {
			continue
		}
		name := strings.TrimPrefix(strings.Join(c.Names, ","), "/")
		if _, err := cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err != nil {
			errs = append(errs, fmt.Errorf("remove container %s: %w", name, err))
			continue
		}
		removed = append(removed, Leftover{Kind: "container", Name: name, Owner: c.Labels[LabelOwner]})
	}
	ns, err := cli.NetworkList(ctx, client.NetworkListOptions{Filters: make(client.Filters).Add("label", LabelEnv)})
	if err != nil {
		return removed, errors.Join(append(errs, fmt.Errorf("list networks: %w", err))...)
	}
	for _, n := range ns.Items {
		if !dead(n.Labels) {
			continue
		}
		if _, err := cli.NetworkRemove(ctx, n.ID, client.NetworkRemoveOptions{}); err != nil {
			errs = append(errs, fmt.Errorf("remove network %s: %w", n.Name, err))
			continue
		}
		removed = append(removed, Leftover{Kind: "network", Name: n.Name, Owner: n.Labels[LabelOwner]})
	}
	return removed, errors.Join(errs...)
}
