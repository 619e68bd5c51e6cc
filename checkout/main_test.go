package checkout_test

import (
	"context"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"
)

type quietRedisLog struct{}

func (quietRedisLog) Printf(context.Context, string, ...any) {}

func TestMain(m *testing.M) {
	// go-redis logs every failed dial; the fault tests cause hundreds.
	redis.SetLogger(quietRedisLog{})
	os.Exit(m.Run())
}
