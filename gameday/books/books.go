// Package books reads a described system's books from its real stores and
// runs its setup: SQL (Postgres through pgx, MySQL through
// go-sql-driver/mysql), Redis (go-redis), HTTP with a JSON field (GJSON),
// and a command. Each store is reached once before anything else is done,
// so a store that cannot be reached stops a drill before any load is sent.
// Nothing is written to a store except what the system's setup says.
package books

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"   // database/sql driver "mysql"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	"github.com/redis/go-redis/v9"

	"github.com/gameday-dev/gameday/gameday/system"
	"github.com/gameday-dev/gameday/internal/noredirect"
)

// The MySQL driver logs a connection it finds broken and drops before a
// query (after a fault on the database: "closing bad idle connection")
// to the process's standard error, in the middle of a drill's output; the
// query that follows is made on a new connection, and its error, if any,
// is what the books report.
func init() { _ = mysql.SetLogger(log.New(io.Discard, "", 0)) }

// Reader asks a system's stores.
type Reader struct {
	sys    *system.System
	vals   system.Values
	sql    map[string]*sql.DB
	redis  map[string]*redis.Client
	hc     *http.Client
	closed bool
}

// Open connects to every store of sys and checks that each answers (a
// ping, or for an http store a request to its base URL that gets any
// answer), within timeout each. vals are the values setup and books
// templates see: SKU, Stock, Run. The error names the store.
func Open(ctx context.Context, sys *system.System, vals system.Values, timeout time.Duration) (_ *Reader, err error) {
	r := &Reader{sys: sys, vals: vals, sql: map[string]*sql.DB{}, redis: map[string]*redis.Client{},
		// No client-wide timeout: each request is bounded by its query's
		// own (or the ping's) context. No redirect is followed: it would
		// send the request's body and headers (a store's token) to
		// wherever the answer points, and read that host's answer as the
		// store's. The 3xx is the store's answer (see failed).
		hc: noredirect.Client(0)}
	defer func() {
		if err != nil {
			r.Close()
		}
	}()
	for _, name := range slices.Sorted(maps.Keys(sys.Stores)) {
		st := sys.Stores[name]
		pctx, cancel := context.WithTimeout(ctx, timeout)
		err := r.open(pctx, name, st)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("store %s (%s): %w", name, st.Kind(), hide(err, storeSecrets(st)))
		}
	}
	return r, nil
}

func (r *Reader) open(ctx context.Context, name string, st *system.Store) error {
	switch st.Kind() {
	case "postgres", "mysql":
		driver, dsn := "pgx", st.Postgres
		if st.Kind() == "mysql" {
			driver, dsn = "mysql", st.MySQL
		}
		db, err := sql.Open(driver, dsn)
		if err != nil {
			return err
		}
		db.SetMaxOpenConns(4)
		r.sql[name] = db
		if err := db.PingContext(ctx); err != nil {
			return fmt.Errorf("connect: %w", err)
		}
	case "redis":
		var opt *redis.Options
		if strings.Contains(st.Redis, "://") {
			o, err := redis.ParseURL(st.Redis)
			if err != nil {
				return err
			}
			opt = o
		} else {
			opt = &redis.Options{Addr: st.Redis}
		}
		// The books are read once a drill is over: no retries that could
		// apply a setup write twice, and the caller's deadline honoured.
		opt.MaxRetries = -1
		opt.ContextTimeoutEnabled = true
		c := redis.NewClient(opt)
		r.redis[name] = c
		if err := c.Ping(ctx).Err(); err != nil {
			return fmt.Errorf("connect: %w", err)
		}
	case "http":
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, st.HTTP, nil)
		if err != nil {
			return err
		}
		req.Header = st.Header()
		resp, err := r.hc.Do(req)
		if err != nil {
			return fmt.Errorf("connect: %w", err)
		}
		resp.Body.Close()
	default:
		return errors.New("unknown kind of store")
	}
	return nil
}

// Close lets go of every store.
func (r *Reader) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	var errs []error
	for _, db := range r.sql {
		errs = append(errs, db.Close())
	}
	for _, c := range r.redis {
		errs = append(errs, c.Close())
	}
	r.hc.CloseIdleConnections()
	return errors.Join(errs...)
}

// Setup runs the system's setup actions in order; the first that fails
// (after its retry_within, if it has one) stops it, named by its index.
func (r *Reader) Setup(ctx context.Context) error {
	for i, a := range r.sys.Setup {
		if err := r.actWithin(ctx, a); err != nil {
			return fmt.Errorf("%s: %w", r.sys.Where(fmt.Sprintf("setup[%d]", i)), err)
		}
	}
	return nil
}

// setupRetryEvery is how often a failing setup action with retry_within is
// asked again.
var setupRetryEvery = time.Second

// actWithin runs an action, and while it fails asks again every
// setupRetryEvery until its retry_within has passed. The error says how
// long it was tried.
func (r *Reader) actWithin(ctx context.Context, a *system.Action) error {
	deadline := time.Now().Add(a.RetryWithin.D())
	for tries := 1; ; tries++ {
		err := r.act(ctx, a)
		if err == nil || time.Now().Add(setupRetryEvery).After(deadline) {
			if err != nil && tries > 1 {
				err = fmt.Errorf("still failing after %d tries over %s: %w", tries, a.RetryWithin.D(), err)
			}
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (while retrying: %w)", ctx.Err(), err)
		case <-time.After(setupRetryEvery):
		}
	}
}

func (r *Reader) act(ctx context.Context, a *system.Action) (err error) {
	q := &a.Query
	defer r.hiding(q, &err)
	ctx, cancel := context.WithTimeout(ctx, q.Timeout.D())
	defer cancel()
	rq := r.sys.Render(q, r.vals)
	switch q.Kind() {
	case "sql":
		_, err := r.sql[q.Store].ExecContext(ctx, rq.SQL, rq.Args...)
		return err
	case "redis":
		return r.redis[q.Store].Do(ctx, rq.Redis...).Err()
	case "http":
		ans, err := r.get(ctx, rq)
		if err != nil && !errors.As(err, new(*tooLong)) {
			return err
		}
		if (a.Expect != 0 && ans.code != a.Expect) || (a.Expect == 0 && ans.code/100 != 2) {
			return r.failed(q, rq, ans)
		}
		return nil
	case "command":
		if _, err := run(ctx, r.sys.Dir(), rq.Command); err != nil && !errors.As(err, new(*tooLong)) {
			return err
		}
		return nil
	}
	return errors.New("unknown kind of action")
}

func clip(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}
