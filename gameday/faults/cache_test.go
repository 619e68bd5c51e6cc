package faults

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gameday-dev/gameday/gameday/env"
	"github.com/gameday-dev/gameday/internal/owner"
	"github.com/gameday-dev/gameday/internal/testenv"
	"github.com/gameday-dev/gameday/scenarios"
)

// redisEnv is an environment whose dependencies are Redis servers at
// known addresses, for cache faults.
type redisEnv struct {
	proxyEnv
	servers map[string]env.Redis
}

func (e redisEnv) RedisOf(dep string) (env.Redis, bool) {
	r, ok := e.servers[dep]
	return r, ok
}

func cacheSetup(t *testing.T) (*redis.Client, redisEnv) {
	t.Helper()
	rs := testenv.Redis(t)
	rdb := redis.NewClient(&redis.Options{Addr: rs.Addr()})
	t.Cleanup(func() { rdb.Close() })
	return rdb, redisEnv{servers: map[string]env.Redis{"cache": {Addr: rs.Addr()}}}
}

func fill(t *testing.T, rdb *redis.Client, prefix string, n int) {
	t.Helper()
	ctx := context.Background()
	for i := range n {
		if err := rdb.Set(ctx, fmt.Sprintf("%s%d", prefix, i), "x", time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// A flush deletes the keys its pattern matches and no other, and says how
// many; "*" empties the database; a pattern that matches nothing is a
// fault that did nothing, and says so.
func TestCacheFlushClearsWhatItMatches(t *testing.T) {
	rdb, e := cacheSetup(t)
	ctx := context.Background()
	fill(t, rdb, "product:", 2500) // more than one SCAN batch
	fill(t, rdb, "session:", 7)
	in := NewInjector(e, nil, "run1")
	f := Fault{Name: "flush", Target: "cache", Cache: &scenarios.Cache{Flush: "product:*"}}
	if err := in.Apply(ctx, f); err != nil {
		t.Fatal(err)
	}
	if err := in.Remove(ctx, "flush"); err != nil {
		t.Fatal(err)
	}
	if n, _ := rdb.DBSize(ctx).Result(); n != 7 {
		t.Errorf("after the flush of product:*, %d keys left; want the 7 sessions", n)
	}
	c := in.Cache("flush")
	if c == nil || c.Keys != 2500 || c.Rounds != 1 || c.Idle() != "" || !strings.Contains(c.Text(), "cannot be given back") {
		t.Errorf("effect %+v; want 2500 keys in one round, said lost", c)
	}

	none := Fault{Name: "none", Target: "cache", Cache: &scenarios.Cache{Flush: "nothing:*"}}
	if err := in.Apply(ctx, none); err != nil {
		t.Fatal(err)
	}
	_ = in.Remove(ctx, "none")
	if idle := in.Cache("none").Idle(); !strings.Contains(idle, "none matched nothing:*") {
		t.Errorf("a flush that matched nothing says %q", idle)
	}

	all := Fault{Name: "all", Target: "cache", Cache: &scenarios.Cache{Flush: "*"}}
	if err := in.Apply(ctx, all); err != nil {
		t.Fatal(err)
	}
	_ = in.Remove(ctx, "all")
	if n, _ := rdb.DBSize(ctx).Result(); n != 0 || in.Cache("all").Keys != 7 {
		t.Errorf("after flushing *, %d keys left, %d said cleared; want 0 and 7", n, in.Cache("all").Keys)
	}
}

// An expiry repeated every interval acts on the keys written since its
// last round, until the fault is removed; its TTL is the keys' time left.
func TestCacheExpireEveryRound(t *testing.T) {
	rdb, e := cacheSetup(t)
	ctx := context.Background()
	fill(t, rdb, "hot:", 3)
	in := NewInjector(e, nil, "run1")
	f := Fault{Name: "hot", Target: "cache", Cache: &scenarios.Cache{Expire: "hot:*", Every: scenarios.Duration(100 * time.Millisecond), TTL: scenarios.Duration(time.Minute)}}
	if err := in.Apply(ctx, f); err != nil {
		t.Fatal(err)
	}
	if ttl, _ := rdb.TTL(ctx, "hot:0").Result(); ttl > time.Minute || ttl < 50*time.Second {
		t.Errorf("after the first round hot:0 has %s left; want about a minute", ttl)
	}
	// Rounds go on until the fault is removed: wait (bounded) for three.
	deadline := time.Now().Add(10 * time.Second)
	for in.liveRounds("hot") < 3 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if err := in.Remove(ctx, "hot"); err != nil {
		t.Fatal(err)
	}
	c := in.Cache("hot")
	if c.Rounds < 3 || c.Keys != int64(3*c.Rounds) {
		t.Errorf("effect %+v; want every round to expire the 3 keys", c)
	}
	rounds := c.Rounds
	time.Sleep(300 * time.Millisecond)
	if in.liveRounds("hot") != rounds {
		t.Errorf("rounds went on after the fault was removed")
	}
}

// A memory limit is set with its policy, refused below what the Redis
// uses empty (nothing changed), counts what it evicted, and is put back
// as it was; journaled where the Redis outlives the runner, and put back
// by cleanup when the runner is gone.
func TestCacheMemoryLimitIsPutBack(t *testing.T) {
	rdb, e := cacheSetup(t)
	ctx := context.Background()
	if err := rdb.ConfigSet(ctx, "maxmemory-policy", "volatile-ttl").Err(); err != nil {
		t.Fatal(err)
	}
	j := OpenJournal(filepath.Join(t.TempDir(), "journal.json"))
	t.Cleanup(j.StopRenewing)
	in := NewInjector(e, nil, "run1")
	in.JournalContainers(j)

	tiny := Fault{Name: "tiny", Target: "cache", Cache: &scenarios.Cache{MaxMemory: "4kb"}}
	if err := in.Apply(ctx, tiny); err == nil || !strings.Contains(err.Error(), "uses empty") {
		t.Errorf("a limit under what Redis uses empty: %v", err)
	}
	if got := rdb.ConfigGet(ctx, "maxmemory").Val()["maxmemory"]; got != "0" {
		t.Errorf("after the refused limit maxmemory is %s; want 0, unchanged", got)
	}

	f := Fault{Name: "limit", Target: "cache", Cache: &scenarios.Cache{MaxMemory: "2mb", Policy: "allkeys-lru"}}
	if err := in.Apply(ctx, f); err != nil {
		t.Fatal(err)
	}
	got := rdb.ConfigGet(ctx, "maxmemory*").Val()
	if got["maxmemory"] != "2097152" || got["maxmemory-policy"] != "allkeys-lru" {
		t.Errorf("limit in place: %v", got)
	}
	if es, _ := j.Entries(); len(es) != 1 || es[0].Redis == "" || *es[0].MaxMemory != 0 || es[0].Policy != "volatile-ttl" {
		t.Errorf("journal holds %+v; want what to put back", es)
	}
	big := strings.Repeat("x", 10<<10)
	for i := range 400 { // 4 MB into 2: evictions
		_ = rdb.Set(ctx, fmt.Sprintf("k%d", i), big, 0).Err()
	}
	if err := in.Remove(ctx, "limit"); err != nil {
		t.Fatal(err)
	}
	got = rdb.ConfigGet(ctx, "maxmemory*").Val()
	if got["maxmemory"] != "0" || got["maxmemory-policy"] != "volatile-ttl" {
		t.Errorf("limit put back: %v", got)
	}
	c := in.Cache("limit")
	if c.Evicted == 0 || c.Idle() != "" {
		t.Errorf("effect %+v; want keys evicted", c)
	}
	if es, _ := j.Entries(); len(es) != 0 {
		t.Errorf("journal still holds %+v", es)
	}

	// A runner gone with its limit in place: cleanup puts it back.
	zero := int64(0)
	if err := rdb.ConfigSet(ctx, "maxmemory", "3mb").Err(); err != nil {
		t.Fatal(err)
	}
	dead := Entry{RunID: "dead", Pid: 1, Started: "12345", Boot: owner.Self().Boot, Redis: e.servers["cache"].Addr, Dependency: "cache", MaxMemory: &zero, Policy: "volatile-ttl"}
	if err := j.update(true, func(es []Entry) []Entry { return append(es, dead) }); err != nil {
		t.Fatal(err)
	}
	removed, aside, err := j.Cleanup(ctx)
	if err != nil || len(removed) != 1 || len(aside) != 0 {
		t.Fatalf("cleanup removed %v, set aside %v: %v", removed, aside, err)
	}
	if got := rdb.ConfigGet(ctx, "maxmemory").Val()["maxmemory"]; got != "0" {
		t.Errorf("after cleanup maxmemory is %s; want 0", got)
	}
}

// A limit written as a share of what the Redis uses puts it under
// pressure whatever its size: with noeviction, every write is refused,
// and counted.
func TestCacheMemoryLimitAsAShare(t *testing.T) {
	rdb, e := cacheSetup(t)
	ctx := context.Background()
	fill(t, rdb, "session:", 3000)
	used := rdb.Info(ctx, "memory").Val()
	in := NewInjector(e, nil, "run1")
	f := Fault{Name: "share", Target: "cache", Cache: &scenarios.Cache{MaxMemory: "95%", Policy: "noeviction"}}
	if err := in.Apply(ctx, f); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if err := rdb.Set(ctx, fmt.Sprintf("new:%d", i), "x", 0).Err(); err == nil || !strings.Contains(err.Error(), "OOM") {
			t.Errorf("write %d under the limit: %v; want OOM", i, err)
		}
	}
	if err := in.Remove(ctx, "share"); err != nil {
		t.Fatal(err)
	}
	c := in.Cache("share")
	if c.Refused != 10 || c.Used == 0 || c.MaxMemory != c.Used*95/100 || c.Idle() != "" {
		t.Errorf("effect %+v; want 95%% of what it used and the 10 writes refused (%s)", c, used)
	}
	if err := rdb.Set(ctx, "after", "x", 0).Err(); err != nil {
		t.Errorf("a write once the limit is put back: %v", err)
	}
}

// A cache fault acts in the database the system keeps its keys in: the
// same pattern in another database is left alone.
func TestCacheFaultActsInTheSystemsDatabase(t *testing.T) {
	rdb, e := cacheSetup(t)
	ctx := context.Background()
	fill(t, rdb, "item:", 5) // database 0
	db1 := redis.NewClient(&redis.Options{Addr: e.servers["cache"].Addr, DB: 1})
	defer db1.Close()
	fill(t, db1, "item:", 3)
	e.servers["items"] = env.Redis{Addr: e.servers["cache"].Addr, DB: 1}
	in := NewInjector(e, nil, "run1")
	if err := in.Apply(ctx, Fault{Name: "flush", Target: "items", Cache: &scenarios.Cache{Flush: "item:*"}}); err != nil {
		t.Fatal(err)
	}
	_ = in.Remove(ctx, "flush")
	n0, _ := rdb.DBSize(ctx).Result()
	n1, _ := db1.DBSize(ctx).Result()
	if n0 != 5 || n1 != 0 || in.Cache("flush").Keys != 3 {
		t.Errorf("database 0 keeps %d of 5, database 1 %d of 3, %d said cleared; want 5, 0 and 3", n0, n1, in.Cache("flush").Keys)
	}
}

// A cache fault on a dependency whose Redis the environment does not know
// fails, naming it.
func TestCacheFaultNeedsTheRedis(t *testing.T) {
	_, e := cacheSetup(t)
	in := NewInjector(e, nil, "run1")
	err := in.Apply(context.Background(), Fault{Name: "f", Target: "payment", Cache: &scenarios.Cache{Flush: "*"}})
	if err == nil || !strings.Contains(err.Error(), "payment's Redis") {
		t.Errorf("got %v", err)
	}
}

// liveRounds is how many rounds cache fault name has done so far.
func (in *Injector) liveRounds(name string) int {
	in.mu.Lock()
	run := in.caches[name]
	in.mu.Unlock()
	run.mu.Lock()
	defer run.mu.Unlock()
	return run.effect.Rounds
}
