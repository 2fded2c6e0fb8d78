package presence

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pulka/pulka/pkg/streams"
)

// Key is the set of a player's connections to a table; it carries the
// table's hash tag like every key of the table.
func Key(tableID, playerID string) string {
	return streams.KeyPrefix + ":" + streams.TableTag(tableID) + ":presence:" + playerID
}

// Tracker records connections.
type Tracker struct {
	rdb redis.UniversalClient
	ttl time.Duration
	now func() time.Time
}

// New makes a tracker whose entries live ttl unless refreshed.
func New(rdb redis.UniversalClient, ttl time.Duration, now func() time.Time) *Tracker {
	return &Tracker{rdb: rdb, ttl: ttl, now: now}
}

// TTL is how long an entry lives without a refresh.
func (t *Tracker) TTL() time.Duration { return t.ttl }

// connectScript drops expired connections, adds this one and says whether it
// is the only one.
var connectScript = redis.NewScript(`
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return redis.call('ZCARD', KEYS[1])`)

// disconnectScript removes this connection (and expired ones) and returns
// how many remain, or -1 when this one was not there (already gone).
var disconnectScript = redis.NewScript(`
local removed = redis.call('ZREM', KEYS[1], ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if removed == 0 then return -1 end
return redis.call('ZCARD', KEYS[1])`)

// Connect records connection conn of player at table and reports whether it
// is the player's first live connection there.
func (t *Tracker) Connect(ctx context.Context, table, player, conn string) (first bool, err error) {
	now := t.now()
	n, err := connectScript.Run(ctx, t.rdb, []string{Key(table, player)},
		now.UnixMilli(), now.Add(t.ttl).UnixMilli(), conn, (2 * t.ttl).Milliseconds()).Int64()
	if err != nil {
		return false, fmt.Errorf("presence: connect: %w", err)
	}
	return n == 1, nil
}

// Refresh keeps conn alive for another TTL.
func (t *Tracker) Refresh(ctx context.Context, table, player, conn string) error {
	key := Key(table, player)
	pipe := t.rdb.Pipeline()
	pipe.ZAddXX(ctx, key, redis.Z{Score: float64(t.now().Add(t.ttl).UnixMilli()), Member: conn})
	pipe.PExpire(ctx, key, 2*t.ttl)
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("presence: refresh: %w", err)
	}
	return nil
}

// Disconnect removes conn and reports whether it was the player's last live
// connection at table.
func (t *Tracker) Disconnect(ctx context.Context, table, player, conn string) (last bool, err error) {
	n, err := disconnectScript.Run(ctx, t.rdb, []string{Key(table, player)}, t.now().UnixMilli(), conn).Int64()
	if err != nil {
		return false, fmt.Errorf("presence: disconnect: %w", err)
	}
	return n == 0, nil
}
