package checkout

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Sessions keeps shoppers' sessions in their own Redis. The checkout can do
// without it: when it fails the shopper checks out as a guest.
type Sessions struct {
	rdb *redis.Client
	ttl time.Duration
}

// NewSessions wraps a Redis client; sessions live for ttl after last use.
func NewSessions(rdb *redis.Client, ttl time.Duration) *Sessions {
	return &Sessions{rdb: rdb, ttl: ttl}
}

// Touch loads the session token and extends its life, creating it for
// shopper when it is new. It returns the shopper the session belongs to.
// Repeating it is harmless.
func (s *Sessions) Touch(ctx context.Context, token, shopper string) (string, error) {
	key := "gameday:session:" + token
	old, err := s.rdb.SetArgs(ctx, key, shopper, redis.SetArgs{TTL: s.ttl, Get: true, Mode: ""}).Result()
	if err == redis.Nil {
		return shopper, nil
	}
	if err != nil {
		return "", fmt.Errorf("touch session: %w", err)
	}
	return old, nil
}
