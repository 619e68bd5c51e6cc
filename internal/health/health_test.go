package health_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gameday-dev/gameday/internal/health"
	"github.com/gameday-dev/gameday/internal/testenv"
)

// A Redis that wants a password is healthy only to a check that sends it;
// a check without it, or with a wrong one, fails, and no error shows the
// password given.
func TestRedisWithAPassword(t *testing.T) {
	const password = "s3cret with space"
	srv := testenv.Redis(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if what, err := health.Check(ctx, "redis://"+srv.Addr()); err != nil || what != "PONG" {
		t.Fatalf("before the password is set: %q %v", what, err)
	}
	c := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer c.Close()
	if err := c.ConfigSet(ctx, "requirepass", password).Err(); err != nil {
		t.Fatal(err)
	}
	withPW := func(pw string) string {
		return (&url.URL{Scheme: "redis", Host: srv.Addr(), User: url.UserPassword("", pw)}).String()
	}
	if _, err := health.Check(ctx, "redis://"+srv.Addr()); err == nil || !strings.Contains(err.Error(), "NOAUTH") {
		t.Errorf("without the password: %v, want NOAUTH", err)
	}
	if _, err := health.Check(ctx, withPW("wrong-one")); err == nil || strings.Contains(err.Error(), "wrong-one") {
		t.Errorf("with a wrong password: %v, want a failure that does not show it", err)
	}
	if what, err := health.Check(ctx, withPW(password)); err != nil || what != "PONG" {
		t.Errorf("with the password: %q %v, want PONG", what, err)
	}
	if _, err := health.Check(ctx, "ftp://:"+url.QueryEscape(password)+"@"+srv.Addr()); err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("an unknown scheme: %v, want an error that does not show the password", err)
	}
	// A URL that does not parse is never shown: it may be a password with
	// a character a URL cannot hold.
	bad := "redis://:s3cret%zz@" + srv.Addr()
	if _, err := health.Check(ctx, bad); err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("a URL that does not parse: %v", err)
	}
	if r := health.Redact(bad); strings.Contains(r, "s3cret") {
		t.Errorf("Redact(%q) = %q", bad, r)
	}
	if r := health.Redact(withPW(password)); strings.Contains(r, "s3cret") || !strings.Contains(r, srv.Addr()) {
		t.Errorf("Redact of a URL with a password: %q", r)
	}
}
