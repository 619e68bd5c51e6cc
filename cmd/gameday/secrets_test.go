package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/gameday-dev/gameday/checkout"
	"github.com/gameday-dev/gameday/gameday/env"
	"github.com/gameday-dev/gameday/internal/testenv"
)

// The servers these tests start inherit the test's environment: secrets a
// developer exported for Compose must not reach them.
func TestMain(m *testing.M) {
	os.Unsetenv(checkout.AdminTokenEnv)
	os.Unsetenv(checkout.RedisPasswordEnv)
	os.Exit(m.Run())
}

// The runner sets the variables the checkout reads: one name on both sides.
func TestSecretVariablesAgree(t *testing.T) {
	if env.AdminTokenVar != checkout.AdminTokenEnv || env.RedisPasswordVar != checkout.RedisPasswordEnv {
		t.Errorf("runner %s, %s; checkout %s, %s", env.AdminTokenVar, env.RedisPasswordVar, checkout.AdminTokenEnv, checkout.RedisPasswordEnv)
	}
}

// "gameday serve checkout" takes the admin token and the Redis password
// from its environment: its Redis wants a password (its -stock is set
// through it), its admin API wants the token, and neither secret is in its
// arguments or its log.
func TestServeCheckoutSecretsFromTheEnvironment(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	const token, password = "admin-t0ken-for-a-test", "redis-pa55-for-a-test"
	bin := buildBinary(t)
	inv := testenv.Redis(t)
	c := redis.NewClient(&redis.Options{Addr: inv.Addr()})
	defer c.Close()
	if err := c.ConfigSet(context.Background(), "requirepass", password).Err(); err != nil {
		t.Fatal(err)
	}
	t.Setenv(checkout.AdminTokenEnv, token)
	t.Setenv(checkout.RedisPasswordEnv, password)
	co, coAddr, coLog := startServer(t, bin, "serve", "checkout", "-listen", "127.0.0.1:0",
		"-inventory-redis", inv.Addr(), "-payment-url", "http://127.0.0.1:1", "-stock", "sku-1=3")
	testenv.CheckAdminToken(t, "http://"+coAddr+"/admin/ledger?sku=sku-1", token)
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(co.Process.Pid), "cmdline"))
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{token, password} {
		if strings.Contains(string(b), secret) || strings.Contains(coLog.String(), secret) {
			t.Errorf("a secret shows in the checkout's arguments or log")
		}
	}
}

// "gameday health redis://..." sends the password of $REDISCLI_AUTH (or
// of the URL), as redis-cli does, and never prints it.
func TestHealthSendsTheRedisPassword(t *testing.T) {
	const password = "health-pa55"
	srv := testenv.Redis(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer c.Close()
	if err := c.ConfigSet(context.Background(), "requirepass", password).Err(); err != nil {
		t.Fatal(err)
	}
	check := func(url string) (string, error) {
		var out, errOut strings.Builder
		err := healthCmd([]string{url}, &out, &errOut)
		if err != nil {
			return out.String() + err.Error(), err
		}
		return out.String() + errOut.String(), nil
	}
	t.Setenv("REDISCLI_AUTH", "")
	if out, err := check("redis://" + srv.Addr()); err == nil || !strings.Contains(out, "NOAUTH") {
		t.Errorf("without a password: %v %s", err, out)
	}
	if out, err := check("redis://:" + password + "@" + srv.Addr()); err != nil || strings.Contains(out, password) {
		t.Errorf("with the URL's password: %v %s (must not show it)", err, out)
	}
	t.Setenv("REDISCLI_AUTH", password)
	if out, err := check("redis://" + srv.Addr()); err != nil || strings.Contains(out, password) {
		t.Errorf("with REDISCLI_AUTH: %v %s (must not show it)", err, out)
	}
	t.Setenv("REDISCLI_AUTH", "bad-pa55-x")
	if out, err := check("redis://" + srv.Addr()); err == nil || strings.Contains(out, "bad-pa55-x") {
		t.Errorf("with a wrong REDISCLI_AUTH: %v %s", err, out)
	}
}
