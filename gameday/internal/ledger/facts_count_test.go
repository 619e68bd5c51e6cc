package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/gameday-dev/gameday/internal/testenv"
)

// A stock fact that is not a count stops the reading of the books, with
// an error naming the fact and the store, whichever kind of store sent it:
// NaN and the infinities (read as -9.2e18 units, they made lost_units
// 9.2e18), a fraction of a unit, a number too large to be read exactly.
// A whole number, written 12 or 12.0, is read.
func TestStockFactsMustBeCounts(t *testing.T) {
	pg := testenv.PostgresServer(t)
	rs := testenv.Redis(t)
	ctx := context.Background()
	kv := redis.NewClient(&redis.Options{Addr: rs.Addr()})
	defer kv.Close()
	db, err := sql.Open("pgx", pg.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var answer string // what the HTTP store and the command answer
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"available": %s}`, answer)
	}))
	defer api.Close()
	dir := t.TempDir()
	script := filepath.Join(dir, "stock.sh")
	out := filepath.Join(dir, "answer")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ncat "+out+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		store  string // the store and its query, under available:
		source string // as the error names it
		set    func(v string)
	}{
		{`{store: db, sql: "SELECT v FROM stock"}`, "store db (postgres)", func(v string) {
			if _, err := db.Exec(`DROP TABLE IF EXISTS stock; CREATE TABLE stock AS SELECT ` + v + ` AS v`); err != nil {
				t.Fatal(err)
			}
		}},
		{`{store: kv, redis: [GET, stock]}`, "store kv (redis)", func(v string) {
			if err := kv.Set(ctx, "stock", strings.Trim(v, `'"`), 0).Err(); err != nil {
				t.Fatal(err)
			}
		}},
		{`{store: api, http: {path: /stock}, json: available}`, "store api (http)", func(v string) { answer = v }},
		{`{command: [` + script + `]}`, "command " + script, func(v string) {
			if err := os.WriteFile(out, []byte(strings.Trim(v, `'"`)+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		for _, v := range []struct {
			sql, text, json string // how SQL, Redis or a command, and JSON say it
			want            string // in the error; "" when it is read
			n               int64
		}{
			{"'NaN'::float8", "NaN", "NaN", "want a number, got NaN", 0},
			{"'Infinity'::float8", "inf", "1e999", "want a number, got +Inf", 0},
			{"'-Infinity'::float8", "-Infinity", "-1e999", "want a number, got -Inf", 0},
			{"12.5", "12.5", "12.5", "want a whole number of units, got 12.5", 0},
			{"1e300::float8", "1e300", "1e300", "want a count, got 1e+300, beyond the ±9007199254740992", 0},
			{"12.0", "12.0", `"12.0"`, "", 12},
			{"-3", "-3", "-3", "", -3},
		} {
			switch {
			case strings.HasPrefix(c.source, "store db"):
				c.set(v.sql)
			case strings.HasPrefix(c.source, "store kv"), strings.HasPrefix(c.source, "command"):
				c.set(v.text)
			default:
				c.set(v.json)
			}
			sys, r := openBooks(t, fmt.Sprintf(`
name: shop
base_url: %[1]s
sku: s
purchase: {steps: [{url: /buy, answers: [{status: 200, outcome: confirmed}]}]}
stores:
  api: {http: "%[1]s"}
  kv: {redis: "%[2]s"}
  db: {postgres: "%[3]s"}
books:
  stock:
    available: %[4]s
`, api.URL, rs.Addr(), pg.DSN, c.store))
			f, err := readFacts(ctx, r, sys, "r1")
			if v.want == "" {
				if err != nil || f.Available == nil || *f.Available != v.n {
					t.Errorf("%s answered %s: %+v, %v; want %d", c.source, v.json, f, err, v.n)
				}
				continue
			}
			want := "read books.stock.available: " + c.source + ": " + v.want
			if err == nil || !strings.Contains(err.Error(), want) {
				var got any = err
				if f != nil && f.Available != nil {
					got = *f.Available
				}
				t.Errorf("%s answered %s: got %v\nwant an error with %q", c.source, v.json, got, want)
			}
		}
	}
}
