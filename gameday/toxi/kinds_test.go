package toxi_test

import (
	"context"
	"database/sql"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
	"github.com/redis/go-redis/v9"

	"github.com/gameday-dev/gameday/gameday/toxi"
	"github.com/gameday-dev/gameday/internal/testenv"
)

// kindsSeen reads the kinds of request proxy's relay saw, by count.
func kindsSeen(t *testing.T, c *toxi.Client, proxy string, since time.Time) map[string]int64 {
	t.Helper()
	got, err := c.Requests(context.Background(), proxy, since.Unix())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, k := range got.Kinds {
		for _, n := range k.Seconds {
			out[k.Kind] += n
		}
	}
	return out
}

func wantKinds(t *testing.T, what string, got map[string]int64, want ...string) {
	t.Helper()
	for _, k := range want {
		if got[k] == 0 {
			t.Errorf("%s: no request of kind %q seen; saw %v", what, k, got)
		}
	}
}

// A relay names what each dependency receives by its protocol's first
// words, through real clients: pgx's extended protocol and a
// transaction on PostgreSQL, go-sql-driver's on MariaDB, go-redis's
// commands and script, HTTP requests with their identifiers written {id}.
// A proxy without a relay sees none (404).
func TestRelayNamesRequestKinds(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := testenv.Toxiproxy(t)
	start := time.Now()

	pg := testenv.PostgresServer(t)
	pgAddr := relayedProxy(t, c, "pg", pg.Addr)
	db, err := sql.Open("pgx", strings.Replace(pg.DSN, pg.Addr, pgAddr, 1))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `CREATE TABLE "Products" (sku text PRIMARY KEY, stock int)`); err != nil {
		t.Fatal(err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO "Products" VALUES ($1, 5)`, "A-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE "Products" SET stock = stock - 1 WHERE sku = $1`, "A-1"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := tx.QueryRowContext(ctx, `/* stock */ SELECT stock FROM "Products" WHERE sku = $1`, "A-1").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	pgKinds := kindsSeen(t, c, "pg", start)
	// pgx prepares each statement in a round trip of its own, then runs
	// it by name: the run is the statement's kind, the prepare not.
	wantKinds(t, "postgres", pgKinds, "connect", "BEGIN", "INSERT INTO products", "UPDATE products", "SELECT FROM products", "COMMIT", "CREATE", "PREPARE UPDATE products")

	my := testenv.MySQLServer(t)
	myAddr := relayedProxy(t, c, "my", my.Addr)
	mdb, err := sql.Open("mysql", strings.Replace(my.DSN, my.Addr, myAddr, 1))
	if err != nil {
		t.Fatal(err)
	}
	defer mdb.Close()
	if _, err := mdb.ExecContext(ctx, "CREATE TABLE holds (id varchar(20) PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	if _, err := mdb.ExecContext(ctx, "DELETE FROM `holds` WHERE id = 'x'"); err != nil {
		t.Fatal(err)
	}
	mtx, err := mdb.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mtx.ExecContext(ctx, "INSERT INTO holds VALUES ('h1')"); err != nil {
		t.Fatal(err)
	}
	if err := mtx.Rollback(); err != nil {
		t.Fatal(err)
	}
	wantKinds(t, "mysql", kindsSeen(t, c, "my", start), "connect", "DELETE FROM holds", "BEGIN", "INSERT INTO holds", "ROLLBACK")

	rs := testenv.Redis(t)
	rAddr := relayedProxy(t, c, "redis", rs.Addr())
	rdb := redis.NewClient(&redis.Options{Addr: rAddr})
	defer rdb.Close()
	if err := rdb.Set(ctx, "k", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	script := redis.NewScript("return redis.call('INCR', KEYS[1])")
	if err := rdb.Eval(ctx, "return redis.call('INCR', KEYS[1])", []string{"k"}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := script.Run(ctx, rdb, []string{"k"}).Err(); err != nil {
		t.Fatal(err)
	}
	// A script is a kind of its own, by its SHA-1, whether sent whole or
	// by its hash.
	wantKinds(t, "redis", kindsSeen(t, c, "redis", start), "SET", "EVAL "+script.Hash()[:8], "EVALSHA "+script.Hash()[:8])

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	defer srv.Close()
	hAddr := relayedProxy(t, c, "web", strings.TrimPrefix(srv.URL, "http://"))
	for _, p := range []string{"/products/42?x=1", "/products/7", "/carts/0b6f2a1e-9c1d-4f5e-8a2b-3c4d5e6f7a8b/items"} {
		resp, err := http.Get("http://" + hAddr + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	web := kindsSeen(t, c, "web", start)
	wantKinds(t, "http", web, "GET /products/{id}", "GET /carts/{id}/items")
	if web["GET /products/{id}"] != 2 {
		t.Errorf("GET /products/{id}: %d requests, want 2 (%v)", web["GET /products/{id}"], web)
	}

	plain, err := c.CreateProxy(ctx, "plain", "127.0.0.1:0", rs.Addr())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Requests(ctx, plain.Name, 0); err == nil {
		t.Error("a proxy without a relay answered what requests it saw")
	}
}

// A lost_reply aimed by kind acts only on requests of that kind: COMMIT
// alone, though BEGIN and INSERT pass the same connection; its hits say
// the kind.
func TestLostReplyAimedByKind(t *testing.T) {
	pg := testenv.PostgresServer(t)
	c := testenv.Toxiproxy(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	addr := relayedProxy(t, c, "pg", pg.Addr)
	db, err := sql.Open("pgx", strings.Replace(pg.DSN, pg.Addr, addr, 1))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, `CREATE TABLE orders (id text PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	testenv.AddToxic(t, c, "pg", toxi.Toxic{Name: "lost", Type: "lost_reply", Attributes: map[string]any{"kind": "commit", "first": 1}})
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO orders VALUES ('order-1')`); err != nil {
		t.Fatalf("the INSERT's answer was lost: %v", err)
	}
	if err := tx.Commit(); err == nil {
		t.Fatal("COMMIT answered: its answer was not lost")
	}
	ts, err := c.Toxics(ctx, "pg")
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(ts, func(x toxi.Toxic) bool { return x.Name == "lost" })
	if i < 0 {
		t.Fatalf("no toxic lost: %+v", ts)
	}
	h, _ := ts[i].Attributes["hits"].(map[string]any)
	kinds, _ := h["kinds"].(map[string]any)
	if h["matched"] != float64(1) || len(kinds) != 1 || kinds["COMMIT"] != float64(1) {
		t.Errorf("hits %v: want one COMMIT matched and lost", h)
	}
}
