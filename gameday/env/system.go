package env

import (
	"context"
	"fmt"
	"maps"
	"slices"
)

// SystemProcesses says how to find the system under test's processes on
// this host, for the evidence of their own starvation (package hostmon):
// find lists them afresh, by name, each with its pid as this host's
// /proc numbers it. An environment that knows them says so with a
// SystemPIDs method (local, containers, compose). Where none does (the
// system runs elsewhere, or gameday did not start it), find is nil and
// none says why.
func SystemProcesses(e Environment) (find func(context.Context) (map[string]int, error), none string) {
	if s, ok := e.(interface {
		SystemPIDs(context.Context) (map[string]int, error)
	}); ok {
		return s.SystemPIDs, ""
	}
	return nil, fmt.Sprintf("the %s environment does not start the system under test, so its processes are not known on this host: the runner's own timer is the only evidence of a starved machine", e.Info().Kind)
}

// SystemPIDs are the processes the local environment started for the
// system under test: the checkout (each pod's, and the router), the
// payment stand-in and the Redis servers; one a fault killed is left out
// until it runs again. The embedded Redis and Toxiproxy run in the
// runner's own process, whose timer is their evidence.
func (l *Local) SystemPIDs(context.Context) (map[string]int, error) {
	out := map[string]int{}
	for _, c := range append([]*child{l.checkout, l.payment, l.catalog}, slices.Collect(maps.Values(l.pods))...) {
		if pid := c.pid(); pid > 0 {
			out[c.name] = pid
		}
	}
	for dep, p := range l.redis {
		if r, ok := p.(*redisProc); ok {
			if s := r.server(); s != nil {
				select {
				case <-s.Done():
				default:
					out[dep] = s.Pid()
				}
			}
		}
	}
	return out, nil
}

// pid is the child's process id while it runs; 0 when it is not running.
func (c *child) pid() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	cmd, done := c.cmd, c.done
	c.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return 0
	}
	select {
	case <-done:
		return 0
	default:
		return cmd.Process.Pid
	}
}
