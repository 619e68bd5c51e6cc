package docker

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	tclog "github.com/testcontainers/testcontainers-go/log"
	tcnet "github.com/testcontainers/testcontainers-go/network"

	"github.com/gameday-dev/gameday/internal/owner"
	"github.com/gameday-dev/gameday/internal/testenv"
)

// A container whose loopback port another process took between the choice
// and the start is started again on another port: the drill goes on, the
// container answers on the port its URL names, and nothing of the first
// try is left.
func TestContainerStartsAgainWhenItsPortIsTaken(t *testing.T) {
	testenv.Docker(t, DefaultRedisImage)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ConfigureProcess(ctx)
	cli, err := dockerClient()
	if err != nil {
		t.Fatal(err)
	}
	run := "port-taken-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	c := &Containers{cli: cli, procs: map[string]*containerProc{}, logger: tclog.NewNoopLogger(),
		labels: map[string]string{LabelEnv: "containers", LabelOwner: owner.Self().String(), "dev.gameday.run": run}}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		if left := testenv.Leftovers(t, "dev.gameday.run="+run); len(left) > 0 {
			t.Errorf("left behind: %v", left)
		}
	})
	if c.net, err = tcnet.New(ctx, tcnet.WithLabels(c.labels)); err != nil {
		t.Fatal(err)
	}
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	_, heldPort, _ := net.SplitHostPort(held.Addr().String())
	var picked []string
	c.choosePort = func() (string, error) {
		p := heldPort
		if len(picked) > 0 {
			var err error
			if p, err = freePort(); err != nil {
				return "", err
			}
		}
		picked = append(picked, p)
		return p, nil
	}

	ctr, err := c.run(ctx, aliasInventory, DefaultRedisImage, []string{"redis-server", "--save", "", "--protected-mode", "no"}, nil,
		"6379/tcp", []string{"redis-cli", "ping"})
	if err != nil {
		t.Fatalf("start with the first port taken: %v (ports tried: %v)", err, picked)
	}
	if len(picked) != 2 {
		t.Fatalf("ports tried: %v, want the taken one and another", picked)
	}
	addr, err := published(ctx, ctr, "6379/tcp")
	if err != nil {
		t.Fatal(err)
	}
	if want := net.JoinHostPort("127.0.0.1", picked[1]); addr != want {
		t.Errorf("published on %s, want %s", addr, want)
	}
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Errorf("ping %s: %v", addr, err)
	}
	if n := len(c.started); n != 1 {
		t.Errorf("%d containers recorded as started, want 1 (the first try's is removed)", n)
	}
	if ids := testenv.Leftovers(t, "dev.gameday.run="+run); len(ids) != 2 { // the container and the network
		t.Errorf("containers and networks of the test: %v, want one of each", ids)
	}
}
