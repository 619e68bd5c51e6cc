package books

import (
	"context"
	"fmt"
	"strings"

	"github.com/gameday-dev/gameday/gameday/system"
)

// redisSize is how a Redis command that answers a collection is measured
// before it is sent: the command that counts each collection it reads
// (HLEN, SCARD, ...; DBSIZE for KEYS, which reads the keys of the whole
// database), what the collection holds, and which of its arguments are
// keys: the first, or every one (SUNION, SINTER, SDIFF), or none.
type redisSize struct {
	count string
	what  string // fields, members, items, entries, keys
	keys  int    // 1: the first argument; -1: every argument; 0: none
}

var redisSizes = map[string]redisSize{
	"HGETALL": {"HLEN", "fields", 1}, "HKEYS": {"HLEN", "fields", 1}, "HVALS": {"HLEN", "fields", 1},
	"SMEMBERS": {"SCARD", "members", 1}, "SINTER": {"SCARD", "members", -1}, "SUNION": {"SCARD", "members", -1}, "SDIFF": {"SCARD", "members", -1},
	"LRANGE": {"LLEN", "items", 1},
	"ZRANGE": {"ZCARD", "members", 1}, "ZRANGEBYSCORE": {"ZCARD", "members", 1}, "ZRANGEBYLEX": {"ZCARD", "members", 1},
	"ZREVRANGE": {"ZCARD", "members", 1}, "ZREVRANGEBYSCORE": {"ZCARD", "members", 1}, "ZREVRANGEBYLEX": {"ZCARD", "members", 1},
	"XRANGE": {"XLEN", "entries", 1}, "XREVRANGE": {"XLEN", "entries", 1},
	"KEYS": {"DBSIZE", "keys", 0},
}

// redisDo sends q's Redis command, bounded as an SQL query is: each
// collection a command that answers one reads is measured first (HLEN,
// SCARD, LLEN, ZCARD, XLEN; DBSIZE for KEYS), and a command that reads one
// of more than maxRows is refused unread. (What any command answers is
// held to maxRows items again when it is read as rows.)
func (r *Reader) redisDo(ctx context.Context, q *system.Query, args []any) (any, error) {
	c := r.redis[q.Store]
	if len(args) == 0 {
		return c.Do(ctx, args...).Result()
	}
	sz, ok := redisSizes[strings.ToUpper(fmt.Sprint(args[0]))]
	if !ok {
		return c.Do(ctx, args...).Result()
	}
	var keys []any
	switch {
	case sz.keys == 1 && len(args) > 1:
		keys = args[1:2]
	case sz.keys == -1:
		keys = args[1:]
	}
	if sz.keys == 0 {
		if n, err := c.Do(ctx, sz.count).Int64(); err == nil && n > int64(maxRows) {
			return nil, r.tooMany(q, args, fmt.Sprintf("the database holds %d %s (%s)", n, sz.what, sz.count))
		}
	}
	for _, k := range keys {
		// An error here (a key of another type, a connection gone) is
		// left to the command itself to say.
		if n, err := c.Do(ctx, sz.count, k).Int64(); err == nil && n > int64(maxRows) {
			return nil, r.tooMany(q, args, fmt.Sprintf("%v holds %d %s (%s)", k, n, sz.what, sz.count))
		}
	}
	return c.Do(ctx, args...).Result()
}

// tooMany is the error of a Redis query that reads or answers more than
// maxRows: the store (and where the file gives it), the command, and what
// was too large.
func (r *Reader) tooMany(q *system.Query, args []any, what string) error {
	cmd := make([]string, len(args))
	for i, a := range args {
		cmd[i] = fmt.Sprint(a)
	}
	return fmt.Errorf("store %s (%s): %s: %s, more than the %d rows a book may give: keep this run's only (a key per run, with {{.Run}}; its checkout ids begin {{.Run}}-)",
		q.Store, r.sys.Where("stores."+q.Store), strings.Join(cmd, " "), what, maxRows)
}
