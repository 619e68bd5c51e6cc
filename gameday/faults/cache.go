package faults

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gameday-dev/gameday/gameday/env"
	"github.com/gameday-dev/gameday/gameday/runrecord"
)

// A cache fault acts on a Redis dependency's data through Redis's own
// commands (docs/faults.md#cache-faults): a flush deletes the keys that
// match its pattern (FLUSHDB for "*"), an expiry gives them a TTL (PEXPIRE),
// each once or every interval of the fault; a memory limit sets maxmemory
// (and maxmemory-policy) and puts both back when the fault ends. Deleted
// keys cannot be given back, and the run record says so.

// maxScanKeys bounds the keys one round of a flush or expiry acts on, and
// scanBatch the keys asked of each SCAN: a cache is cleared, never a store
// read to its end at any size.
const (
	maxScanKeys = 1_000_000
	scanBatch   = 1000
)

// cacheRun is a cache fault in place: its client, its rounds (a flush or
// expiry repeated), and what it did so far.
type cacheRun struct {
	f     Fault
	rdb   *redis.Client
	redis env.Redis
	stop  chan struct{}
	done  chan struct{}
	// ctx is the rounds' context, cancelled when the fault is removed: a
	// round under way stops with it.
	ctx    context.Context
	cancel context.CancelFunc
	before redisStats // a memory limit's evictions and refusals at its start
	prev   *memLimit  // the limit and policy a memory limit replaced

	mu     sync.Mutex
	effect runrecord.CacheEffect
	err    error // the first failed round after the first
}

// memLimit is a Redis's maxmemory and maxmemory-policy.
type memLimit struct {
	bytes  int64
	policy string
}

// redisStats are the counters a memory limit's effect is read from.
type redisStats struct {
	evicted, oom int64
}

func newRedisClient(r env.Redis) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: r.Addr, Password: r.Password, DB: r.DB, DialTimeout: 2 * time.Second,
		ReadTimeout: 3 * time.Second, WriteTimeout: 2 * time.Second, PoolSize: 2, MaxRetries: -1, DisableIdentity: true})
}

// applyCache starts cache fault f: the first round of a flush or expiry
// is done before it returns (an unreachable Redis fails the fault), the
// next ones every f.Cache.Every until the fault is removed; a memory limit
// is journaled, when the Redis outlives the runner, then set.
func (in *Injector) applyCache(ctx context.Context, f Fault) error {
	r, ok := env.RedisOf(in.env, f.Target)
	if !ok {
		return fmt.Errorf("the %s environment does not know where %s's Redis is", in.env.Info().Kind, f.Target)
	}
	c := f.Cache
	run := &cacheRun{f: f, rdb: newRedisClient(r), redis: r, stop: make(chan struct{}), done: make(chan struct{})}
	run.ctx, run.cancel = context.WithCancel(context.Background())
	run.effect.Redis = r.Addr
	in.mu.Lock()
	in.caches[f.Name] = run
	in.mu.Unlock()
	if !c.Clears() {
		close(run.done)
		return in.limitMemory(ctx, run)
	}
	run.effect.Pattern = c.Pattern()
	run.effect.Lost = "the keys it cleared cannot be given back: the cache refills as the system asks for them"
	if err := run.round(ctx); err != nil {
		close(run.done)
		return err
	}
	if c.Every <= 0 {
		close(run.done)
		return nil
	}
	go func() {
		defer close(run.done)
		t := time.NewTicker(c.Every.D())
		defer t.Stop()
		for {
			select {
			case <-run.stop:
				return
			case <-t.C:
			}
			// A tick and the removal at once: select picks either, and
			// no round may follow the removal.
			select {
			case <-run.stop:
				return
			default:
			}
			rctx, cancel := context.WithTimeout(run.ctx, c.Every.D()+callTimeout)
			err := run.round(rctx)
			cancel()
			// A round the removal cut short is no failure of the fault's.
			if err != nil && run.ctx.Err() == nil {
				run.mu.Lock()
				if run.err == nil {
					run.err = err
				}
				run.mu.Unlock()
			}
		}
	}()
	return nil
}

// round flushes or expires the keys that match once, counting them.
func (run *cacheRun) round(ctx context.Context) error {
	c := run.f.Cache
	var n int64
	var err error
	if c.Flush == "*" {
		n, err = run.rdb.DBSize(ctx).Result()
		if err == nil {
			// ASYNC: the keys are gone at once for every client, and
			// Redis frees their memory in the background, so that a large
			// database is not a flush that times out.
			err = run.rdb.FlushDBAsync(ctx).Err()
		}
	} else {
		n, err = run.eachKey(ctx, c.Pattern(), func(p redis.Pipeliner, key string) {
			switch {
			case c.Flush != "":
				p.Unlink(ctx, key)
			case c.TTL <= 0:
				p.PExpire(ctx, key, 0) // gone at once
			default:
				// LT: never a longer life than the key has (a key
				// without one has an endless life), so that a round
				// shortens and never lengthens (Redis 7).
				p.Do(ctx, "pexpire", key, c.TTL.D().Milliseconds(), "lt")
			}
		})
	}
	if err != nil {
		what := "expire"
		if c.Flush != "" {
			what = "flush"
		}
		return fmt.Errorf("a round of %s %s on the Redis at %s failed: %w", what, c.Pattern(), run.redis.Addr, err)
	}
	run.mu.Lock()
	run.effect.Rounds++
	run.effect.Keys += n
	run.mu.Unlock()
	return nil
}

// eachKey runs do on every key matching pattern (SCAN MATCH), a batch at
// a time in one pipeline, and counts them; at most maxScanKeys.
func (run *cacheRun) eachKey(ctx context.Context, pattern string, do func(redis.Pipeliner, string)) (int64, error) {
	var cursor uint64
	var n int64
	for {
		keys, next, err := run.rdb.Scan(ctx, cursor, pattern, scanBatch).Result()
		if err != nil {
			return n, err
		}
		if len(keys) > 0 {
			if _, err := run.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
				for _, k := range keys {
					do(p, k)
				}
				return nil
			}); err != nil {
				return n, err
			}
			n += int64(len(keys))
		}
		if next == 0 || n >= maxScanKeys {
			return n, nil
		}
		cursor = next
	}
}

// limitMemory sets a memory limit: what it replaces is read first and
// journaled (where the Redis outlives the runner), a limit under what the
// Redis uses empty is refused with nothing changed, then maxmemory and the
// policy are set.
func (in *Injector) limitMemory(ctx context.Context, run *cacheRun) error {
	c := run.f.Cache
	prev, err := readLimit(ctx, run.rdb)
	if err != nil {
		return fmt.Errorf("read the memory limit of the Redis at %s: %w", run.redis.Addr, err)
	}
	mem, err := infoFields(ctx, run.rdb, "memory")
	if err != nil {
		return fmt.Errorf("read the memory of the Redis at %s: %w", run.redis.Addr, err)
	}
	want, err := c.MaxMemoryBytes(mem["used_memory"])
	if err != nil {
		return err
	}
	if startup := mem["used_memory_startup"]; startup > 0 && want <= startup {
		return fmt.Errorf("maxmemory %s (%d bytes) is below what the Redis at %s uses empty (%d bytes): it would refuse every write, not hold a cache under pressure; nothing was changed", c.MaxMemory, want, run.redis.Addr, startup)
	}
	run.effect.Used = mem["used_memory"]
	if run.before, err = readStats(ctx, run.rdb); err != nil {
		return fmt.Errorf("read the stats of the Redis at %s: %w", run.redis.Addr, err)
	}
	if j := in.containerJournal(); j != nil {
		if err := j.Add(in.limitEntry(run, prev)); err != nil {
			return err
		}
	}
	run.prev = &prev
	run.effect.MaxMemory, run.effect.Policy = want, cmpOr(c.Policy, prev.policy)
	run.effect.Restores = fmt.Sprintf("maxmemory %d, maxmemory-policy %s", prev.bytes, prev.policy)
	args := []any{"maxmemory", strconv.FormatInt(want, 10)}
	if c.Policy != "" {
		args = append(args, "maxmemory-policy", c.Policy)
	}
	return configSet(ctx, run.rdb, args...)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// limitEntry is the journal's entry for a memory limit on run's Redis:
// what cleanup puts back.
func (in *Injector) limitEntry(run *cacheRun, prev memLimit) Entry {
	return Entry{RunID: in.runID, Redis: run.redis.Addr, Dependency: run.f.Target, MaxMemory: &prev.bytes, Policy: prev.policy}
}

// removeCache ends a cache fault: a flush or expiry stops its rounds (what
// it cleared stays cleared); a memory limit is read for what it did and
// put back as it was.
func (in *Injector) removeCache(ctx context.Context, f Fault) error {
	in.mu.Lock()
	run := in.caches[f.Name]
	in.mu.Unlock()
	if run == nil {
		return nil
	}
	select {
	case <-run.stop:
	default:
		close(run.stop)
		run.cancel()
	}
	select {
	case <-run.done:
	case <-ctx.Done():
		return fmt.Errorf("the rounds of %s did not stop: %w", f.Name, ctx.Err())
	}
	if run.prev != nil {
		after, err := readStats(ctx, run.rdb)
		run.mu.Lock()
		if err == nil {
			run.effect.Evicted = after.evicted - run.before.evicted
			run.effect.Refused = after.oom - run.before.oom
		} else if run.err == nil {
			run.err = fmt.Errorf("what the limit evicted and refused could not be read: %w", err)
		}
		run.mu.Unlock()
		if err := configSet(ctx, run.rdb, "maxmemory", strconv.FormatInt(run.prev.bytes, 10), "maxmemory-policy", run.prev.policy); err != nil {
			return fmt.Errorf("put back the memory limit of the Redis at %s (%s): %w", run.redis.Addr, run.effect.Restores, err)
		}
		if j := in.containerJournal(); j != nil {
			if err := j.Remove(in.limitEntry(run, *run.prev)); err != nil {
				return err
			}
		}
	}
	_ = run.rdb.Close()
	run.mu.Lock()
	if run.err != nil {
		run.effect.Error = run.err.Error()
	}
	run.mu.Unlock()
	return nil
}

// Cache is what cache fault name did, once it was removed; nil for any
// other fault.
func (in *Injector) Cache(name string) *runrecord.CacheEffect {
	in.mu.Lock()
	run := in.caches[name]
	in.mu.Unlock()
	if run == nil {
		return nil
	}
	run.mu.Lock()
	defer run.mu.Unlock()
	e := run.effect
	return &e
}

func readLimit(ctx context.Context, rdb *redis.Client) (memLimit, error) {
	var out memLimit
	got, err := rdb.ConfigGet(ctx, "maxmemory*").Result()
	if err != nil {
		return out, err
	}
	out.policy = got["maxmemory-policy"]
	if out.bytes, err = strconv.ParseInt(got["maxmemory"], 10, 64); err != nil || out.policy == "" {
		return out, fmt.Errorf("CONFIG GET maxmemory* answered %v", got)
	}
	return out, nil
}

func configSet(ctx context.Context, rdb *redis.Client, args ...any) error {
	return rdb.Do(ctx, append([]any{"config", "set"}, args...)...).Err()
}

// readStats reads the keys evicted and the writes refused for memory
// (errorstat_OOM, Redis 7) so far.
func readStats(ctx context.Context, rdb *redis.Client) (redisStats, error) {
	stats, err := infoFields(ctx, rdb, "stats")
	if err != nil {
		return redisStats{}, err
	}
	errs, err := infoFields(ctx, rdb, "errorstats")
	if err != nil {
		return redisStats{}, err
	}
	return redisStats{evicted: stats["evicted_keys"], oom: errs["errorstat_OOM"]}, nil
}

// infoFields reads a section of INFO, each field's first whole number
// ("count=3" is 3).
func infoFields(ctx context.Context, rdb *redis.Client, section string) (map[string]int64, error) {
	text, err := rdb.Info(ctx, section).Result()
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for line := range strings.Lines(text) {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		v = strings.TrimPrefix(v, "count=")
		if i := strings.IndexAny(v, ",\r"); i >= 0 {
			v = v[:i]
		}
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			out[k] = n
		}
	}
	return out, nil
}

// undoLimit puts back a memory limit a runner that is gone left (its
// journal entry), with the password in GAMEDAY_REDIS_PASSWORD: the journal
// keeps no secret.
func undoLimit(ctx context.Context, e Entry) error {
	if e.MaxMemory == nil {
		return errors.New("the entry says no memory limit to put back")
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	rdb := newRedisClient(env.Redis{Addr: e.Redis, Password: os.Getenv(env.RedisPasswordVar)})
	defer rdb.Close()
	args := []any{"maxmemory", strconv.FormatInt(*e.MaxMemory, 10)}
	if e.Policy != "" {
		args = append(args, "maxmemory-policy", e.Policy)
	}
	return configSet(ctx, rdb, args...)
}
