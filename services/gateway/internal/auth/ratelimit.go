package auth

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Limiter counts attempts per key in fixed windows stored in Redis, so every
// gateway instance shares the same counts.
type Limiter struct {
	rdb    redis.UniversalClient
	prefix string
	limit  int64
	window time.Duration
}

// NewLimiter allows `limit` hits per key per window.
func NewLimiter(rdb redis.UniversalClient, name string, limit int, window time.Duration) *Limiter {
	return &Limiter{rdb: rdb, prefix: "pulka:ratelimit:" + name + ":", limit: int64(limit), window: window}
}

// hitScript counts one hit and returns the count and the window's remaining
// milliseconds; the first hit of a window starts its expiry.
var hitScript = redis.NewScript(`
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {n, ttl}`)

// Hit counts an attempt for key and reports whether it is within the limit;
// when not, retryAfter says when the window ends.
func (l *Limiter) Hit(ctx context.Context, key string) (ok bool, retryAfter time.Duration, err error) {
	res, err := hitScript.Run(ctx, l.rdb, []string{l.prefix + key}, l.window.Milliseconds()).Int64Slice()
	if err != nil || len(res) != 2 {
		return false, 0, fmt.Errorf("auth: rate limit %s: %w", l.prefix, err)
	}
	return res[0] <= l.limit, time.Duration(res[1]) * time.Millisecond, nil
}

// Blocked reports whether key already used up its window, without counting.
func (l *Limiter) Blocked(ctx context.Context, key string) (blocked bool, retryAfter time.Duration, err error) {
	pipe := l.rdb.Pipeline()
	get := pipe.Get(ctx, l.prefix+key)
	ttl := pipe.PTTL(ctx, l.prefix+key)
	_, _ = pipe.Exec(ctx)
	n, err := get.Int64()
	if errors.Is(err, redis.Nil) {
		return false, 0, nil
	}
	if err != nil {
		return false, 0, fmt.Errorf("auth: rate limit %s: %w", l.prefix, err)
	}
	return n >= l.limit, ttl.Val(), nil
}

// Reset forgets key's count (e.g. after a successful login).
func (l *Limiter) Reset(ctx context.Context, key string) error {
	return l.rdb.Del(ctx, l.prefix+key).Err()
}
