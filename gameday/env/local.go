package env

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/gameday-dev/gameday/gameday/redisserver"
	"github.com/gameday-dev/gameday/gameday/toxi"
	"github.com/gameday-dev/gameday/internal/owner"
)

// LocalOptions configure a local environment.
type LocalOptions struct {
	// Binary is the gameday executable started as the payment stand-in and
	// the checkout; "" means this process's own executable, which must then
	// be gameday's (see ResolveBinary).
	Binary string
	// Dir receives the children's logs; required.
	Dir string
	// DataDir receives Redis's append-only file and the payment stand-in's
	// books. "" picks a fresh directory in memory (/dev/shm) where the
	// machine has one, else Dir; see dataDir.
	DataDir string
	// PaymentArgs and CheckoutArgs are extra flags for "gameday serve
	// payment" and "gameday serve checkout" (addresses are set here).
	PaymentArgs, CheckoutArgs []string
	// CatalogArgs are extra flags for "gameday serve catalog".
	CatalogArgs []string
	// EmbeddedRedis forces the embedded Redis-compatible server even when
	// redis-server is installed.
	EmbeddedRedis bool
	// Pods, when above 0, starts that many pods of the checkout behind a
	// router, and Routes is the router's table: shop -> pod (see
	// Spec.Pods).
	Pods   int
	Routes map[string]string
	// RequestAware are the dependencies whose proxies get a relay behind
	// them (Spec.RequestAware).
	RequestAware []string
	// Unproxied connects the checkout straight to its dependencies, with no
	// Toxiproxy proxy between: for measuring what the proxies cost
	// (BenchmarkProxyCost, docs/benchmarks.md), never for a drill. A
	// scenario with a network fault is refused, as there is no proxy for
	// it to act on; process faults still work.
	Unproxied bool
}

var _ Starter = LocalOptions{}

func (LocalOptions) Kind() string { return "local" }
func (LocalOptions) Fresh() bool  { return true }

// Start starts the local environment with o, its Dir and arguments taken
// from s.
func (o LocalOptions) Start(ctx context.Context, s Spec) (Environment, error) {
	o.Dir, o.PaymentArgs, o.CheckoutArgs, o.Pods, o.Routes = s.Dir, s.PaymentArgs, s.CheckoutArgs, s.Pods, s.Routes
	o.CatalogArgs = s.CatalogArgs
	o.RequestAware = s.RequestAware
	e, err := StartLocal(ctx, o)
	if err != nil {
		return nil, err // not a typed nil
	}
	return e, nil
}

// Local is the environment on this machine, every listener on loopback.
type Local struct {
	info     Info
	toxi     *toxi.Embedded
	client   *toxi.Client
	redis    map[string]Process
	closers  []func() error
	payment  *child
	catalog  *child
	checkout *child // the router, in an environment of pods
	payURL   string
	catURL   string
	coURL    string
	token    string
	// proxies maps each dependency to its proxy's name.
	proxies map[string]string
	// pods are the pods' checkouts by pod name, and podURLs their base
	// URLs; nil without pods.
	pods    map[string]*child
	podURLs map[string]string
}

var _ Environment = (*Local)(nil)

// StartLocal brings the local environment up. On error everything started
// so far is stopped again.
func StartLocal(ctx context.Context, o LocalOptions) (_ *Local, err error) {
	if o.Binary, err = ResolveBinary(o.Binary); err != nil {
		return nil, err
	}
	l := &Local{redis: map[string]Process{}, info: Info{Kind: "local"}}
	defer func() {
		if err != nil {
			_ = l.Close()
		}
	}()

	data := o.DataDir
	if data == "" {
		d, remove, err := dataDir(o.Dir)
		if err != nil {
			return nil, err
		}
		// Added first, so it runs last: after every process that writes
		// there has stopped.
		l.closers = append(l.closers, remove)
		data = d
	}

	// Each pod has its own inventory and sessions; without pods there is
	// one of each, named as the checkout's dependencies are.
	deps := []string{Inventory, Sessions}
	if o.Pods > 0 {
		deps = nil
		for i := 1; i <= o.Pods; i++ {
			deps = append(deps, podDependency(podName(i), Inventory), podDependency(podName(i), Sessions))
		}
		deps = append(deps, Routes)
	}
	addrs := map[string]string{}
	realRedis := false
	if _, ferr := redisserver.Find(""); ferr == nil && !o.EmbeddedRedis {
		realRedis = true
	}
	for _, dep := range deps {
		var p interface {
			Process
			Addr() string
		}
		if realRedis {
			dir := filepath.Join(data, "redis-"+strings.ReplaceAll(dep, "/", "-"))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, err
			}
			// Inventory keeps an append-only file, as a production store
			// would, so a killed and restarted Redis comes back with its
			// stock and orders; so does the routing table. Sessions are
			// disposable.
			p = &redisProc{opts: redisserver.Options{Dir: dir, Persist: !strings.HasSuffix(dep, Sessions)}}
		} else {
			p = &miniProc{}
		}
		if err := p.Start(ctx); err != nil {
			return nil, fmt.Errorf("start %s redis: %w", dep, err)
		}
		l.redis[dep] = p
		l.closers = append(l.closers, p.Kill)
		addrs[dep] = p.Addr()
	}
	if realRedis {
		out, _ := redisVersion()
		l.info.Redis = "redis-server " + out
	} else {
		l.info.Redis = "embedded (miniredis)"
		why := "redis-server is not installed"
		if o.EmbeddedRedis {
			why = "the embedded Redis was asked for"
		}
		l.info.Notes = append(l.info.Notes, why+": using an embedded Redis-compatible server (miniredis); its behaviour under faults is not Redis's. Install redis-server for a drill you can trust.")
	}

	if l.toxi, err = toxi.StartEmbedded("127.0.0.1:0", toxi.EmbeddedOptions{}); err != nil {
		return nil, err
	}
	l.closers = append(l.closers, l.toxi.Close)
	l.client = toxi.NewClient(l.toxi.APIAddr())
	l.info.Toxiproxy = "embedded " + l.toxi.APIAddr()

	// The stand-in keeps its books on file, so that a payment kill or
	// restart fault brings it back with every charge it answered, as a
	// real provider's books survive its crash; Start reuses these args.
	payArgs := append([]string{"serve", "payment", "-data", filepath.Join(data, "payment-data")}, o.PaymentArgs...)
	l.payment = &child{name: "payment", bin: o.Binary, args: payArgs, log: filepath.Join(o.Dir, "payment.log")}
	if err := l.payment.start(ctx, "127.0.0.1:0"); err != nil {
		return nil, err
	}
	l.closers = append(l.closers, func() error { return l.payment.stop(5 * time.Second) })
	addrs[Payment] = l.payment.Addr()
	l.payURL = "http://" + l.payment.Addr()

	// The catalogue the product page's cache is in front of, behind a
	// proxy of its own: the origin a cleared cache sends its misses to.
	l.catalog = &child{name: "catalog", bin: o.Binary, args: append([]string{"serve", "catalog"}, o.CatalogArgs...), log: filepath.Join(o.Dir, "catalog.log")}
	if err := l.catalog.start(ctx, "127.0.0.1:0"); err != nil {
		return nil, err
	}
	l.closers = append(l.closers, func() error { return l.catalog.stop(5 * time.Second) })
	addrs[Catalog] = l.catalog.Addr()
	l.catURL = "http://" + l.catalog.Addr()

	deps = append(deps, Payment, Catalog)
	proxied := map[string]string{}
	l.proxies = map[string]string{}
	if o.Unproxied {
		maps.Copy(proxied, addrs)
		deps = nil
		l.info.Notes = append(l.info.Notes, "unproxied: the checkout reaches its dependencies directly, past Toxiproxy; a measurement of what the proxies cost, not a drill")
	}
	for _, dep := range deps {
		name := strings.ReplaceAll(dep, "/", "-")
		p, err := l.client.Create(ctx, toxi.Proxy{Name: name, Listen: "127.0.0.1:0", Upstream: addrs[dep], Enabled: true, RequestAware: slices.Contains(o.RequestAware, dep)})
		if err != nil {
			return nil, fmt.Errorf("create %s proxy: %w", dep, err)
		}
		proxied[dep] = p.Listen
		l.proxies[dep] = name
	}

	// The admin token reaches the checkout in its environment, never its
	// arguments; the local Redis servers, on loopback, want no password,
	// whatever the runner's own environment says.
	l.token = NewAdminToken()
	secrets := []string{AdminTokenVar + "=" + l.token, RedisPasswordVar + "="}
	startCheckout := func(name, inventory, sessions string) (*child, error) {
		args := append([]string{"serve", "checkout",
			"-inventory-redis", inventory, "-session-redis", sessions,
			"-payment-url", "http://" + proxied[Payment], "-catalog-url", "http://" + proxied[Catalog]}, o.CheckoutArgs...)
		c := &child{name: name, bin: o.Binary, args: args, log: filepath.Join(o.Dir, name+".log"), env: secrets}
		if err := c.start(ctx, "127.0.0.1:0"); err != nil {
			return nil, err
		}
		l.closers = append(l.closers, func() error { return c.stop(10 * time.Second) })
		return c, nil
	}
	if o.Pods == 0 {
		if l.checkout, err = startCheckout("checkout", proxied[Inventory], proxied[Sessions]); err != nil {
			return nil, err
		}
		l.coURL = "http://" + l.checkout.Addr()
		l.info.Checkout = "reference checkout " + l.coURL
		return l, nil
	}
	if err := l.startPods(ctx, o, addrs, proxied, startCheckout); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *Local) Info() Info          { return l.info }
func (l *Local) CheckoutURL() string { return l.coURL }

// OwnToxiproxy: the Toxiproxy is embedded in this process and goes with
// it, so that faults on it need no journal.
func (l *Local) OwnToxiproxy() bool { return true }
func (l *Local) AdminToken() string { return l.token }
func (l *Local) PaymentURL() string { return l.payURL }

// CatalogURL is the catalogue stand-in's base URL, past its proxy: where
// its counts are read (GET /stats).
func (l *Local) CatalogURL() string      { return l.catURL }
func (l *Local) Toxiproxy() *toxi.Client { return l.client }

// ProxyName: the local environment names each proxy after its
// dependency ("pod-2-inventory" for pod-2/inventory).
func (l *Local) ProxyName(dep string) (string, bool) {
	name, ok := l.proxies[dep]
	return name, ok
}

// Process returns the Redis behind inventory or sessions, or the payment
// stand-in.
func (l *Local) Process(dep string) (Process, bool) {
	if p, ok := l.redis[dep]; ok {
		return p, true
	}
	if dep == Payment && l.payment != nil {
		return l.payment, true
	}
	if dep == Catalog && l.catalog != nil {
		return l.catalog, true
	}
	if dep == "checkout" && l.checkout != nil {
		return l.checkout, true
	}
	if pod, ok := strings.CutSuffix(dep, "/checkout"); ok && l.pods[pod] != nil {
		return l.pods[pod], true
	}
	return nil, false
}

// RedisOf is the Redis server behind inventory or sessions (a pod's
// too), on loopback, with no password.
func (l *Local) RedisOf(dep string) (Redis, bool) {
	p, ok := l.redis[dep].(interface{ Addr() string })
	if !ok || p.Addr() == "" {
		return Redis{}, false
	}
	return Redis{Addr: p.Addr()}, true
}

// Close stops everything, the checkout first, in the reverse order of start.
func (l *Local) Close() error {
	var errs []error
	for i := len(l.closers) - 1; i >= 0; i-- {
		errs = append(errs, l.closers[i]())
	}
	l.closers = nil
	return errors.Join(errs...)
}

// redisProc is a real redis-server that can be killed and started again
// on the same port and directory.
type redisProc struct {
	opts redisserver.Options
	mu   sync.Mutex
	srv  *redisserver.Server
}

// Start runs the server, unless it is running already: undoing a kill that
// did not happen must not start a second one.
func (r *redisProc) Start(ctx context.Context) error {
	if cur := r.server(); cur != nil {
		select {
		case <-cur.Done():
		default:
			return nil
		}
	}
	s, err := redisserver.Start(ctx, r.opts)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.srv = s
	r.opts.Port = s.Port() // later starts reuse the address
	r.mu.Unlock()
	return nil
}

func (r *redisProc) server() *redisserver.Server {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.srv
}

func (r *redisProc) Addr() string { return r.server().Addr() }
func (r *redisProc) Kill() error {
	if s := r.server(); s != nil {
		return s.Kill()
	}
	return nil
}
func (r *redisProc) Pause() error  { return r.server().Pause() }
func (r *redisProc) Resume() error { return r.server().Resume() }

// miniProc is the embedded fallback. Killing it loses its data.
type miniProc struct {
	mu   sync.Mutex
	m    *miniredis.Miniredis
	addr string
}

func (m *miniProc) Start(context.Context) error {
	m.mu.Lock()
	running := m.m != nil
	m.mu.Unlock()
	if running {
		return nil
	}
	mr := miniredis.NewMiniRedis()
	addr := m.addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	if err := mr.StartAddr(addr); err != nil {
		return fmt.Errorf("start embedded redis: %w", err)
	}
	m.mu.Lock()
	m.m, m.addr = mr, mr.Addr()
	m.mu.Unlock()
	return nil
}

func (m *miniProc) Addr() string { m.mu.Lock(); defer m.mu.Unlock(); return m.addr }
func (m *miniProc) Kill() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m != nil {
		m.m.Close()
		m.m = nil
	}
	return nil
}
func (m *miniProc) Pause() error  { return fmt.Errorf("pause the embedded redis: %w", ErrNoProcess) }
func (m *miniProc) Resume() error { return nil }

func redisVersion() (string, error) {
	p, err := redisserver.Find("")
	if err != nil {
		return "", err
	}
	b, err := exec.Command(p, "--version").Output()
	out := string(b)
	if err != nil {
		return "", err
	}
	for _, f := range strings.Fields(out) {
		if v, ok := strings.CutPrefix(f, "v="); ok {
			return v, nil
		}
	}
	return strings.TrimSpace(out), nil
}

// memoryRoot is where dataDir looks for memory first.
var memoryRoot = "/dev/shm"

const dataPrefix = "gameday-local-"

// dataDir makes the directory where the local environment keeps Redis's
// append-only file and the payment stand-in's books, and returns how to
// remove it. It is in memory (/dev/shm) where the machine has it: what is
// written there survives a killed process, which is what the process
// drills test (Redis still writes its append-only file before it answers),
// and a disk that stalls on a sync (another program's writes, an SD card)
// is not measured as a slow checkout (docs/runner.md#the-local-environment).
// Without it the directory is fallback (the run directory), kept after the
// run. The directory names its runner; one left by a runner that was
// killed is removed the next time.
func dataDir(fallback string) (string, func() error, error) {
	if st, err := os.Stat(memoryRoot); err != nil || !st.IsDir() {
		return fallback, func() error { return nil }, nil
	}
	removeDeadData(memoryRoot)
	dir, err := os.MkdirTemp(memoryRoot, dataPrefix)
	if err != nil {
		return fallback, func() error { return nil }, nil
	}
	if err := os.WriteFile(filepath.Join(dir, "owner"), []byte(owner.Self().String()), 0o644); err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("local environment data in %s: %w", dir, err)
	}
	return dir, func() error { return os.RemoveAll(dir) }, nil
}

// removeDeadData removes the data directories of runners on this machine
// that are gone (at most 1000 looked at).
func removeDeadData(root string) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for i, e := range entries {
		if i >= 1000 {
			return
		}
		if !e.IsDir() || !strings.HasPrefix(e.Name(), dataPrefix) {
			continue
		}
		dir := filepath.Join(root, e.Name())
		b, err := os.ReadFile(filepath.Join(dir, "owner"))
		if err != nil {
			continue
		}
		if o, ok := owner.Parse(strings.TrimSpace(string(b))); ok && o.Here() && !o.Alive() {
			_ = os.RemoveAll(dir)
		}
	}
}
