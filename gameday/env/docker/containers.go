package docker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/api/types/container"
	mobynet "github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/redis/go-redis/v9"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
	tcnet "github.com/testcontainers/testcontainers-go/network"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/gameday-dev/gameday/gameday/env"
	"github.com/gameday-dev/gameday/gameday/system"
	"github.com/gameday-dev/gameday/gameday/toxi"
	"github.com/gameday-dev/gameday/internal/owner"
	"github.com/gameday-dev/gameday/internal/ports"
	"github.com/gameday-dev/gameday/internal/routetable"
	"github.com/gameday-dev/gameday/scenarios"
)

// Images are the images the Docker environments run. The defaults are the
// ones the repository's .env names (a test keeps the two in step); the
// variables of the same names override them, as they do for Compose.
type Images struct {
	Redis     string // GAMEDAY_REDIS_IMAGE
	Toxiproxy string // GAMEDAY_TOXIPROXY_IMAGE
	Gameday   string // GAMEDAY_IMAGE: the checkout and the payment stand-in
}

// The defaults of Images, as .env names them.
const (
	DefaultRedisImage     = "redis:7.0"
	DefaultToxiproxyImage = "gameday-toxiproxy:2.12.0"
	DefaultGamedayImage   = "gameday:local"
)

// DefaultImages are the defaults, overridden by GAMEDAY_REDIS_IMAGE,
// GAMEDAY_TOXIPROXY_IMAGE and GAMEDAY_IMAGE when they are set.
func DefaultImages() Images {
	get := func(name, def string) string {
		if v := os.Getenv(name); v != "" {
			return v
		}
		return def
	}
	return Images{
		Redis:     get("GAMEDAY_REDIS_IMAGE", DefaultRedisImage),
		Toxiproxy: get("GAMEDAY_TOXIPROXY_IMAGE", DefaultToxiproxyImage),
		Gameday:   get("GAMEDAY_IMAGE", DefaultGamedayImage),
	}
}

// ContainersOptions configure a containers environment.
type ContainersOptions struct {
	// Images to run; zero fields take DefaultImages'.
	Images Images
	// PaymentArgs and CheckoutArgs are extra flags for "gameday serve
	// payment" and "gameday serve checkout" (addresses are set here).
	PaymentArgs, CheckoutArgs []string
	// Dir, when set, receives the checkout's and the stand-in's logs when
	// the environment closes.
	Dir string
	// RunID labels every container and network (dev.gameday.run), so that
	// Close can find the ones whose creation an interruption cut short.
	RunID string
	// Pods, when above 0, starts that many pods of the checkout, each
	// with its own Redis containers, behind a router container whose
	// table (Routes: shop -> pod) is in a Redis container of its own
	// (docs/pods.md), as the local environment does.
	Pods   int
	Routes map[string]string
	// RequestAware are the dependencies whose proxies get a relay behind
	// them (env.Spec.RequestAware).
	RequestAware []string
}

var _ env.Starter = ContainersOptions{}

func (ContainersOptions) Kind() string { return "containers" }
func (ContainersOptions) Fresh() bool  { return true }

// Start starts the containers environment with o, its Dir, RunID and
// arguments taken from s.
func (o ContainersOptions) Start(ctx context.Context, s env.Spec) (env.Environment, error) {
	o.Dir, o.RunID, o.PaymentArgs, o.CheckoutArgs, o.Pods, o.Routes = s.Dir, s.RunID, s.PaymentArgs, s.CheckoutArgs, s.Pods, s.Routes
	o.RequestAware = s.RequestAware
	c, err := StartContainers(ctx, o)
	if err != nil {
		return nil, err // not a typed nil
	}
	return c, nil
}

// Containers runs every part of the drill as a container on a private
// network, with testcontainers-go: inventory and session Redis, Toxiproxy,
// the payment stand-in and the reference checkout. Only Toxiproxy's API, the
// checkout and the stand-in are published, on loopback ports chosen at the
// start (see run). Close removes every container and the network; so does
// CleanupContainers ("gameday cleanup") for a runner killed outright.
type Containers struct {
	info    env.Info
	cli     *client.Client
	net     *testcontainers.DockerNetwork
	mu      sync.Mutex
	started []startedCtr // in start order
	procs   map[string]*containerProc
	toxi    *toxi.Client
	payURL  string
	coURL   string
	token   string // the checkout's admin token
	o       ContainersOptions
	labels  map[string]string
	logFile *os.File
	logger  tclog.Logger
	// deps are the dependencies behind Toxiproxy, in start order: each
	// one's container alias, proxy and where the checkout reaches it.
	deps []ctrDep
	// aliasDep names the process behind a container alias.
	aliasDep map[string]string
	// pods are the pods' checkout URLs on loopback, by pod; routes the
	// routing store's published address. Empty without pods.
	pods   map[string]string
	routes string
	// choosePort, when set, replaces freePort (a test's taken port).
	choosePort func() (string, error)
}

// ctrDep is one dependency of a containers environment.
type ctrDep struct {
	name     string // as faults target it: inventory, pod-2/inventory
	alias    string // its container's network alias
	upstream string // alias:port inside the network
	proxy    string // the Toxiproxy proxy's name
	listen   string // the proxy's address inside the network
}

// fileLogger is testcontainers' logger writing to the run directory.
type fileLogger struct{ f *os.File }

func (l fileLogger) Printf(format string, v ...any) { fmt.Fprintf(l.f, format+"\n", v...) }

var _ env.Environment = (*Containers)(nil)

type startedCtr struct {
	alias string
	ctr   *testcontainers.DockerContainer
}

// Network aliases and ports inside the private network. Toxiproxy listens
// for each dependency on a port of its own; the checkout is given those.
const (
	aliasInventory = "redis-inventory"
	aliasSessions  = "redis-sessions"
	aliasToxiproxy = "toxiproxy"
	aliasPayment   = "payment"
	aliasCheckout  = "checkout"
	aliasRouter    = "router"
)

// podName is the name of pod i, as scenarios name it.
var podName = scenarios.PodName

var proxyPorts = map[string]string{env.Inventory: "16379", env.Sessions: "16380", env.Payment: "18081"}

// ReaperImage is testcontainers' reaper (Ryuk), which removes a test's
// containers when the process that made them dies. Where its image cannot be
// had (no registry, and not built here), the reaper must be off
// (TESTCONTAINERS_RYUK_DISABLED=true, see ConfigureProcess): Close, and
// CleanupContainers after a kill, remove everything instead.
var ReaperImage = testcontainers.ReaperDefaultImage

const ryukVar = "TESTCONTAINERS_RYUK_DISABLED"

// ConfigureProcess makes the process-wide settings that testcontainers
// reads once, for a program about to start a containers environment: its
// global logger goes quiet (each container's own lines go to the run's
// containers.log all the same), and, unless TESTCONTAINERS_RYUK_DISABLED
// is set, the reaper is turned off when its image is not on this machine.
// They belong to the program, not to a library: the gameday command calls
// it, and StartContainers never changes them. It gives up within ten
// seconds, and where the engine cannot be asked it changes nothing more:
// StartContainers then says what is wrong, in the run's record.
func ConfigureProcess(ctx context.Context) {
	tclog.SetDefault(tclog.NewNoopLogger())
	if _, set := os.LookupEnv(ryukVar); set {
		return
	}
	cli, err := dockerClient()
	if err != nil {
		return
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := cli.Ping(ctx, client.PingOptions{}); err != nil {
		return
	}
	if _, err := cli.ImageInspect(ctx, ReaperImage); err != nil {
		_ = os.Setenv(ryukVar, "true")
	}
}

// reaper says how the reaper stands, for the run's notes, or refuses a
// start that would need an image this machine does not have.
func reaper(ctx context.Context, cli *client.Client) (note string, err error) {
	if os.Getenv(ryukVar) == "true" {
		return "testcontainers' reaper is off (" + ryukVar + "=true): gameday removes its containers itself, and `gameday cleanup` removes those of a runner that was killed", nil
	}
	if _, err := cli.ImageInspect(ctx, ReaperImage); err != nil {
		return "", fmt.Errorf("testcontainers' reaper image %s is not on this machine: set %s=true (gameday then removes its containers itself; the gameday command does this for you) or build the image (%v)", ReaperImage, ryukVar, err)
	}
	return "", nil
}

// StartContainers brings the containers environment up. On error, and when
// ctx ends during the start, everything made so far is removed again.
func StartContainers(ctx context.Context, o ContainersOptions) (_ *Containers, err error) {
	def := DefaultImages()
	if o.Images.Redis == "" {
		o.Images.Redis = def.Redis
	}
	if o.Images.Toxiproxy == "" {
		o.Images.Toxiproxy = def.Toxiproxy
	}
	if o.Images.Gameday == "" {
		o.Images.Gameday = def.Gameday
	}
	if o.RunID == "" {
		o.RunID = strconv.FormatInt(time.Now().UnixNano(), 36)
	}
	cli, err := dockerClient()
	if err != nil {
		return nil, err
	}
	c := &Containers{
		cli: cli, procs: map[string]*containerProc{}, o: o,
		info:   env.Info{Kind: "containers", Redis: "container " + o.Images.Redis, Toxiproxy: "container " + o.Images.Toxiproxy},
		labels: map[string]string{LabelEnv: "containers", LabelOwner: owner.Self().String(), "dev.gameday.run": o.RunID},
	}
	defer func() {
		if err != nil {
			_ = c.Close()
		}
	}()
	// A runner killed outright (where the reaper is off) left its
	// containers running: remove them first, as the fault journal's
	// leftovers are removed at every start.
	if left, err := CleanupContainers(ctx); err != nil {
		c.info.Notes = append(c.info.Notes, "removing containers left by a killed runner: "+err.Error())
	} else if len(left) > 0 {
		c.info.Notes = append(c.info.Notes, fmt.Sprintf("removed %d containers and networks left by a runner that was killed", len(left)))
	}
	for _, img := range []string{o.Images.Redis, o.Images.Toxiproxy, o.Images.Gameday} {
		if _, ierr := cli.ImageInspect(ctx, img); ierr != nil {
			return nil, fmt.Errorf("image %s is not on this machine: pull it, or build it with scripts/build-images.sh (%v)", img, ierr)
		}
	}
	// Each container's testcontainers lines go to the run directory, so
	// that the runner's own output stays readable.
	c.logger = tclog.NewNoopLogger()
	if o.Dir != "" {
		if f, ferr := os.OpenFile(filepath.Join(o.Dir, "containers.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); ferr == nil {
			c.logFile, c.logger = f, fileLogger{f}
		}
	}
	note, err := reaper(ctx, cli)
	if err != nil {
		return nil, err
	}
	if note != "" {
		c.info.Notes = append(c.info.Notes, note)
	}

	c.net, err = tcnet.New(ctx, tcnet.WithLabels(c.labels))
	if err != nil {
		return nil, fmt.Errorf("create the network: %w", err)
	}

	redisCmd := func(persist bool) []string {
		aof := "no"
		if persist {
			aof = "yes"
		}
		return []string{"redis-server", "--appendonly", aof, "--save", "", "--protected-mode", "no"}
	}
	// The Redis containers: the checkout's two, or each pod's two and the
	// routing store. Inventory (and the routing table) keep an
	// append-only file, as in the local environment, so that a killed
	// and restarted container comes back with its books.
	type redisSpec struct {
		dep, alias string
		persist    bool
	}
	redises := []redisSpec{{env.Inventory, aliasInventory, true}, {env.Sessions, aliasSessions, false}}
	if o.Pods > 0 {
		redises = nil
		for i := 1; i <= o.Pods; i++ {
			pod := podName(i)
			redises = append(redises, redisSpec{system.PodDependency(pod, env.Inventory), "redis-" + pod + "-inventory", true},
				redisSpec{system.PodDependency(pod, env.Sessions), "redis-" + pod + "-sessions", false})
		}
		redises = append(redises, redisSpec{env.Routes, "redis-routes", true})
	}
	c.aliasDep = map[string]string{aliasPayment: env.Payment, aliasCheckout: "checkout"}
	var routesCtr *testcontainers.DockerContainer
	for _, r := range redises {
		c.aliasDep[r.alias] = r.dep
		ctr, err := c.run(ctx, r.alias, o.Images.Redis, redisCmd(r.persist), nil, "6379/tcp", []string{"redis-cli", "ping"})
		if err != nil {
			return nil, err
		}
		if r.dep == env.Routes {
			routesCtr = ctr
		}
		c.deps = append(c.deps, ctrDep{name: r.dep, alias: r.alias, upstream: r.alias + ":6379"})
	}
	// Toxiproxy logs every connection at its default level, through the
	// engine's log driver: costly under load, and of no use here. A drill
	// with a request-aware toxic (lost_reply) gets gameday's own
	// Toxiproxy, from the gameday image: the same API, with relays behind
	// the proxies that ask for one.
	tpImage, tpCmd, tpReady := o.Images.Toxiproxy, []string{"-host=0.0.0.0"}, []string{"/toxiproxy-cli", "list"}
	if len(o.RequestAware) > 0 {
		tpImage = o.Images.Gameday
		tpCmd = []string{"serve", "toxiproxy", "-listen", "0.0.0.0:8474", "-allow-remote-listen", "-log-level", "warn"}
		tpReady = []string{"/gameday", "health", "http://127.0.0.1:8474/version"}
		c.info.Toxiproxy = "container " + o.Images.Gameday + " (gameday serve toxiproxy)"
	}
	tp, err := c.run(ctx, aliasToxiproxy, tpImage, tpCmd, map[string]string{"LOG_LEVEL": "warn"}, "8474/tcp", tpReady)
	if err != nil {
		return nil, err
	}
	tpAddr, err := published(ctx, tp, "8474/tcp")
	if err != nil {
		return nil, err
	}
	c.toxi = toxi.NewClient(tpAddr)
	c.info.Toxiproxy += " " + tpAddr

	payCmd := append([]string{"serve", "payment", "-listen", "0.0.0.0:8081", "-data", "/data"}, o.PaymentArgs...)
	pay, err := c.run(ctx, aliasPayment, o.Images.Gameday, payCmd, nil, "8081/tcp",
		[]string{"/gameday", "health", "http://127.0.0.1:8081/healthz"})
	if err != nil {
		return nil, err
	}
	payAddr, err := published(ctx, pay, "8081/tcp")
	if err != nil {
		return nil, err
	}
	c.payURL = "http://" + payAddr
	c.deps = append(c.deps, ctrDep{name: env.Payment, alias: aliasPayment, upstream: aliasPayment + ":8081"})

	// Each dependency behind its proxy, named after it (pod-2-inventory
	// for pod-2/inventory), on a port of its own: the checkout's three on
	// the ports they always had.
	for i := range c.deps {
		d := &c.deps[i]
		port, ok := proxyPorts[d.name]
		if !ok {
			port = strconv.Itoa(16400 + i)
		}
		d.proxy, d.listen = strings.ReplaceAll(d.name, "/", "-"), aliasToxiproxy+":"+port
		p := toxi.Proxy{Name: d.proxy, Listen: "0.0.0.0:" + port, Upstream: d.upstream, Enabled: true, RequestAware: slices.Contains(o.RequestAware, d.name)}
		if _, err := c.toxi.Create(ctx, p); err != nil {
			return nil, fmt.Errorf("create %s proxy: %w", d.name, err)
		}
	}
	// The checkouts' admin API is published on loopback, and wants a
	// token all the same: the other containers of the network reach it
	// too.
	c.token = env.NewAdminToken()
	startCheckout := func(alias, inventory, sessions string) (string, error) {
		cmd := append([]string{"serve", "checkout", "-listen", "0.0.0.0:8080",
			"-inventory-redis", c.listen(inventory), "-session-redis", c.listen(sessions),
			"-payment-url", "http://" + c.listen(env.Payment)}, o.CheckoutArgs...)
		co, err := c.run(ctx, alias, o.Images.Gameday, cmd, map[string]string{env.AdminTokenVar: c.token}, "8080/tcp",
			[]string{"/gameday", "health", "http://127.0.0.1:8080/healthz"})
		if err != nil {
			return "", err
		}
		addr, err := published(ctx, co, "8080/tcp")
		return "http://" + addr, err
	}
	if o.Pods == 0 {
		if c.coURL, err = startCheckout(aliasCheckout, env.Inventory, env.Sessions); err != nil {
			return nil, err
		}
		c.info.Checkout = "reference checkout (container " + o.Images.Gameday + ") " + c.coURL
		c.setReach()
		return c, nil
	}
	if err := c.startPods(ctx, o, routesCtr, startCheckout); err != nil {
		return nil, err
	}
	c.setReach()
	return c, nil
}

// listen is where the checkout reaches a dependency: its proxy.
func (c *Containers) listen(dep string) string {
	for _, d := range c.deps {
		if d.name == dep {
			return d.listen
		}
	}
	return ""
}

// startPods starts each pod's checkout, writes the routing table (the
// pods by their addresses inside the network) to the routing store, and
// starts the router in front of them.
func (c *Containers) startPods(ctx context.Context, o ContainersOptions, routesCtr *testcontainers.DockerContainer, startCheckout func(alias, inventory, sessions string) (string, error)) error {
	c.pods = map[string]string{}
	inside := map[string]string{}
	for i := 1; i <= o.Pods; i++ {
		pod := podName(i)
		alias := "checkout-" + pod
		c.aliasDep[alias] = system.PodDependency(pod, "checkout")
		u, err := startCheckout(alias, system.PodDependency(pod, env.Inventory), system.PodDependency(pod, env.Sessions))
		if err != nil {
			return fmt.Errorf("start %s: %w", pod, err)
		}
		c.pods[pod], inside[pod] = u, "http://"+alias+":8080"
	}
	for shop, pod := range o.Routes {
		if _, ok := inside[strings.TrimPrefix(pod, routetable.MovingPrefix)]; !ok {
			return fmt.Errorf("the routing table sends shop %s to %s, which is not one of the %d pods", shop, pod, o.Pods)
		}
	}
	addr, err := published(ctx, routesCtr, "6379/tcp")
	if err != nil {
		return err
	}
	c.routes = addr
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer rdb.Close()
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	_, err = routetable.WriteTable(wctx, rdb, routetable.Keys{}, o.Routes, inside)
	cancel()
	if err != nil {
		return err
	}
	c.aliasDep[aliasRouter] = "router"
	rt, err := c.run(ctx, aliasRouter, o.Images.Gameday, []string{"serve", "router", "-listen", "0.0.0.0:8090", "-routes-redis", c.listen(env.Routes)},
		nil, "8090/tcp", []string{"/gameday", "health", "http://127.0.0.1:8090/healthz"})
	if err != nil {
		return err
	}
	raddr, err := published(ctx, rt, "8090/tcp")
	if err != nil {
		return err
	}
	c.coURL = "http://" + raddr
	c.info.Checkout = fmt.Sprintf("%d pods of the reference checkout (container %s) behind a router at %s", o.Pods, o.Images.Gameday, c.coURL)
	return nil
}

// Pods is each pod's checkout URL on loopback; nil without pods.
func (c *Containers) Pods() map[string]string { return maps.Clone(c.pods) }

// RoutingStore is the routing table's Redis, published on loopback; it
// wants no password.
func (c *Containers) RoutingStore() (string, string) { return c.routes, "" }

// setReach tells each process how a restart is known to be over: its peers
// reach it again by its alias (see reach). A Redis is checked from the
// checkout that uses it (the router, for the routing store), the payment
// stand-in from a checkout, a checkout or the router from the stand-in
// (the gameday image has the health command).
func (c *Containers) setReach() {
	peer := func(dep string) func(context.Context) (string, error) {
		return func(context.Context) (string, error) { return c.procs[dep].id, nil }
	}
	anyCheckout := "checkout"
	if len(c.pods) > 0 {
		anyCheckout = system.PodDependency(podName(1), "checkout")
	}
	for _, d := range c.deps {
		by, url := anyCheckout, "redis://"+d.upstream
		switch {
		case d.name == env.Payment:
			url = "http://" + d.upstream + "/healthz"
		case d.name == env.Routes:
			by = "router"
		default:
			if pod, _, inPod := strings.Cut(d.name, "/"); inPod {
				by = system.PodDependency(pod, "checkout")
			}
		}
		c.procs[d.name].reach = &reach{peer: peer(by), cmd: []string{"/gameday", "health", "-timeout", "1s", url}}
	}
	for alias, dep := range c.aliasDep {
		if p, ok := c.procs[dep]; ok && (dep == "checkout" || dep == "router" || strings.HasSuffix(dep, "/checkout")) {
			port := "8080"
			if dep == "router" {
				port = "8090"
			}
			p.reach = &reach{peer: peer(env.Payment), cmd: []string{"/gameday", "health", "-timeout", "1s", "http://" + alias + ":" + port + "/healthz"}}
		}
	}
}

// run starts one container on the private network under alias, waits
// until ready, run inside it every 200ms, passes (the images have no shell,
// so testcontainers' port checks, which run one inside the container,
// cannot be used), and publishes port on loopback only: nothing of a drill
// is reachable from other machines. The containers have no Docker health
// check: one every half second for five containers cost a drill a third of
// a core on a small machine, and after a restart it said healthy before
// the other containers could reach the alias again (see reach).
//
// The loopback port is chosen here: one the engine picks changes when a
// killed container starts again, and one chosen here stays, so the
// runner's URLs stay right. Another process may take it between the
// choice and the start; the container is then removed and started again
// on another port, three tries in all, rather than the drill ending in an
// error over a port.
func (c *Containers) run(ctx context.Context, alias, image string, cmd []string, vars map[string]string, port string, ready []string) (*testcontainers.DockerContainer, error) {
	for try := 1; ; try++ {
		hostPort, err := c.pickPort()
		if err != nil {
			return nil, err
		}
		ctr, err := c.runOn(ctx, alias, image, cmd, vars, port, hostPort, ready)
		if err == nil || !portTaken(err) || try == 3 || ctx.Err() != nil {
			return ctr, err
		}
		c.mu.Lock()
		c.started = slices.DeleteFunc(c.started, func(s startedCtr) bool { return s.ctr == ctr })
		c.mu.Unlock()
		if ctr != nil {
			if terr := testcontainers.TerminateContainer(ctr); terr != nil {
				return nil, errors.Join(err, terr)
			}
		}
		c.logger.Printf("%s: loopback port %s was taken before the container started; again on another", alias, hostPort)
	}
}

// portTaken says whether a container's start failed because its loopback
// port was taken: by another container ("port is already allocated") or
// by another process ("address already in use").
func portTaken(err error) bool {
	s := err.Error()
	return strings.Contains(s, "port is already allocated") || strings.Contains(s, "address already in use")
}

// runOn is one try of run, publishing port on hostPort.
func (c *Containers) runOn(ctx context.Context, alias, image string, cmd []string, vars map[string]string, port, hostPort string, ready []string) (*testcontainers.DockerContainer, error) {
	p := mobynet.MustParsePort(port)
	opts := []testcontainers.ContainerCustomizer{
		testcontainers.WithLogger(c.logger),
		testcontainers.WithCmd(cmd...),
		testcontainers.WithLabels(c.labels),
		testcontainers.WithExposedPorts(port),
		tcnet.WithNetwork([]string{alias}, c.net),
		testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			// The port must be exposed for testcontainers to wait on it; an
			// unpublished one is bound to loopback all the same.
			hc.PortBindings = mobynet.PortMap{p: {{HostIP: netip.MustParseAddr("127.0.0.1"), HostPort: hostPort}}}
		}),
		testcontainers.WithWaitStrategyAndDeadline(60*time.Second, wait.ForExec(ready).WithPollInterval(200*time.Millisecond)),
	}
	if len(vars) > 0 {
		opts = append(opts, testcontainers.WithEnv(vars))
	}
	ctr, err := testcontainers.Run(ctx, image, opts...)
	if ctr != nil {
		c.mu.Lock()
		c.started = append(c.started, startedCtr{alias, ctr})
		c.mu.Unlock()
	}
	if err != nil {
		return ctr, fmt.Errorf("start %s (%s): %w", alias, image, err)
	}
	if dep := c.aliasDep[alias]; dep != "" {
		c.procs[dep] = &containerProc{cli: c.cli, id: ctr.GetContainerID(), name: alias}
	}
	return ctr, nil
}

// pickPort is the loopback port the next container is published on:
// freePort, or what a test puts in its place.
func (c *Containers) pickPort() (string, error) {
	if c.choosePort != nil {
		return c.choosePort()
	}
	return freePort()
}

// freePort is a loopback port for a container to be published on,
// reserved (internal/ports.Shared) until this process ends: the kernel's
// ":0" hands it to no other program, nor this process to another
// container, from the choice to the start and while a killed container is
// down, and the engine's proxy (docker-proxy, which sets SO_REUSEADDR)
// can still bind it. Only a program that binds it explicitly can take it;
// run then tries another.
func freePort() (string, error) {
	r, err := ports.Shared("127.0.0.1")
	if err != nil {
		return "", fmt.Errorf("find a free loopback port: %w", err)
	}
	heldPorts.Lock()
	heldPorts.list = append(heldPorts.list, r)
	heldPorts.Unlock()
	return strconv.Itoa(r.Port()), nil
}

// heldPorts are the reservations of the ports freePort chose.
var heldPorts struct {
	sync.Mutex
	list []*ports.Reservation
}

// published is the loopback address a container port is published on.
func published(ctx context.Context, ctr *testcontainers.DockerContainer, port string) (string, error) {
	p, err := ctr.MappedPort(ctx, port)
	if err != nil {
		return "", fmt.Errorf("published port of %s: %w", port, err)
	}
	return net.JoinHostPort("127.0.0.1", p.Port()), nil
}

func (c *Containers) Info() env.Info          { return c.info }
func (c *Containers) CheckoutURL() string     { return c.coURL }
func (c *Containers) PaymentURL() string      { return c.payURL }
func (c *Containers) AdminToken() string      { return c.token }
func (c *Containers) Toxiproxy() *toxi.Client { return c.toxi }

// ProxyName: the proxies are named after their dependency, as locally
// (pod-2-inventory for pod-2/inventory).
func (c *Containers) ProxyName(dep string) (string, bool) {
	for _, d := range c.deps {
		if d.name == dep {
			return d.proxy, true
		}
	}
	return "", false
}

// Process is the container behind a dependency (or "checkout").
func (c *Containers) Process(dep string) (env.Process, bool) {
	p, ok := c.procs[dep]
	if !ok {
		return nil, false // not a typed nil
	}
	return p, true
}

// OwnToxiproxy: the Toxiproxy is a container of the environment, removed
// with it, so that faults on it need no journal.
func (c *Containers) OwnToxiproxy() bool { return true }

// Close saves the servers' logs (when Dir is set), then removes every
// container and the network, and finally anything else labelled with this
// run (a container whose creation an interruption cut short). It does not
// use the drill's context: an interrupted drill must still clean up.
func (c *Containers) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c.mu.Lock()
	started := c.started
	c.started = nil
	c.mu.Unlock()
	var errs []error
	if c.o.Dir != "" {
		for _, s := range started {
			if s.alias == aliasCheckout || s.alias == aliasPayment || s.alias == aliasRouter || strings.HasPrefix(s.alias, "checkout-") {
				errs = append(errs, saveLogs(ctx, s.ctr, filepath.Join(c.o.Dir, s.alias+".log")))
			}
		}
	}
	for i := len(started) - 1; i >= 0; i-- {
		if err := testcontainers.TerminateContainer(started[i].ctr); err != nil {
			errs = append(errs, err)
		}
	}
	if c.net != nil {
		if err := c.net.Remove(ctx); err != nil {
			errs = append(errs, fmt.Errorf("remove network: %w", err))
		}
		c.net = nil
	}
	if c.logFile != nil {
		errs = append(errs, c.logFile.Close())
		c.logFile = nil
	}
	if c.cli != nil {
		errs = append(errs, c.sweep(ctx))
		errs = append(errs, c.cli.Close())
		c.cli = nil
	}
	return errors.Join(errs...)
}

// sweep removes containers and networks of this run that Close did not
// know of.
func (c *Containers) sweep(ctx context.Context) error {
	f := make(client.Filters).Add("label", "dev.gameday.run="+c.o.RunID)
	var errs []error
	cs, err := c.cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return fmt.Errorf("list this run's containers: %w", err)
	}
	for _, ctr := range cs.Items {
		if _, err := c.cli.ContainerRemove(ctx, ctr.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err != nil {
			errs = append(errs, err)
		}
	}
	ns, err := c.cli.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	if err != nil {
		return errors.Join(append(errs, fmt.Errorf("list this run's networks: %w", err))...)
	}
	for _, n := range ns.Items {
		if _, err := c.cli.NetworkRemove(ctx, n.ID, client.NetworkRemoveOptions{}); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func saveLogs(ctx context.Context, ctr *testcontainers.DockerContainer, path string) error {
	rc, err := ctr.Logs(ctx)
	if err != nil {
		return fmt.Errorf("logs of %s: %w", path, err)
	}
	defer rc.Close()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, io.LimitReader(rc, 64<<20))
	return errors.Join(err, f.Close())
}
