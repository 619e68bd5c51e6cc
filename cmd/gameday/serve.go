package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	defaults "github.com/gameday-dev/gameday/internal/checkoutdefaults"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gameday-dev/gameday/checkout"
	"github.com/gameday-dev/gameday/checkout/admission"
	"github.com/gameday-dev/gameday/checkout/catalog"
	"github.com/gameday-dev/gameday/checkout/payment"
	"github.com/gameday-dev/gameday/checkout/router"
	flags "github.com/gameday-dev/gameday/internal/checkoutflags"
	"github.com/gameday-dev/gameday/internal/rawsock"
	"github.com/redis/go-redis/v9"
)

const serveUsage = `usage: gameday serve SERVICE [flags]

Runs one of the services a drill needs, until SIGINT or SIGTERM:

  checkout   the reference checkout and its admin API
  payment    the payment-gateway stand-in
  catalog    the catalogue stand-in: the origin behind the product page's cache
  router     the pods' router: each request to its shop's pod
  toxiproxy  Toxiproxy (its standard HTTP API), embedded

Run "gameday serve SERVICE -h" for a service's flags.
`

// serveCmd is "gameday serve SERVICE [flags]".
func serveCmd(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, serveUsage)
		return usagef("serve: which service? checkout, payment, catalog, router or toxiproxy")
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, serveUsage)
		return errHelp
	case "checkout":
		return serveCheckout(args[1:], stderr)
	case "payment":
		return servePayment(args[1:], stderr)
	case "catalog":
		return serveCatalog(args[1:], stderr)
	case "router":
		return serveRouter(args[1:], stderr)
	case "toxiproxy":
		return serveToxiproxy(args[1:], stderr)
	}
	fmt.Fprint(stderr, serveUsage)
	return usagef("serve: unknown service %q (want checkout, payment, catalog, router or toxiproxy)", args[0])
}

// logFlags are the logging flags every server has.
type logFlags struct {
	level, format string
}

func (l *logFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&l.level, "log-level", "info", "log level: debug, info, warn, error")
	fs.StringVar(&l.format, "log-format", "text", "log format: text or json")
}

func (l *logFlags) logger(w io.Writer) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(l.level)); err != nil {
		return nil, usagef("-log-level %q: want debug, info, warn or error", l.level)
	}
	opts := &slog.HandlerOptions{Level: lvl}
	switch l.format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, usagef("-log-format %q: want text or json", l.format)
}

// parse is how a server's command line ends: the log flags registered
// beside the command's own, the arguments parsed, the logger made and the
// address to listen on checked.
func (l *logFlags) parse(fs *flag.FlagSet, args []string, listen *string, stderr io.Writer) (*slog.Logger, error) {
	l.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	log, err := l.logger(stderr)
	if err != nil {
		return nil, err
	}
	if err := checkListen(*listen); err != nil {
		return nil, err
	}
	return log, nil
}

// newFlagSet returns a flag set whose errors become usage errors (exit 2).
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// describe sets what "-h" of a command prints: its synopsis, what it
// does, then its flags. Every command's flag set is described so.
func describe(fs *flag.FlagSet, synopsis, what string) {
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "usage: %s\n\n%s\n", synopsis, strings.TrimSpace(what))
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n > 0 {
			fmt.Fprint(w, "\nflags:\n")
			fs.PrintDefaults()
		}
	}
}

func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return usageError{fmt.Errorf("%s: %w", fs.Name(), err)}
	}
	if fs.NArg() > 0 {
		return usagef("%s: unexpected argument %q", fs.Name(), fs.Arg(0))
	}
	return nil
}

// stockFlag collects -stock SKU=UNITS.
type stockFlag map[string]int64

func (s stockFlag) String() string { return fmt.Sprint(map[string]int64(s)) }
func (s stockFlag) Set(v string) error {
	sku, units, ok := strings.Cut(v, "=")
	n, err := strconv.ParseInt(units, 10, 64)
	if !ok || sku == "" || err != nil || n < 0 {
		return fmt.Errorf("want SKU=UNITS with UNITS >= 0, got %q", v)
	}
	s[sku] = n
	return nil
}

// keyFlag collects -admission-key values as given; keys() reads them after
// parsing, because the flag package would echo a bad value, secret and all.
type keyFlag []string

func (k *keyFlag) String() string { return fmt.Sprintf("%d keys", len(*k)) }

func (k *keyFlag) Set(v string) error {
	*k = append(*k, v)
	return nil
}

// keys reads ID=SECRET or ID=@FILE values. Errors never show a secret.
func (k keyFlag) keys() ([]admission.Key, error) {
	var out []admission.Key
	for i, v := range k {
		id, secret, ok := strings.Cut(v, "=")
		if !ok || id == "" || secret == "" {
			return nil, usagef("-admission-key (number %d): want ID=SECRET or ID=@FILE", i+1)
		}
		if file, ok := strings.CutPrefix(secret, "@"); ok {
			b, err := os.ReadFile(file)
			if err != nil {
				return nil, usagef("-admission-key %s: read the secret: %v", id, err)
			}
			// A file written by echo or an editor ends with a newline that
			// is not part of the secret.
			b = bytes.TrimSuffix(b, []byte("\n"))
			b = bytes.TrimSuffix(b, []byte("\r"))
			secret = string(b)
		}
		out = append(out, admission.Key{ID: id, Secret: []byte(secret)})
	}
	return out, nil
}

func serveCheckout(args []string, stderr io.Writer) error {
	fs := newFlagSet("serve checkout", stderr)
	describe(fs, "gameday serve checkout [flags]", fmt.Sprintf(`
Serves the reference checkout and its admin API (docs/checkout.md) until
SIGINT or SIGTERM. Two settings come from the environment, so that no
process listing shows them:

  %s     the admin API's bearer token; unset, /admin/... answers
                          loopback peers only
  %s  the password both Redis servers ask for (unset: none; set,
                          it is sent even to a Redis that has none, which
                          refuses it)`, checkout.AdminTokenEnv, checkout.RedisPasswordEnv))
	var (
		listen = fs.String("listen", "127.0.0.1:8080", "address to serve the checkout and its admin API on")
		cfg    checkout.Config
		stock  = stockFlag{}
		lf     logFlags
		keys   keyFlag
	)
	// The config's own flags; the command adds what is not a setting of
	// it, and the admission keys, which are secrets.
	cfg.RegisterFlags(fs)
	fs.Var(&keys, "admission-key", "ID=SECRET, or ID=@FILE to read the secret from a file, signing fair waiting-room tokens (repeatable: the first signs, all verify; none: a random key, and tokens do not survive a restart)")
	fs.Var(stock, "stock", "give a SKU this stock at start if it has none yet, SKU=UNITS (repeatable; a restarted checkout keeps its books)")
	lf.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	log, err := lf.logger(stderr)
	if err != nil {
		return err
	}
	cfg.Logger = log
	if cfg.Admission.Mode, err = admission.ParseMode(string(cfg.Admission.Mode)); err != nil {
		return usagef("-admission: %v", err)
	}
	if cfg.Admission.Keys, err = keys.keys(); err != nil {
		return err
	}
	if cfg.Admission.Mode.Fair() && len(keys) == 0 {
		cfg.Admission.Keys = []admission.Key{admission.GenerateKey("auto")}
		log.Warn("no -admission-key: waiting-room tokens are signed with a random key and will not survive a restart")
	}
	if err := checkListen(*listen); err != nil {
		return err
	}
	// Secrets come from the environment, never from flags: a process's
	// arguments are readable by every user of the machine.
	cfg.AdminToken = os.Getenv(checkout.AdminTokenEnv)
	cfg.RedisPassword = os.Getenv(checkout.RedisPasswordEnv)
	if cfg.AdminToken == "" {
		log.Info("no " + checkout.AdminTokenEnv + ": the admin API answers loopback peers only")
	}
	srv, err := checkout.New(cfg)
	if err != nil {
		return usageError{err}
	}
	defer srv.Close()
	for sku, units := range stock {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := srv.Inventory().InitStock(ctx, sku, units)
		cancel()
		if err != nil {
			return usageError{fmt.Errorf("-stock %s=%d: %w", sku, units, err)}
		}
	}
	log.Info("checkout starting", "mode", cfg.Mode, "admission", cfg.Admission.Mode.String(), "admission_in_progress", cfg.Admission.InProgress,
		"inventory_redis", cfg.InventoryRedis, "session_redis", cfg.SessionRedis, "payment_url", cfg.PaymentURL)
	return serveHTTP("checkout", *listen, srv, log)
}

func servePayment(args []string, stderr io.Writer) error {
	fs := newFlagSet("serve payment", stderr)
	describe(fs, "gameday serve payment [flags]", `
Serves the payment-gateway stand-in (docs/checkout.md) until SIGINT or
SIGTERM: it approves or declines each charge after a latency drawn from
-seed and the charge's key, answers a repeated key with its first charge,
voids charges, and lists every charge for reconciliation. Its books are
kept in memory, or in -data DIR to survive a kill.`)
	var (
		listen = fs.String("listen", defaults.StandInAddr, "address to serve the payment stand-in on")
		cfg    payment.Config
		lf     logFlags
	)
	cfg.RegisterFlags(fs)
	log, err := lf.parse(fs, args, listen, stderr)
	if err != nil {
		return err
	}
	srv, err := payment.NewServer(cfg, log)
	if err != nil {
		return usageError{err}
	}
	log.Info("payment stand-in starting", "min_latency", cfg.MinLatency, "max_latency", cfg.MaxLatency, "decline_rate", cfg.DeclineRate, "slots", cfg.Slots, "seed", cfg.Seed)
	return serveHTTP("payment", *listen, srv, log)
}

func serveCatalog(args []string, stderr io.Writer) error {
	fs := newFlagSet("serve catalog", stderr)
	describe(fs, "gameday serve catalog [flags]", `
Serves the catalogue stand-in (docs/checkout.md) until SIGINT or SIGTERM:
the origin the reference checkout's product page is cached in front of.
GET /products/{sku} answers a description after a latency drawn from
-seed; past -capacity requests in a second it answers 503 at once.
GET /stats counts the requests it took (requests, served, shed).`)
	var (
		listen = fs.String("listen", defaults.CatalogAddr, "address to serve the catalogue stand-in on")
		cfg    catalog.Config
		lf     logFlags
	)
	flags.Register(fs, []flags.Var{
		flags.CatalogMinLatency.Bind(&cfg.MinLatency), flags.CatalogMaxLatency.Bind(&cfg.MaxLatency),
		flags.CatalogCapacity.Bind(&cfg.Capacity), flags.CatalogSeed.Bind(&cfg.Seed),
	})
	log, err := lf.parse(fs, args, listen, stderr)
	if err != nil {
		return err
	}
	srv, err := catalog.New(cfg)
	if err != nil {
		return usageError{err}
	}
	log.Info("catalogue stand-in starting", "min_latency", cfg.MinLatency, "max_latency", cfg.MaxLatency, "capacity", cfg.Capacity, "seed", cfg.Seed)
	return serveHTTP("catalog", *listen, srv, log)
}

func serveRouter(args []string, stderr io.Writer) error {
	fs := newFlagSet("serve router", stderr)
	describe(fs, "gameday serve router [flags]", fmt.Sprintf(`
Serves the pods' router (docs/pods.md) until SIGINT or SIGTERM: it sends
each request to the pod of the shop its -shop-header names, by a routing
table it reloads from the Redis at -routes-redis every -refresh, and keeps
routing by the last table it loaded while that Redis is away. GET
/router/routes shows the table in use, GET /healthz answers 200 once there
is one. The Redis password comes from the environment:

  %s  the password the routing Redis asks for (unset: none)`, checkout.RedisPasswordEnv))
	var (
		listen = fs.String("listen", "127.0.0.1:8090", "address to serve the router on")
		store  = fs.String("routes-redis", "127.0.0.1:6379", "HOST:PORT of the Redis holding the routing table")
		opts   router.Options
		lf     logFlags
	)
	fs.StringVar(&opts.Keys.Routes, "routes-key", router.DefaultRoutesKey, "hash of shop -> pod (or moving:POD); its version is the key KEY:version")
	fs.StringVar(&opts.Keys.Pods, "pods-key", router.DefaultPodsKey, "hash of pod -> the pod checkout's base URL")
	fs.StringVar(&opts.ShopHeader, "shop-header", router.DefaultShopHeader, "request header that names the shop")
	fs.DurationVar(&opts.Refresh, "refresh", router.DefaultRefresh, "how long to wait after one load of the table before the next")
	lf.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	log, err := lf.logger(stderr)
	if err != nil {
		return err
	}
	switch {
	case opts.Refresh <= 0:
		return usagef("-refresh %s: want more than 0", opts.Refresh)
	case opts.Keys.Routes == "" || opts.Keys.Pods == "" || opts.ShopHeader == "":
		return usagef("-routes-key, -pods-key and -shop-header: want each named")
	}
	if err := checkListen(*listen); err != nil {
		return err
	}
	// The router says when the store is away, once an outage; go-redis
	// would say it at every failed dial.
	redis.SetLogger(quietRedisLog{})
	rdb := redis.NewClient(&redis.Options{
		Addr:                  *store,
		Password:              os.Getenv(checkout.RedisPasswordEnv), // never a flag: arguments are public
		Protocol:              2,
		DisableIdentity:       true,
		MaxRetries:            -1,
		DialerRetries:         1,
		ContextTimeoutEnabled: true,
		DialTimeout:           250 * time.Millisecond,
		ReadTimeout:           250 * time.Millisecond,
		WriteTimeout:          250 * time.Millisecond,
		PoolSize:              2,
	})
	defer rdb.Close()
	opts.Store, opts.Logger = rdb, log
	rt, err := router.New(opts)
	if err != nil {
		return usageError{err}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { rt.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	log.Info("router starting", "routes_redis", *store, "routes_key", opts.Keys.Routes, "pods_key", opts.Keys.Pods,
		"shop_header", opts.ShopHeader, "refresh", opts.Refresh)
	return serveHTTP("router", *listen, rt, log)
}

// quietRedisLog drops go-redis's own log lines.
type quietRedisLog struct{}

func (quietRedisLog) Printf(context.Context, string, ...any) {}

func checkListen(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return usagef("-listen %q: %v", addr, err)
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return usagef("-listen %q: bad port", addr)
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		// Allowed, since the operator asked for it, but worth a word.
		fmt.Fprintf(os.Stderr, "gameday: warning: -listen %q serves every interface, not only loopback\n", addr)
	}
	return nil
}

// serveHTTP serves h on addr until SIGINT or SIGTERM, then shuts down,
// letting requests in flight finish for up to 10s. With
// $GAMEDAY_CPUPROFILE_DIR set, it writes a CPU profile of the whole time
// it served there, as NAME-PID.pprof (docs/benchmarks.md: how a drill's
// children spend their CPU).
func serveHTTP(name, addr string, h http.Handler, log *slog.Logger) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if dir := os.Getenv("GAMEDAY_CPUPROFILE_DIR"); dir != "" {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%s-%d.pprof", name, os.Getpid())))
		if err != nil {
			return fmt.Errorf("$GAMEDAY_CPUPROFILE_DIR: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return fmt.Errorf("$GAMEDAY_CPUPROFILE_DIR: %w", err)
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return usageError{fmt.Errorf("-listen %s: %w", addr, err)}
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 60 * time.Second}
	errc := make(chan error, 1)
	// Its connections read and write with raw system calls
	// (internal/rawsock): a request is a read and an answer a write, and
	// made the ordinary way each wakes the Go scheduler between arrivals.
	go func() { errc <- srv.Serve(rawsock.Listener{Listener: ln}) }()
	// The "listening" line is what a supervising runner waits for; it
	// carries the bound address, which differs from -listen with port 0.
	log.Info("listening", "addr", ln.Addr().String())
	select {
	case err := <-errc:
		return fmt.Errorf("serve %s: %w", addr, err)
	case <-ctx.Done():
	}
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shut down: %w", err)
	}
	log.Info("stopped")
	return nil
}
