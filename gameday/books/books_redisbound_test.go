package books_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gameday-dev/gameday/gameday/books"
	"github.com/gameday-dev/gameday/gameday/system"
	"github.com/gameday-dev/gameday/internal/testenv"
)

// A Redis book is bounded as an SQL query is: a hash, set, list, sorted
// set or stream of more rows than a book may give is measured first
// (HLEN, SCARD, LLEN, ZCARD, XLEN; DBSIZE for KEYS) and refused unread,
// with an error that names the store, its file and the command; one
// within the bound is read whole. The bound is lowered to 20 here; the
// claim is that the collection is never fetched, which the real
// redis-server's own command counts show.
func TestRedisBooksAreBounded(t *testing.T) {
	const bound = 20
	defer books.SetMaxRows(bound)()
	rs := testenv.Redis(t)
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: rs.Addr()})
	defer c.Close()
	fill := func(n int) {
		t.Helper()
		if err := c.FlushAll(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		p := c.Pipeline()
		for i := range n {
			id := fmt.Sprintf("r1-%d", i)
			p.HSet(ctx, "h", id, `{"status":"approved"}`)
			p.SAdd(ctx, "s", id)
			p.RPush(ctx, "l", id)
			p.ZAdd(ctx, "z", redis.Z{Score: float64(i), Member: id})
			p.XAdd(ctx, &redis.XAddArgs{Stream: "x", Values: []string{"id", id}})
		}
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for _, c2 := range []struct {
		cmd   string // the query's command
		fetch string // the command that would fetch the collection, as redis-server counts it
		want  string // in the error
	}{
		{"[HGETALL, h]", "hgetall", "HGETALL h: h holds 21 fields (HLEN)"},
		{"[HVALS, h]", "hvals", "HVALS h: h holds 21 fields (HLEN)"},
		{"[SMEMBERS, s]", "smembers", "SMEMBERS s: s holds 21 members (SCARD)"},
		// Each set it reads is measured.
		{"[SUNION, none, s]", "sunion", "SUNION none s: s holds 21 members (SCARD)"},
		{"[LRANGE, l, '0', '-1']", "lrange", "LRANGE l 0 -1: l holds 21 items (LLEN)"},
		{"[ZRANGE, z, '0', '-1']", "zrange", "ZRANGE z 0 -1: z holds 21 members (ZCARD)"},
		{"[XRANGE, x, '-', '+']", "xrange", "XRANGE x - +: x holds 21 entries (XLEN)"},
	} {
		sys, err := system.Parse("shop.yaml", []byte(`name: shop
base_url: http://127.0.0.1:1
sku: s
purchase: {steps: [{url: /, answers: [{outcome: confirmed}]}]}
stores:
  kv: {redis: "`+rs.Addr()+`"}
books:
  orders: {store: kv, redis: `+c2.cmd+`}
`), nil)
		if err != nil {
			t.Fatal(err)
		}
		r, err := books.Open(ctx, sys, system.Values{Run: "r1"}, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		// At the bound: read whole.
		fill(bound)
		if rows, err := r.Rows(ctx, sys.Books.Orders, []string{"checkout_id"}); err != nil || len(rows) != bound {
			t.Errorf("%s of %d: %d rows, %v; want them all", c2.cmd, bound, len(rows), err)
		}
		// Past it: refused, and never fetched.
		fill(bound + 1)
		if err := c.ConfigResetStat(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		rows, err := r.Rows(ctx, sys.Books.Orders, []string{"checkout_id"})
		want := "store kv (shop.yaml:6: stores.kv): " + c2.want + ", more than the 20 rows a book may give"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s of %d: %d rows, %v\nwant an error with %q", c2.cmd, bound+1, len(rows), err, want)
		}
		// A count where a number is wanted is refused unread too.
		if _, err := r.Value(ctx, sys.Books.Orders); err == nil || !strings.Contains(err.Error(), c2.want) {
			t.Errorf("%s of %d as a value: %v", c2.cmd, bound+1, err)
		}
		stats, err := c.Info(ctx, "commandstats").Result()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(stats, "cmdstat_"+c2.fetch+":") {
			t.Errorf("%s of %d was fetched: %s", c2.cmd, bound+1, stats)
		}
		r.Close()
	}

	// A range, a LIMIT or a COUNT asks for part of a collection: what it
	// asks for is held to the bound, not the collection.
	fill(bound + 5)
	for _, c2 := range []struct {
		cmd  string
		rows int    // read; 0: refused
		want string // in the error
	}{
		{"[LRANGE, l, '0', '9']", 10, ""},
		{"[LRANGE, l, '-5', '-1']", 5, ""},
		{"[ZRANGE, z, '0', '4']", 5, ""},
		{"[ZREVRANGE, z, '0', '19']", 20, ""},
		{"[ZRANGEBYSCORE, z, '-inf', '+inf', LIMIT, '0', '7']", 7, ""},
		{"[XRANGE, x, '-', '+', COUNT, '3']", 3, ""},
		{"[LRANGE, l, '2', '-1']", 0, "LRANGE l 2 -1: it asks for 23 of the 25 items l holds (LLEN), more than the 20 rows"},
		{"[ZRANGEBYSCORE, z, '-inf', '+inf']", 0, "ZRANGEBYSCORE z -inf +inf: z holds 25 members (ZCARD)"},
	} {
		sys, err := system.Parse("shop.yaml", []byte(`name: shop
base_url: http://127.0.0.1:1
sku: s
purchase: {steps: [{url: /, answers: [{outcome: confirmed}]}]}
stores:
  kv: {redis: "`+rs.Addr()+`"}
books:
  orders: {store: kv, redis: `+c2.cmd+`}
`), nil)
		if err != nil {
			t.Fatal(err)
		}
		r, err := books.Open(ctx, sys, system.Values{Run: "r1"}, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := r.Rows(ctx, sys.Books.Orders, []string{"checkout_id"})
		switch {
		case c2.rows > 0 && (err != nil || len(rows) != c2.rows):
			t.Errorf("%s: %d rows, %v; want %d", c2.cmd, len(rows), err, c2.rows)
		case c2.rows == 0 && (err == nil || !strings.Contains(err.Error(), c2.want)):
			t.Errorf("%s: %d rows, %v; want an error with %q", c2.cmd, len(rows), err, c2.want)
		}
		r.Close()
	}

	// KEYS is measured by the database's size.
	fill(bound)
	sys, err := system.Parse("shop.yaml", []byte(`name: shop
base_url: http://127.0.0.1:1
sku: s
purchase: {steps: [{url: /, answers: [{outcome: confirmed}]}]}
stores:
  kv: {redis: "`+rs.Addr()+`"}
books:
  orders: {store: kv, redis: [KEYS, "r1-*"]}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := books.Open(ctx, sys, system.Values{Run: "r1"}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Rows(ctx, sys.Books.Orders, []string{"checkout_id"}); err != nil {
		t.Errorf("KEYS of 5 keys: %v", err)
	}
	p := c.Pipeline()
	for i := range bound {
		p.Set(ctx, fmt.Sprintf("r1-%d", i), "sold", 0)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Rows(ctx, sys.Books.Orders, []string{"checkout_id"}); err == nil || !strings.Contains(err.Error(), "KEYS r1-*: the database holds 25 keys (DBSIZE)") {
		t.Errorf("KEYS of 25 keys: %v", err)
	}

	// A command not measured first (a script's answer) is held to the
	// bound once read.
	sys, err = system.Parse("shop.yaml", []byte(`name: shop
base_url: http://127.0.0.1:1
sku: s
purchase: {steps: [{url: /, answers: [{outcome: confirmed}]}]}
stores:
  kv: {redis: "`+rs.Addr()+`"}
books:
  orders: {store: kv, redis: [EVAL, "return redis.call('LRANGE', KEYS[1], 0, -1)", "1", l]}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := books.Open(ctx, sys, system.Values{Run: "r1"}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	fill(bound + 1)
	if _, err := r2.Rows(ctx, sys.Books.Orders, []string{"checkout_id"}); err == nil || !strings.Contains(err.Error(), "return redis.call('LRANGE', KEYS[1], 0, -1) 1 l: answered 21 rows, more than the 20 rows") {
		t.Errorf("a script's list of 21: %v", err)
	}
}
