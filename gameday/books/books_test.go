package books_test

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/redis/go-redis/v9"

	"github.com/gameday-dev/gameday/gameday/books"
	"github.com/gameday-dev/gameday/gameday/system"
	"github.com/gameday-dev/gameday/internal/testenv"
)

// One system whose books live in every kind of store: a real PostgreSQL,
// a real redis-server, an HTTP endpoint and a command. Setup writes only
// what it says; each fact and row is read back as the oracles need it.
func TestBooksFromEveryKindOfStore(t *testing.T) {
	pg := testenv.PostgresServer(t)
	rs := testenv.Redis(t)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/charges":
			io.WriteString(w, `{"charges":[{"key":"r1-1/1","id":"ch_1","status":"captured","created_at":"2026-12-01T09:00:00Z"},
				{"key":"r1-2/1","id":"ch_2","status":"refunded","created_at":1764579600123},{"key":"other","id":"ch_3","status":"failed"}]}`)
		case "/settled":
			io.WriteString(w, `{"open": 0}`)
		default:
			io.WriteString(w, "ok")
		}
	}))
	defer api.Close()
	script := filepath.Join(t.TempDir(), "orders.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho r1-1\necho r1-3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("pgx", pg.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE orders (cart text PRIMARY KEY, sku text, charge text, at timestamptz, wall timestamp);
		INSERT INTO orders VALUES ('r1-1', 'drop', 'ch_1', '2026-12-01T09:00:00Z', '2026-12-01 10:00:00.5'), ('r1-2', 'drop', NULL, NULL, NULL), ('x-9', 'other', 'ch_9', NULL, NULL)`); err != nil {
		t.Fatal(err)
	}
	sys, err := system.Parse("books.yaml", []byte(fmt.Sprintf(`
name: books
base_url: http://127.0.0.1:1
sku: drop
purchase: {steps: [{url: /, answers: [{outcome: confirmed}]}]}
stores:
  db: {postgres: "%s"}
  kv: {redis: "%s"}
  api: {http: "%s"}
setup:
  - {store: kv, redis: [SET, "stock:{{.SKU}}", "{{.Stock}}"]}
  - {store: kv, redis: [HSET, "sold:{{.SKU}}", "r1-1", '{"charge":"ch_1"}', "r1-4", '{"charge":"ch_4"}']}
  - {store: db, sql: "UPDATE orders SET sku = $1 WHERE cart = $2", args: ["{{.SKU}}", "x-9"]}
  - {store: api, http: {method: POST, path: /reset, body: '{"run": {{json .Run}}}'}}
books:
  stock:
    available: {store: kv, redis: [GET, "stock:{{.SKU}}"]}
    sold: {store: db, sql: "SELECT count(*) FROM orders WHERE sku = $1", args: ["{{.SKU}}"]}
    reserved: {command: [sh, -c, "echo 2"]}
    initial: {store: api, http: {path: /settled}, json: open}
  orders:
    store: db
    sql: "SELECT cart AS checkout_id, charge, at AS created_at FROM orders WHERE sku = $1 ORDER BY cart"
    args: ["{{.SKU}}"]
  charges:
    store: api
    http: {path: /charges}
    items: charges
    fields: {checkout_id: {json: key, regex: '^(.*)/[0-9]+$'}, id: id, status: status, created_at: created_at}
  settled: {store: api, http: {path: /settled}, json: open}
`, pg.DSN, rs.Addr(), api.URL)), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r, err := books.Open(ctx, sys, system.Values{SKU: "drop", Stock: 25, Run: "r1"}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		q    *system.Query
		want float64
	}{
		{sys.Books.Stock.Available, 25}, {sys.Books.Stock.Sold, 3}, {sys.Books.Stock.Reserved, 2}, {sys.Books.Stock.Initial, 0},
	} {
		if v, err := r.Value(ctx, c.q); err != nil || v != c.want {
			t.Errorf("value: %v %v, want %v", v, err, c.want)
		}
	}
	orders, err := r.Rows(ctx, sys.Books.Orders, []string{"checkout_id", "charge", "created_at"})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(orders) != "[map[charge:ch_1 checkout_id:r1-1 created_at:2026-12-01T09:00:00Z] map[charge: checkout_id:r1-2 created_at:] map[charge:ch_9 checkout_id:x-9 created_at:]]" {
		t.Errorf("orders %v", orders)
	}

	// An SQL answer with no row still says its columns, in lower case:
	// a misnamed one is found before the sale, when this run has none.
	sysNone, err := system.Parse("none.yaml", []byte(fmt.Sprintf(`
name: none
base_url: http://127.0.0.1:1
sku: drop
purchase: {steps: [{url: /, answers: [{outcome: confirmed}]}]}
stores:
  db: {postgres: "%s"}
books:
  orders: {store: db, sql: "SELECT cart AS checkout_id, charge AS Amount FROM orders WHERE false"}
  charges: {store: db, sql: "SELECT cart AS checkout_id, 'approved' AS status, wall AS created_at FROM orders WHERE cart = 'r1-1'"}
`, pg.DSN)), nil)
	if err != nil {
		t.Fatal(err)
	}
	rNone, err := books.Open(ctx, sysNone, system.Values{SKU: "drop", Run: "r1"}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer rNone.Close()
	if tb, err := rNone.Table(ctx, sysNone.Books.Orders, nil); err != nil || len(tb.Rows) != 0 || fmt.Sprint(tb.Columns) != "[checkout_id amount]" {
		t.Errorf("an answer with no row: %+v, %v", tb, err)
	}
	// A timestamp without time zone keeps none: its wall clock is read
	// without one, not as the UTC the driver hands over.
	if tb, err := rNone.Table(ctx, &sysNone.Books.Charges.Query, nil); err != nil || len(tb.Rows) != 1 || tb.Rows[0]["created_at"] != "2026-12-01 10:00:00.5" {
		t.Errorf("timestamp without time zone: %+v, %v", tb, err)
	}
	charges, err := r.Rows(ctx, &sys.Books.Charges.Query, []string{"checkout_id", "id", "status", "created_at"})
	if err != nil {
		t.Fatal(err)
	}
	if len(charges) != 3 || charges[0]["checkout_id"] != "r1-1" || charges[1]["created_at"] != "1764579600123" || charges[2]["checkout_id"] != "" {
		t.Errorf("charges %v", charges)
	}
	if ok, _, err := r.Settled(ctx, sys.Books.Settled); !ok || err != nil {
		t.Errorf("settled: %v %v", ok, err)
	}

	// A Redis hash, and a command's lines, as rows.
	hash := &system.Query{Store: "kv", Redis: []string{"HGETALL", "sold:drop"}, Fields: map[string]*system.Field{"charge": {JSON: "charge"}}, Timeout: system.Duration(time.Second)}
	lines := &system.Query{Command: []string{script}, Timeout: system.Duration(time.Second)}
	sys2, err := system.Parse("rows.yaml", []byte(fmt.Sprintf(`
name: rows
base_url: http://127.0.0.1:1
sku: drop
purchase: {steps: [{url: /, answers: [{outcome: confirmed}]}]}
stores: {kv: {redis: "%s"}}
books:
  orders: {store: kv, redis: [HGETALL, "sold:{{.SKU}}"], fields: {charge: charge}}
  charges: {command: ["%s"]}
`, rs.Addr(), script)), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = hash, lines
	r2, err := books.Open(ctx, sys2, system.Values{SKU: "drop"}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	h, err := r2.Rows(ctx, sys2.Books.Orders, []string{"checkout_id", "charge"})
	if err != nil || fmt.Sprint(h) != "[map[charge:ch_1 checkout_id:r1-1] map[charge:ch_4 checkout_id:r1-4]]" {
		t.Errorf("hash rows %v, %v", h, err)
	}
	l, err := r2.Rows(ctx, &sys2.Books.Charges.Query, []string{"checkout_id", "status"})
	if err != nil || fmt.Sprint(l) != "[map[checkout_id:r1-1] map[checkout_id:r1-3]]" {
		t.Errorf("command rows %v, %v", l, err)
	}
	// A hash where a count is wanted: the error says what came and what
	// counts it, not Go's name for the type.
	if _, err := r2.Value(ctx, sys2.Books.Orders); err == nil || !strings.Contains(err.Error(), "got a hash or map (of a Redis hash, HLEN counts") {
		t.Errorf("a hash as a count: %v", err)
	}
}

// A store that cannot be reached stops the drill before anything else:
// the error names the store, and nothing was written anywhere.
func TestUnreachableStoreIsRefusedFirst(t *testing.T) {
	rs := testenv.Redis(t)
	sys, err := system.Parse("x.yaml", []byte(fmt.Sprintf(`
name: x
base_url: http://127.0.0.1:1
sku: drop
purchase: {steps: [{url: /, answers: [{outcome: confirmed}]}]}
stores:
  kv: {redis: "%s"}
  db: {postgres: "postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=1"}
setup:
  - {store: kv, redis: [SET, "touched", "1"]}
`, rs.Addr())), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = books.Open(context.Background(), sys, system.Values{}, 3*time.Second)
	if err == nil || !strings.Contains(err.Error(), "store db (postgres)") {
		t.Fatalf("Open: %v, want the db store named", err)
	}
	c := redis.NewClient(&redis.Options{Addr: rs.Addr()})
	defer c.Close()
	if n, _ := c.Exists(context.Background(), "touched").Result(); n != 0 {
		t.Error("setup ran although a store could not be reached")
	}
}

// The same books in MySQL's protocol (a real MariaDB): setup writes with
// go-sql-driver/mysql's ? placeholders, and rows and values come back as
// text; a DATETIME, which keeps no zone, without one (books.charges.zone
// says which it is in).
func TestBooksFromMySQL(t *testing.T) {
	my := testenv.MySQLServer(t)
	sys, err := system.Parse("my.yaml", []byte(fmt.Sprintf(`
name: my
base_url: http://127.0.0.1:1
sku: drop
purchase: {steps: [{url: /, answers: [{outcome: confirmed}]}]}
stores:
  db: {mysql: "%s"}
setup:
  - {store: db, sql: "CREATE TABLE IF NOT EXISTS stock (sku varchar(20) PRIMARY KEY, available int)"}
  - {store: db, sql: "CREATE TABLE IF NOT EXISTS orders (cart varchar(40) PRIMARY KEY, sku varchar(20), at datetime)"}
  - {store: db, sql: "REPLACE INTO stock VALUES (?, ?)", args: ["{{.SKU}}", "{{.Stock}}"]}
  - {store: db, sql: "INSERT INTO orders VALUES (?, ?, '2026-12-01 09:00:00'), ('x-1', 'other', NULL)", args: ["{{.Run}}-1", "{{.SKU}}"]}
books:
  stock: {available: {store: db, sql: "SELECT available FROM stock WHERE sku = ?", args: ["{{.SKU}}"]}}
  orders: {store: db, sql: "SELECT cart AS checkout_id, at AS created_at FROM orders ORDER BY cart"}
  settled: {store: db, sql: "SELECT count(*) FROM orders WHERE at IS NULL AND sku = ?", args: ["{{.SKU}}"]}
`, my.DSN)), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r, err := books.Open(ctx, sys, system.Values{SKU: "drop", Stock: 12, Run: "r9"}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	if v, err := r.Value(ctx, sys.Books.Stock.Available); err != nil || v != 12 {
		t.Errorf("available: %v %v", v, err)
	}
	rows, err := r.Rows(ctx, sys.Books.Orders, []string{"checkout_id", "created_at"})
	if err != nil || fmt.Sprint(rows) != "[map[checkout_id:r9-1 created_at:2026-12-01 09:00:00] map[checkout_id:x-1 created_at:]]" {
		t.Errorf("orders: %v %v", rows, err)
	}
	if ok, _, err := r.Settled(ctx, sys.Books.Settled); !ok || err != nil {
		t.Errorf("settled: %v %v", ok, err)
	}
}

// Commands run in the system file's directory, wherever gameday runs: a
// script beside the file is named ./script.sh. A setup that fails names
// the file, line and field.
func TestCommandsRunBesideTheSystemFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "available.sh"), []byte("#!/bin/sh\necho 7\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "gameday.yaml")
	if err := os.WriteFile(file, []byte(`name: x
base_url: http://127.0.0.1:1
sku: drop
purchase: {steps: [{url: /, answers: [{outcome: confirmed}]}]}
setup:
  - {command: [./no-such-script.sh]}
books:
  stock: {available: {command: [./available.sh]}}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	sys, err := system.LoadFile(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r, err := books.Open(ctx, sys, system.Values{SKU: "drop"}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if v, err := r.Value(ctx, sys.Books.Stock.Available); err != nil || v != 7 {
		t.Errorf("available: %v %v", v, err)
	}
	if err := r.Setup(ctx); err == nil || !strings.Contains(err.Error(), file+":6: setup[0]: ./no-such-script.sh") {
		t.Errorf("setup: %v", err)
	}
}

// A setup action with retry_within is asked again while it fails: a
// checkout that answers 409 until its previous drill's voids are done is
// given the time; without retry_within, or past it, the drill stops with
// the service's last answer.
func TestSetupRetriesWithin(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) <= 2 {
			http.Error(w, `{"error":"sku-1 is not settled: 1 charges waiting to be voided"}`, http.StatusConflict)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	dir := t.TempDir()
	open := func(retry string) (*books.Reader, string) {
		file := filepath.Join(dir, "gameday.yaml")
		if err := os.WriteFile(file, []byte(`name: x
base_url: http://127.0.0.1:1
sku: s
purchase: {steps: [{url: /, answers: [{outcome: confirmed}]}]}
stores: {shop: {http: "`+srv.URL+`"}}
setup:
  - {store: shop, http: {method: PUT, path: /admin/stock}, expect: 200`+retry+`}
books:
  stock: {available: {store: shop, http: {path: /}}}
`), 0o644); err != nil {
			t.Fatal(err)
		}
		sys, err := system.LoadFile(file, nil)
		if err != nil {
			t.Fatal(err)
		}
		r, err := books.Open(context.Background(), sys, system.Values{SKU: "s"}, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = r.Close() })
		return r, file
	}
	r, file := open("")
	if err := r.Setup(context.Background()); err == nil || !strings.Contains(err.Error(), file+":7: setup[0]: PUT "+srv.URL+"/admin/stock answered 409: ") || !strings.Contains(err.Error(), "not settled") {
		t.Errorf("without retry_within: %v", err)
	}
	calls.Store(0)
	r, _ = open(", retry_within: 10s")
	if err := r.Setup(context.Background()); err != nil || calls.Load() != 3 {
		t.Errorf("with retry_within: %v after %d calls, want success at the third", err, calls.Load())
	}
	calls.Store(-100)
	r, _ = open(", retry_within: 1500ms")
	if err := r.Setup(context.Background()); err == nil || !strings.Contains(err.Error(), "still failing after 2 tries over 1.5s") {
		t.Errorf("past retry_within: %v", err)
	}
}

// An http store's headers (an admin API's token) go with every request
// to it: the check that it answers, setup, and every book read.
func TestStoreHeadersGoWithEveryRequest(t *testing.T) {
	var without atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok-9" {
			without.Add(1)
			http.Error(w, `{"error":"unauthorized"}`, http.StatusUnauthorized)
			return
		}
		fmt.Fprint(w, `{"available": 7}`)
	}))
	defer srv.Close()
	sys, err := system.Parse("gameday.yaml", []byte(`name: x
base_url: http://127.0.0.1:1
sku: s
purchase: {steps: [{url: /, answers: [{outcome: confirmed}]}]}
stores: {shop: {http: "`+srv.URL+`", headers: {Authorization: "Bearer ${TOKEN}"}}}
setup:
  - {store: shop, http: {method: PUT, path: /admin/stock}, expect: 200}
books:
  stock: {available: {store: shop, http: {path: /admin/ledger}, json: available}}
`), map[string]string{"TOKEN": "tok-9"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := books.Open(context.Background(), sys, system.Values{SKU: "s"}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.Setup(context.Background()); err != nil {
		t.Errorf("setup: %v", err)
	}
	if v, err := r.Value(context.Background(), sys.Books.Stock.Available); err != nil || v != 7 {
		t.Errorf("available: %v %v, want 7", v, err)
	}
	if n := without.Load(); n != 0 {
		t.Errorf("%d requests went without the store's header", n)
	}
}

// An answer longer than a query may give is an error, never a list cut
// short: a charges list cut short hides the charges past the cut, and a
// double charge among them. A setup action, which reads nothing, may be
// answered at any length.
func TestAnswerTooLongIsAnError(t *testing.T) {
	const limit = 16 << 20
	var size atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A list of charges of the given size, as a whole JSON document.
		item := `{"checkout_id":"r1-1","status":"approved"},`
		n := int(size.Load()) / len(item)
		w.Write([]byte("["))
		for i := 0; i < n; i++ {
			w.Write([]byte(item))
		}
		w.Write([]byte(`{"checkout_id":"r1-2","status":"approved"}]`))
	}))
	defer srv.Close()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "orders.sh"), []byte("#!/bin/sh\nyes r1-1 | head -n $(($1 / 5))\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "gameday.yaml")
	if err := os.WriteFile(file, []byte(`name: x
base_url: http://127.0.0.1:1
sku: s
purchase: {steps: [{url: /, answers: [{outcome: confirmed}]}]}
stores: {pay: {http: "`+srv.URL+`"}}
setup:
  - {store: pay, http: {method: POST, path: /reset}}
  - {command: [./orders.sh, "{{.SKU}}"]}
books:
  orders: {command: [./orders.sh, "{{.SKU}}"]}
  charges: {store: pay, http: {path: /charges}}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	sys, err := system.LoadFile(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range []struct {
		bytes int
		ok    bool
	}{{1 << 10, true}, {limit - 1<<10, true}, {limit + 1<<10, false}} {
		size.Store(int64(c.bytes))
		r, err := books.Open(ctx, sys, system.Values{SKU: fmt.Sprint(c.bytes)}, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		// A setup action reads nothing: how long its answer is does not
		// matter.
		if err := r.Setup(ctx); err != nil {
			t.Errorf("setup answered %d bytes: %v", c.bytes, err)
		}
		rows, err := r.Rows(ctx, &sys.Books.Charges.Query, []string{"checkout_id", "status"})
		if c.ok && (err != nil || len(rows) < c.bytes/50 || rows[len(rows)-1]["checkout_id"] != "r1-2") {
			t.Errorf("charges of %d bytes: %d rows, %v; want them all", c.bytes, len(rows), err)
		}
		if !c.ok && (err == nil || !strings.Contains(err.Error(), "/charges answered more than 16 MiB")) {
			t.Errorf("charges of %d bytes: %d rows, %v; want an error saying the answer is too long", c.bytes, len(rows), err)
		}
		rows, err = r.Rows(ctx, sys.Books.Orders, []string{"checkout_id"})
		if c.ok && (err != nil || len(rows) != c.bytes/len("r1-1\n")) {
			t.Errorf("orders of %d bytes: %d rows, %v; want %d", c.bytes, len(rows), err, c.bytes/len("r1-1\n"))
		}
		if !c.ok && (err == nil || !strings.Contains(err.Error(), "./orders.sh: wrote more than 16 MiB")) {
			t.Errorf("orders of %d bytes: %d rows, %v; want an error saying the output is too long", c.bytes, len(rows), err)
		}
		r.Close()
	}
}
