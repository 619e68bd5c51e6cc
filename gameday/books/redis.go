package books

import (
	"context"
	"fmt"
	"slices"
	"strconv"
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
		n, err := c.Do(ctx, sz.count, k).Int64()
		if err != nil {
			continue
		}
		switch asked := asks(args, n); {
		case asked <= int64(maxRows):
		case asked == n:
			return nil, r.tooMany(q, args, fmt.Sprintf("%v holds %d %s (%s)", k, n, sz.what, sz.count))
		default:
			return nil, r.tooMany(q, args, fmt.Sprintf("it asks for %d of the %d %s %v holds (%s)", asked, n, sz.what, k, sz.count))
		}
	}
	return c.Do(ctx, args...).Result()
}

// asks is how many of a collection of size items a command answers at
// most: the items of an index range (LRANGE, ZRANGE, ZREVRANGE: "0 99",
// "-100 -1"), or of a LIMIT's or COUNT's count, else all of them.
func asks(args []any, size int64) int64 {
	words := make([]string, len(args))
	for i, a := range args {
		words[i] = strings.ToUpper(fmt.Sprint(a))
	}
	n := size
	for i := 2; i < len(words); i++ {
		switch {
		case words[i] == "LIMIT" && i+2 < len(words):
			if c, err := strconv.ParseInt(words[i+2], 10, 64); err == nil && c >= 0 {
				n = min(n, c)
			}
		case words[i] == "COUNT" && i+1 < len(words):
			if c, err := strconv.ParseInt(words[i+1], 10, 64); err == nil && c >= 0 {
				n = min(n, c)
			}
		}
	}
	byIndex := words[0] == "LRANGE" || words[0] == "ZREVRANGE" ||
		(words[0] == "ZRANGE" && !slices.Contains(words, "BYSCORE") && !slices.Contains(words, "BYLEX"))
	if byIndex && len(words) >= 4 {
		start, err1 := strconv.ParseInt(words[2], 10, 64)
		stop, err2 := strconv.ParseInt(words[3], 10, 64)
		if err1 == nil && err2 == nil {
			n = min(n, indexRange(size, start, stop))
		}
	}
	return n
}

// indexRange is how many items of a collection of size items the range
// start..stop takes, as Redis reads it (a negative index counts from the
// end; both ends included).
func indexRange(size, start, stop int64) int64 {
	if start < 0 {
		start = max(0, start+size)
	}
	if stop < 0 {
		stop += size
	}
	stop = min(stop, size-1)
	if start > stop {
		return 0
	}
	return stop - start + 1
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
