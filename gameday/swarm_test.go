package gameday_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday"
	dockerenv "github.com/gameday-dev/gameday/gameday/env/docker"
	"github.com/gameday-dev/gameday/internal/testenv"
)

// TestSwarmWorkers: the load of a drill sent by a Docker Swarm replicated
// job of three "gameday worker" tasks, deployed from the shipped stack
// file, each told its shard by its task slot and its token by a Docker
// secret. The engine is left as it was found: the stack, the secret and
// (if the test made it) the swarm are gone after a pass, a failure or an
// interrupt.
func TestSwarmWorkers(t *testing.T) {
	docker := testenv.Docker(t, dockerenv.DefaultGamedayImage)
	name := "gameday-test-" + strconv.FormatInt(time.Now().UnixNano()%(1<<30), 36)
	leftovers := func() []string {
		var out []string
		for _, args := range [][]string{
			{"service", "ls", "-q", "--filter", "label=com.docker.stack.namespace=" + name},
			{"ps", "-aq", "--filter", "label=com.docker.stack.namespace=" + name},
			{"secret", "ls", "-q", "--filter", "name=" + name},
		} {
			b, _ := exec.Command(docker, args...).Output()
			for _, id := range strings.Fields(string(b)) {
				out = append(out, args[0]+" "+id)
			}
		}
		return out
	}
	// Registered first, so it runs last: after the stack, the secret and
	// the swarm are gone.
	state := swarmState(t, docker)
	t.Cleanup(func() {
		if left := leftovers(); len(left) > 0 && state != "active" {
			t.Errorf("left behind: %v", left)
		}
		if now := swarmState(t, docker); now != state {
			t.Errorf("the engine's swarm state is %q, was %q", now, state)
		}
	})
	testenv.Swarm(t, docker)

	b := make([]byte, 16)
	_, _ = rand.Read(b)
	token := hex.EncodeToString(b)
	secret := name + "-token"
	create := exec.Command(docker, "secret", "create", secret, "-")
	create.Stdin = strings.NewReader(token)
	if out, err := create.CombinedOutput(); err != nil {
		t.Fatalf("docker secret create: %v\n%s", err, out)
	}
	testenv.Undo(t, func() {
		_ = exec.Command(docker, "stack", "rm", name).Run()
		// The job's finished containers stay after their service is gone
		// (and after the swarm is left): removed here, and the secret
		// once no container holds it.
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			b, _ := exec.Command(docker, "ps", "-aq", "--filter", "label=com.docker.stack.namespace="+name).Output()
			ids := strings.Fields(string(b))
			if len(ids) == 0 {
				break
			}
			_ = exec.Command(docker, append([]string{"rm", "-f"}, ids...)...).Run()
		}
		_ = exec.Command(docker, "secret", "rm", secret).Run()
	})

	o := options(t)
	o.Shards = &gameday.ShardOptions{N: 3, Remote: true, Token: token, JoinWithin: 90 * time.Second, Announce: func(url string) {
		deploy := exec.Command(docker, "stack", "deploy", "--detach=true", "--resolve-image", "never", "-c", "../deploy/swarm/workers.yml", name)
		deploy.Env = append(os.Environ(), "GAMEDAY_COORDINATOR="+url, "GAMEDAY_SHARDS=3", "GAMEDAY_SHARD_SECRET="+secret, "GAMEDAY_IMAGE="+dockerenv.DefaultGamedayImage)
		if out, err := deploy.CombinedOutput(); err != nil {
			t.Errorf("docker stack deploy: %v\n%s", err, out)
		}
	}}
	rec := run(t, context.Background(), lookup(t, "baseline"), o)
	if rec.Verdict != gameday.VerdictPass || rec.Load.Started != rec.Load.Scheduled || len(rec.Load.Shards) != 3 {
		t.Fatalf("verdict %s (%s), load %+v", rec.Verdict, rec.Reason, rec.Load)
	}
	for _, s := range rec.Load.Shards {
		if s.Error != "" || s.Shoppers != s.Scheduled {
			t.Errorf("shard %+v: want its whole part back", s)
		}
	}
}

func swarmState(t *testing.T, docker string) string {
	b, err := exec.Command(docker, "info", "--format", "{{.Swarm.LocalNodeState}}").Output()
	if err != nil {
		t.Fatalf("docker info: %v", err)
	}
	return strings.TrimSpace(string(b))
}
