package docker

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/moby/moby/client"

	"github.com/gameday-dev/gameday/gameday/env"
	"github.com/gameday-dev/gameday/gameday/toxi"
	"github.com/gameday-dev/gameday/internal/fileerr"
)

// ComposeOptions locate the environment docker-compose.yml brings up. Zero
// fields take the compose file's defaults (see ComposeDefaults).
type ComposeOptions struct {
	// Project is the Compose project name (COMPOSE_PROJECT_NAME); its
	// containers carry the label com.docker.compose.project=Project.
	Project string
	// Toxiproxy is the Toxiproxy API address; CheckoutURL and PaymentURL
	// the published checkout and payment stand-in.
	Toxiproxy, CheckoutURL, PaymentURL string
	// AdminToken is the checkout's admin token (GAMEDAY_ADMIN_TOKEN, as
	// docker-compose.yml gives it to the checkout).
	AdminToken string
	// Pods, when above 0, drills the pods project (docker-compose.pods.yml,
	// docs/pods.md) instead, with Routes (shop -> pod) written to its
	// routing store at RoutesAddr (the password is GAMEDAY_REDIS_PASSWORD);
	// purchases go to its router at RouterURL, and each pod's books are
	// read at PodURLs (pod-1's first).
	Pods          int
	Routes        map[string]string
	RouterURL     string
	RoutesAddr    string
	PodURLs       []string
	RedisPassword string
}

// Compose services behind each dependency, as docker-compose.yml names
// them, and the proxies deploy/compose/toxiproxy.json creates.
var oneCheckout = composeLayout{
	file: "docker-compose.yml", config: "deploy/compose/toxiproxy.json",
	services: map[string]string{env.Inventory: "redis-inventory", env.Sessions: "redis-sessions", env.Payment: "payment", "checkout": "checkout"},
	proxies:  map[string]string{env.Inventory: env.Inventory, env.Sessions: env.Sessions, env.Payment: env.Payment},
	// How each service is known to be up for the others: the health
	// command run in a peer service's container (the gameday image),
	// against the service's name on the project's network.
	reach: map[string]string{
		env.Inventory: "redis://redis-inventory:6379",
		env.Sessions:  "redis://redis-sessions:6379",
		env.Payment:   "http://payment:8081/healthz",
		"checkout":    "http://checkout:8080/healthz",
	},
	order: []string{env.Inventory, env.Sessions, env.Payment, "checkout"},
}

// ComposeDefaults reads the variables docker-compose.yml reads —
// COMPOSE_PROJECT_NAME, GAMEDAY_TOXIPROXY_PORT, GAMEDAY_CHECKOUT_PORT,
// GAMEDAY_PAYMENT_PORT and the checkout's GAMEDAY_ADMIN_TOKEN — from the
// environment, else from envFile (the
// repository's .env; a missing file is no error), else the compose file's
// own defaults, and returns the options they give.
func ComposeDefaults(envFile string) (ComposeOptions, error) {
	vars, err := readDotEnv(envFile)
	if err != nil {
		return ComposeOptions{}, err
	}
	get := func(name, def string) string {
		if v := os.Getenv(name); v != "" {
			return v
		}
		if v := vars[name]; v != "" {
			return v
		}
		return def
	}
	port := func(name, def string) (string, error) {
		v := get(name, def)
		if n, err := strconv.Atoi(v); err != nil || n <= 0 || n > 65535 {
			return "", fmt.Errorf("%s=%q: want a port number", name, v)
		}
		return v, nil
	}
	o := ComposeOptions{Project: get("COMPOSE_PROJECT_NAME", "gameday"), AdminToken: get(env.AdminTokenVar, "")}
	tp, err := port("GAMEDAY_TOXIPROXY_PORT", "8474")
	if err != nil {
		return o, err
	}
	co, err := port("GAMEDAY_CHECKOUT_PORT", "8080")
	if err != nil {
		return o, err
	}
	pay, err := port("GAMEDAY_PAYMENT_PORT", "8081")
	if err != nil {
		return o, err
	}
	o.Toxiproxy = "127.0.0.1:" + tp
	o.CheckoutURL = "http://127.0.0.1:" + co
	o.PaymentURL = "http://127.0.0.1:" + pay
	// The pods project's (docker-compose.pods.yml).
	router, err := port("GAMEDAY_ROUTER_PORT", "8090")
	if err != nil {
		return o, err
	}
	routes, err := port("GAMEDAY_ROUTES_PORT", "6390")
	if err != nil {
		return o, err
	}
	o.RouterURL, o.RoutesAddr = "http://127.0.0.1:"+router, "127.0.0.1:"+routes
	for k := 1; k <= composePods; k++ {
		p, err := port(fmt.Sprintf("GAMEDAY_POD%d_PORT", k), strconv.Itoa(8180+k))
		if err != nil {
			return o, err
		}
		o.PodURLs = append(o.PodURLs, "http://127.0.0.1:"+p)
	}
	o.RedisPassword = get(env.RedisPasswordVar, "")
	return o, nil
}

// readDotEnv reads NAME=VALUE lines (# comments, blank lines, optional
// quotes), as Compose reads .env.
func readDotEnv(path string) (map[string]string, error) {
	vars := map[string]string{}
	if path == "" {
		return vars, nil
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return vars, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		t := strings.TrimSpace(sc.Text())
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		name, val, ok := strings.Cut(t, "=")
		name = strings.TrimSpace(strings.TrimPrefix(name, "export "))
		if !ok || name == "" || strings.ContainsAny(name, " \t") {
			return nil, &fileerr.Error{File: path, Line: line, Field: name, Msg: "want NAME=VALUE"}
		}
		val = strings.TrimSpace(val)
		switch {
		case len(val) >= 2 && (val[0] == '"' || val[0] == '\'') && val[len(val)-1] == val[0]:
			val = val[1 : len(val)-1]
		default:
			// As Compose: " #" starts a comment in an unquoted value.
			if i := strings.Index(val, " #"); i >= 0 {
				val = strings.TrimSpace(val[:i])
			}
		}
		vars[name] = val
	}
	return vars, sc.Err()
}

var _ env.Starter = ComposeOptions{}

func (ComposeOptions) Kind() string { return "compose" }
func (ComposeOptions) Fresh() bool  { return false }

// Start opens the Compose environment; s is not used: the project runs
// with the settings it was brought up with.
func (o ComposeOptions) Start(ctx context.Context, s env.Spec) (env.Environment, error) {
	o.Pods, o.Routes = s.Pods, s.Routes
	c, err := OpenCompose(ctx, o)
	if err != nil {
		return nil, err // not a typed nil
	}
	return c, nil
}

// Compose drills the environment docker-compose.yml brought up: faults go
// through its Toxiproxy, process faults act on its containers (found by
// their Compose labels, so `docker compose` and `docker-compose` both do).
// It starts and stops nothing: the user brings the project up and down.
type Compose struct {
	*env.External
	cli   *client.Client
	procs map[string]*containerProc
	info  env.Info
	// pods are the pods project's checkouts on loopback, by pod; routes
	// its routing store. Empty for the one-checkout project.
	pods           map[string]string
	routes, routPw string
	// project is the Compose project's name, whose containers carry it.
	project string
}

var _ env.Environment = (*Compose)(nil)

// OpenCompose finds the project's containers and checks that every part is
// running; it changes nothing.
func OpenCompose(ctx context.Context, o ComposeOptions) (*Compose, error) {
	def, err := ComposeDefaults("")
	if err != nil {
		return nil, err
	}
	if o.Project == "" {
		o.Project = def.Project
	}
	if o.Toxiproxy == "" {
		o.Toxiproxy = def.Toxiproxy
	}
	if o.CheckoutURL == "" {
		o.CheckoutURL = def.CheckoutURL
	}
	if o.PaymentURL == "" {
		o.PaymentURL = def.PaymentURL
	}
	if o.AdminToken == "" {
		o.AdminToken = def.AdminToken
	}
	if o.RouterURL == "" {
		o.RouterURL = def.RouterURL
	}
	if o.RoutesAddr == "" {
		o.RoutesAddr = def.RoutesAddr
	}
	if len(o.PodURLs) == 0 {
		o.PodURLs = def.PodURLs
	}
	if o.RedisPassword == "" {
		o.RedisPassword = def.RedisPassword
	}
	if o.AdminToken == "" {
		// docker-compose.yml does not start without one: the runner needs
		// the same to set up and read the checkout.
		return nil, fmt.Errorf("compose environment: %s is not set: export the admin token the project's checkout was given (docs/docker.md)", env.AdminTokenVar)
	}
	lay := oneCheckout
	if o.Pods > 0 {
		if o.Pods > composePods {
			return nil, fmt.Errorf("compose environment: the scenario asks for %d pods; docker-compose.pods.yml has %d", o.Pods, composePods)
		}
		lay = podsLayout()
		o.CheckoutURL = o.RouterURL
	}
	ext, err := env.NewExternal(env.ExternalOptions{
		Toxiproxy: o.Toxiproxy, CheckoutURL: o.CheckoutURL, PaymentURL: o.PaymentURL, AdminToken: o.AdminToken,
		Proxies: lay.proxies,
	})
	if err != nil {
		return nil, err
	}
	cli, err := dockerClient()
	if err != nil {
		return nil, err
	}
	c := &Compose{External: ext, cli: cli, procs: map[string]*containerProc{}, project: o.Project}
	for dep, svc := range lay.services {
		f := make(client.Filters).Add("label", "com.docker.compose.project="+o.Project).Add("label", "com.docker.compose.service="+svc)
		cs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
		if err != nil {
			cli.Close()
			return nil, fmt.Errorf("compose environment: list containers: %w", err)
		}
		switch {
		case len(cs.Items) == 0:
			cli.Close()
			return nil, fmt.Errorf("compose environment: project %q has no %s container: bring it up first (docker compose up -d)", o.Project, svc)
		case len(cs.Items) > 1:
			cli.Close()
			return nil, fmt.Errorf("compose environment: project %q has %d %s containers: a process fault needs exactly one (scaled services are not drilled)", o.Project, len(cs.Items), svc)
		case cs.Items[0].State != "running":
			cli.Close()
			return nil, fmt.Errorf("compose environment: %s is %s, not running", svc, cs.Items[0].State)
		}
		c.procs[dep] = &containerProc{cli: cli, id: cs.Items[0].ID, name: svc}
		if dep == env.Inventory {
			c.info.Redis = "compose service " + svc + " (" + cs.Items[0].Image + ")"
		}
	}
	proxies, err := ext.Toxiproxy().Proxies(ctx)
	if err != nil {
		cli.Close()
		return nil, fmt.Errorf("compose environment: toxiproxy at %s: %w", o.Toxiproxy, err)
	}
	for _, name := range lay.proxies {
		if _, ok := proxies[name]; !ok {
			cli.Close()
			return nil, fmt.Errorf("compose environment: toxiproxy at %s has no proxy %q (%s creates it)", o.Toxiproxy, name, lay.config)
		}
	}
	c.setReach(lay)
	if err := c.waitReady(ctx, lay); err != nil {
		cli.Close()
		return nil, err
	}
	if o.Pods > 0 {
		if err := c.route(ctx, o); err != nil {
			cli.Close()
			return nil, err
		}
	}
	c.info.Kind = "compose"
	c.info.Toxiproxy = "compose " + o.Toxiproxy
	c.info.Checkout = "compose " + o.CheckoutURL
	c.info.Notes = append(c.info.Notes, "compose environment: the checkout and the payment stand-in run with the settings in "+lay.file+"; the scenario's checkout and payment settings are not applied")
	return c, nil
}

func (c *Compose) setReach(lay composeLayout) {
	for dep, url := range lay.reach {
		peer := c.procs[lay.peer(dep)]
		c.procs[dep].reach = &reach{
			peer: func(context.Context) (string, error) { return peer.id, nil },
			cmd:  []string{"/gameday", "health", "-timeout", "1s", url},
		}
	}
}

// composeReady bounds the wait for a project that was just brought up.
const composeReady = time.Minute

// waitReady waits until every service is reachable from the others: a
// project just brought up (docker compose up -d returns before its
// services answer) is drilled only once it is whole.
func (c *Compose) waitReady(ctx context.Context, lay composeLayout) error {
	ctx, cancel := context.WithTimeout(ctx, composeReady)
	defer cancel()
	for _, dep := range lay.order {
		if err := c.procs[dep].waitReachable(ctx); err != nil {
			return fmt.Errorf("compose environment: %w", err)
		}
	}
	return nil
}

func (c *Compose) Info() env.Info          { return c.info }
func (c *Compose) Toxiproxy() *toxi.Client { return c.External.Toxiproxy() }

// Process is the container of the service behind a dependency.
func (c *Compose) Process(dep string) (env.Process, bool) {
	p, ok := c.procs[dep]
	if !ok {
		return nil, false // not a typed nil
	}
	return p, true
}

// Close lets go of the Docker client; the project stays up.
func (c *Compose) Close() error { return c.cli.Close() }
