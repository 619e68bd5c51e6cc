package gameday_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gameday-dev/gameday/gameday"
	"github.com/gameday-dev/gameday/gameday/env"
	"github.com/gameday-dev/gameday/gameday/env/docker"
	"github.com/gameday-dev/gameday/gameday/toxi"
	"github.com/gameday-dev/gameday/internal/testenv"
)

// The Docker environments, drilled for real: containers started by the
// runner with testcontainers-go, and the project docker-compose.yml brings
// up. Both need the images scripts/build-images.sh builds (or pulls).

func needImages(t *testing.T) {
	t.Helper()
	im := docker.DefaultImages()
	testenv.Docker(t, im.Redis, im.Toxiproxy, im.Gameday)
}

// noLeftovers fails when a container or network carrying label is left.
func noLeftovers(t *testing.T, label string) {
	t.Helper()
	if left := testenv.Leftovers(t, label); len(left) > 0 {
		t.Errorf("left behind (label %s): %v", label, left)
	}
}

// A drill with every part in a container: the inventory Redis container
// is killed mid-sale and started again, the breaker opens and closes, the
// books balance — as in the local environment — and nothing is left.
func TestContainersDrillPassesAndLeavesNothing(t *testing.T) {
	needImages(t)
	out, err := exec.Command(binary, "run", "-env", "containers", "-quiet", "-time-scale", "0.5",
		"-runs-dir", keptRuns(t), "-journal", filepath.Join(t.TempDir(), "j.json"), "redis-killed").CombinedOutput()
	if code := exitCode(err); code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", code, out)
	}
	if !strings.Contains(string(out), "PASS") {
		t.Errorf("output:\n%s", out)
	}
	noLeftovers(t, docker.LabelEnv)
}

// Pods in containers: three pods of the checkout, each with its own Redis
// containers, the router and its routing store, one payment stand-in; a
// shop moved between pods mid-sale with its books intact, and nothing
// left after.
func TestContainersPodsDrillPassesAndLeavesNothing(t *testing.T) {
	needImages(t)
	out, err := exec.Command(binary, "run", "-env", "containers", "-quiet", "-time-scale", "0.4",
		"-runs-dir", keptRuns(t), "-journal", filepath.Join(t.TempDir(), "j.json"), "pod-move").CombinedOutput()
	if code := exitCode(err); code != 0 || !strings.Contains(string(out), "PASS  pod-move") || !strings.Contains(string(out), "move hot-to-pod-2 ends completed") {
		t.Fatalf("exit %d, want 0 with the move completed:\n%s", code, out)
	}
	noLeftovers(t, docker.LabelEnv)
}

// A drill that fails (a checkout that oversells on purpose) removes its
// containers too. Its lost_reply fault runs on gameday's own Toxiproxy,
// which the containers environment starts for it: the answers it lost are
// in run.json.
func TestContainersFailedDrillLeavesNothing(t *testing.T) {
	needImages(t)
	runs := t.TempDir()
	out, err := exec.Command(binary, "run", "-env", "containers", "-quiet",
		"-runs-dir", runs, "-journal", filepath.Join(t.TempDir(), "j.json"), "testdata/naive-oversell-lost-reply.yaml").CombinedOutput()
	if code := exitCode(err); code != 1 || !strings.Contains(string(out), "oversold") {
		t.Fatalf("exit %d, want 1 with the oversell named:\n%s", code, out)
	}
	dirs, _ := filepath.Glob(filepath.Join(runs, "*", "run.json"))
	if len(dirs) != 1 {
		t.Fatalf("run.json: %v", dirs)
	}
	rec, err := gameday.ReadRecord(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Faults) != 1 || rec.Faults[0].Hits == nil || rec.Faults[0].Hits.Lost != 2 || !strings.Contains(rec.Environment.Toxiproxy, "gameday serve toxiproxy") {
		t.Errorf("faults %+v, toxiproxy %q: want two answers lost, by gameday's Toxiproxy", rec.Faults, rec.Environment.Toxiproxy)
	}
	noLeftovers(t, docker.LabelEnv)
}

// SIGINT or SIGTERM mid-sale: exit 3, and every container and the network
// are gone.
func TestContainersInterruptLeavesNothing(t *testing.T) {
	needImages(t)
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd, stderr := startCmd(t, exec.Command(binary, "run", "-env", "containers", "-runs-dir", keptRuns(t),
				"-journal", filepath.Join(t.TempDir(), "j.json"), "baseline"))
			waitFor(t, stderr, "gameday: baseline load", 2*time.Minute)
			if left := testenv.Leftovers(t, docker.LabelEnv); len(left) < 6 {
				t.Fatalf("mid-sale there should be 5 containers and a network, found %v", left)
			}
			_ = cmd.Process.Signal(sig)
			if code := exitCode(cmd.Wait()); code != 3 {
				t.Errorf("exit code after %s = %d, want 3", sig, code)
			}
			noLeftovers(t, docker.LabelEnv)
		})
	}
}

// A runner killed outright cannot clean up; "gameday cleanup" removes what
// it left (its owner is dead) and nothing that a live runner owns.
func TestCleanupRemovesKilledRunnersContainers(t *testing.T) {
	needImages(t)
	cmd, stderr := startCmd(t, exec.Command(binary, "run", "-env", "containers", "-runs-dir", keptRuns(t),
		"-journal", filepath.Join(t.TempDir(), "j.json"), "baseline"))
	waitFor(t, stderr, "gameday: baseline load", 2*time.Minute)
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if left := testenv.Leftovers(t, docker.LabelEnv); len(left) == 0 {
		t.Fatal("a killed runner's containers should still be there (the reaper is off where its image is missing)")
	}
	out, err := exec.Command(binary, "cleanup", "-journal", filepath.Join(t.TempDir(), "j.json")).CombinedOutput()
	if err != nil {
		t.Fatalf("cleanup: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "removed container") || !strings.Contains(string(out), "removed network") {
		t.Errorf("cleanup said:\n%s", out)
	}
	noLeftovers(t, docker.LabelEnv)
}

// compose runs Docker Compose v2 when the docker CLI has it, else v1.
func compose(t *testing.T, dir string, envv []string, args ...string) {
	t.Helper()
	if out, err := composeCmd(dir, envv, args...).CombinedOutput(); err != nil {
		t.Fatalf("docker compose %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func composeCmd(dir string, envv []string, args ...string) *exec.Cmd {
	var cmd *exec.Cmd
	if exec.Command("docker", "compose", "version").Run() == nil {
		cmd = exec.Command("docker", append([]string{"compose"}, args...)...)
	} else {
		cmd = exec.Command("docker-compose", args...)
	}
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), envv...)
	return cmd
}

// composeUp brings a project up on loopback ports chosen here, one per
// name in portVars, and returns the environment that names them. A port
// free when chosen may be taken before the engine publishes it (a CI run
// failed so: "Bind for 127.0.0.1:36319 failed: port is already allocated");
// the project is then taken down and brought up on new ports, three tries
// in all. The cleanup takes the project down and checks that nothing of it
// is left, whatever happened.
func composeUp(t *testing.T, dir, project string, fixed, portVars []string, args ...string) (envv []string, ports map[string]string) {
	t.Helper()
	base := append([]string{"COMPOSE_PROJECT_NAME=" + project}, fixed...)
	t.Cleanup(func() {
		compose(t, dir, base, append(args, "down", "-v", "--remove-orphans")...)
		noLeftovers(t, "com.docker.compose.project="+project)
	})
	for try := 1; ; try++ {
		ports = map[string]string{}
		envv = append([]string(nil), base...)
		for i, p := range freePorts(t, len(portVars)) {
			ports[portVars[i]] = p
			envv = append(envv, portVars[i]+"="+p)
		}
		out, err := composeCmd(dir, envv, append(args, "up", "-d")...).CombinedOutput()
		if err == nil {
			return envv, ports
		}
		taken := strings.Contains(string(out), "port is already allocated") || strings.Contains(string(out), "address already in use")
		if !taken || try == 3 {
			t.Fatalf("docker compose up -d (try %d): %v\n%s", try, err, out)
		}
		t.Logf("docker compose up -d: a chosen port was taken; again on new ports:\n%s", out)
		compose(t, dir, envv, append(args, "down", "-v", "--remove-orphans")...)
	}
}

// keptRuns is a drill's runs directory, kept in $GAMEDAY_ARTIFACTS when
// the test fails (testenv.KeepRun): a Docker drill's verdict is explained
// by what it observed, and a temporary directory is gone by then.
func keptRuns(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	testenv.KeepRun(t, dir)
	return dir
}

// freePorts is n distinct loopback ports, reserved for the test
// (testenv.FreeAddr): the engine's proxy can publish on them, no one
// else's ":0" is handed them.
func freePorts(t *testing.T, n int) []string {
	t.Helper()
	ports := make([]string, n)
	for i := range ports {
		_, ports[i], _ = net.SplitHostPort(testenv.FreeAddr(t))
	}
	return ports
}

// The pods project (docker-compose.pods.yml), drilled with --env compose:
// one pod's inventory down stays in its pod, and a shop moved between
// pods mid-sale keeps its books; "down" leaves nothing of the project.
func TestComposePodsDrills(t *testing.T) {
	needImages(t)
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	project := fmt.Sprintf("gameday-pods-test-%d", os.Getpid())
	envv, _ := composeUp(t, root, project, []string{env.AdminTokenVar + "=" + rand.Text(), env.RedisPasswordVar + "=" + rand.Text()},
		[]string{"GAMEDAY_TOXIPROXY_PORT", "GAMEDAY_PAYMENT_PORT", "GAMEDAY_ROUTER_PORT", "GAMEDAY_ROUTES_PORT",
			"GAMEDAY_POD1_PORT", "GAMEDAY_POD2_PORT", "GAMEDAY_POD3_PORT"},
		"-f", "docker-compose.pods.yml")
	for _, sc := range []string{"pod-inventory-down", "pod-move"} {
		t.Run(sc, func(t *testing.T) {
			cmd := exec.Command(binary, "run", "-env", "compose", "-quiet", "-time-scale", "0.5", "-runs-dir", keptRuns(t),
				"-journal", filepath.Join(t.TempDir(), "j.json"), sc)
			cmd.Env = append(os.Environ(), envv...)
			cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
			out, err := cmd.CombinedOutput()
			if code := exitCode(err); code != 0 || !strings.Contains(string(out), "PASS  "+sc) {
				t.Fatalf("exit %d, want 0:\n%s", code, out)
			}
		})
	}
}

// The project docker-compose.yml brings up, drilled with --env compose:
// Redis killed, then the payment stand-in killed (its books survive), a
// SIGINT mid-fault leaves no fault on the project's Toxiproxy, and "down"
// leaves no container or network of the project.
func TestComposeDrills(t *testing.T) {
	needImages(t)
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	project := fmt.Sprintf("gameday-test-%d", os.Getpid())
	token, password := rand.Text(), rand.Text()
	envv, ports := composeUp(t, root, project, []string{env.AdminTokenVar + "=" + token, env.RedisPasswordVar + "=" + password},
		[]string{"GAMEDAY_TOXIPROXY_PORT", "GAMEDAY_CHECKOUT_PORT", "GAMEDAY_PAYMENT_PORT"})
	tp, co := ports["GAMEDAY_TOXIPROXY_PORT"], ports["GAMEDAY_CHECKOUT_PORT"]
	waitHealthy(t, "http://127.0.0.1:"+co+"/healthz", 2*time.Minute)

	drill := func(t *testing.T, scenario string) *exec.Cmd {
		cmd := exec.Command(binary, "run", "-env", "compose", "-time-scale", "0.5", "-runs-dir", keptRuns(t),
			"-journal", filepath.Join(t.TempDir(), "j.json"), scenario)
		cmd.Env = append(os.Environ(), envv...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		return cmd
	}
	for _, sc := range []string{"redis-killed", "payment-killed"} {
		t.Run(sc, func(t *testing.T) {
			out, err := drill(t, sc).CombinedOutput()
			if code := exitCode(err); code != 0 {
				t.Fatalf("exit %d, want 0:\n%s", code, out)
			}
		})
	}
	// The admin API wants the token, and the Redis servers the password,
	// from the host and from the project's own network alike. After the
	// drills, which waited until every part was reachable.
	t.Run("secrets", func(t *testing.T) {
		testenv.CheckAdminToken(t, "http://127.0.0.1:"+co+"/admin/ledger", token)
		// A runner without the token is refused before it drills.
		noToken := drill(t, "redis-killed")
		noToken.Env = append(noToken.Env, env.AdminTokenVar+"=")
		if out, err := noToken.CombinedOutput(); exitCode(err) != 2 || !strings.Contains(string(out), env.AdminTokenVar+" is not set") {
			t.Errorf("a runner without the admin token: exit %d\n%s", exitCode(err), out)
		}
		out, err := exec.Command("docker", "ps", "-q", "--filter", "label=com.docker.compose.project="+project,
			"--filter", "label=com.docker.compose.service=checkout").Output()
		id := strings.TrimSpace(string(out))
		if err != nil || id == "" {
			t.Fatalf("the checkout container: %q %v", out, err)
		}
		for _, redis := range []string{"redis://redis-inventory:6379", "redis://redis-sessions:6379"} {
			// A client on the project's network without the password (the
			// checkout's container, with REDISCLI_AUTH emptied).
			out, err := exec.Command("docker", "exec", "-e", "REDISCLI_AUTH=", id, "/gameday", "health", redis).CombinedOutput()
			if err == nil || !strings.Contains(string(out), "NOAUTH") {
				t.Errorf("%s without the password: %v %s, want NOAUTH", redis, err, out)
			}
			if out, err := exec.Command("docker", "exec", id, "/gameday", "health", redis).CombinedOutput(); err != nil {
				t.Errorf("%s with the password: %v %s", redis, err, out)
			}
		}
	})
	// A runner killed outright while the project's Redis is killed: the
	// journal lets "gameday cleanup" start the container again.
	t.Run("killed runner", func(t *testing.T) {
		journal := filepath.Join(t.TempDir(), "j.json")
		run := drill(t, "redis-killed")
		run.Args = append(run.Args[:len(run.Args)-1], "-journal", journal, "redis-killed")
		cmd, stderr := startCmd(t, run)
		waitFor(t, stderr, "faults=[redis-crash]", time.Minute)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		state := func() string {
			out, err := exec.Command("docker", "ps", "-a", "--filter", "label=com.docker.compose.project="+project,
				"--filter", "label=com.docker.compose.service=redis-inventory", "--format", "{{.State}}").Output()
			if err != nil {
				t.Fatal(err)
			}
			return strings.TrimSpace(string(out))
		}
		if st := state(); st == "running" {
			t.Fatalf("the killed runner's Redis is %s, want it stopped", st)
		}
		out, err := exec.Command(binary, "cleanup", "-journal", journal).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "undid the kill of container") {
			t.Fatalf("cleanup: %v\n%s", err, out)
		}
		if st := state(); st != "running" {
			t.Errorf("after cleanup the project's Redis is %s, want running", st)
		}
	})
	t.Run("interrupt", func(t *testing.T) {
		cmd, stderr := startCmd(t, drill(t, "inventory-latency"))
		waitFor(t, stderr, "faults=[slow-inventory", time.Minute)
		c := toxi.NewClient("127.0.0.1:" + tp)
		if n := toxics(t, c); n != 1 {
			t.Fatalf("mid-fault the project's Toxiproxy has %d toxics, want 1", n)
		}
		_ = cmd.Process.Signal(os.Interrupt)
		// 3, inconclusive; or 1 when what was reconciled before the stop
		// already proves money wrong (the verdict's precedence): the books
		// of an interrupted drill are real. Never 0 or 2.
		if code := exitCode(cmd.Wait()); code != 3 && code != 1 {
			t.Errorf("exit code after SIGINT = %d, want 3 (or 1 for a proven break)", code)
		}
		if n := toxics(t, c); n != 0 {
			t.Errorf("after SIGINT the project's Toxiproxy has %d toxics", n)
		}
	})
}

func toxics(t *testing.T, c *toxi.Client) int {
	t.Helper()
	ps, err := c.Proxies(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range ps {
		n += len(p.Toxics)
		if !p.Enabled {
			n++
		}
	}
	return n
}

func waitHealthy(t *testing.T, url string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s not healthy within %s", url, limit)
}
