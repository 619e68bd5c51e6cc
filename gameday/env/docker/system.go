package docker

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"

	"github.com/moby/moby/client"
)

// SystemPIDs are the main processes of the environment's containers
// (env.SystemProcesses): the checkout's, the stand-in's, the Redis
// servers' and Toxiproxy's, by network alias.
func (c *Containers) SystemPIDs(ctx context.Context) (map[string]int, error) {
	c.mu.Lock()
	ids := make(map[string]string, len(c.started))
	for _, s := range c.started {
		ids[s.alias] = s.ctr.GetContainerID()
	}
	c.mu.Unlock()
	return hostPIDs(ctx, c.cli, ids)
}

// SystemPIDs are the main processes of the project's running containers
// (env.SystemProcesses), by Compose service.
func (c *Compose) SystemPIDs(ctx context.Context) (map[string]int, error) {
	f := make(client.Filters).Add("label", "com.docker.compose.project="+c.project).Add("status", "running")
	cs, err := c.cli.ContainerList(ctx, client.ContainerListOptions{Filters: f})
	if err != nil {
		return nil, fmt.Errorf("list the project's containers: %w", err)
	}
	ids := make(map[string]string, len(cs.Items))
	for _, ct := range cs.Items {
		name := ct.Labels["com.docker.compose.service"]
		if name == "" {
			name = ct.ID
		}
		ids[name] = ct.ID
	}
	return hostPIDs(ctx, c.cli, ids)
}

// hostPIDs are the main processes of the containers ids (by name) as this
// host numbers them: the engine's pid of each running one, taken only
// where this host's /proc knows that process as the container's (its
// cgroup names the container). An engine on another host or in a virtual
// machine (DOCKER_HOST, Docker Desktop), or in another pid namespace,
// runs them where the runner cannot see them, and that is an error that
// says so. A container a fault stopped is left out until it runs again.
func hostPIDs(ctx context.Context, cli *client.Client, ids map[string]string) (map[string]int, error) {
	out := make(map[string]int, len(ids))
	for name, id := range ids {
		r, err := cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
		if err != nil {
			return nil, fmt.Errorf("inspect %s: %w", name, err)
		}
		st := r.Container.State
		if st == nil || !st.Running || st.Pid <= 0 {
			continue
		}
		if !ownsProcess(id, st.Pid) {
			return nil, fmt.Errorf("container %s runs as pid %d, which is not the container's process on this host: the engine runs its containers elsewhere (another host, a virtual machine or pid namespace)", name, st.Pid)
		}
		out[name] = st.Pid
	}
	return out, nil
}

// ownsProcess reports whether this host's process pid is in container
// id's cgroup.
func ownsProcess(id string, pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	return err == nil && id != "" && bytes.Contains(b, []byte(id))
}
