package presence

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pulka/pulka/pkg/streams"
)

// Key is the set of a player's connections to a table; it carries the
// table's hash tag like every key of the table.
func Key(tableID, playerID string) string { return streams.TablePresence(tableID, playerID) }

// Tracker records the connections of one gateway process.
type Tracker struct {
	rdb      redis.UniversalClient
	ttl      time.Duration
	now      func() time.Time
	instance string
	// redisClock: every score (a connection's expiry, a gateway's beat)
	// is by Redis's clock (TIME in the scripts), so that gateways and
	// runners whose clocks disagree still agree on who is connected and
	// who is dead.
	redisClock bool
}

// Option configures a Tracker.
type Option func(*Tracker)

// WithInstance names the gateway in the Tracker's instance ID (default
// "gateway"), which logs and Redis keys show.
func WithInstance(name string) Option {
	return func(t *Tracker) {
		if name != "" {
			t.instance = name
		}
	}
}

// WithRedisClock makes the tracker use Redis's clock instead of now (which
// tests set).
func WithRedisClock() Option { return func(t *Tracker) { t.redisClock = true } }

// New makes a tracker whose entries live ttl unless refreshed. Its instance
// ID is new for every tracker: a restarted gateway is another instance, and
// the connections of the one that died are swept like any other's.
func New(rdb redis.UniversalClient, ttl time.Duration, now func() time.Time, opts ...Option) *Tracker {
	t := &Tracker{rdb: rdb, ttl: ttl, now: now, instance: "gateway"}
	for _, o := range opts {
		o(t)
	}
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read does not fail
	t.instance += "-" + hex.EncodeToString(b[:])
	return t
}

// Instance is the tracker's instance ID.
func (t *Tracker) Instance() string { return t.instance }

// connectScript: KEYS[1] = presence key; ARGV = clock, conn, TTL ms, the
// key's TTL ms. Drops expired connections, adds this one and says how many
// there are.
var connectScript = redis.NewScript(nowLua + `
local now = now_ms()
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return redis.call('ZCARD', KEYS[1])`)

// removeScript: KEYS[1] = presence key; ARGV = clock, conn. Removes this
// connection (and expired ones) and returns {1 if it was there, how many
// remain}: a goodbye and a sweep both remove a connection.
var removeScript = redis.NewScript(nowLua + `
local removed = redis.call('ZREM', KEYS[1], ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now_ms())
return {removed, redis.call('ZCARD', KEYS[1])}`)

// remove runs removeScript.
func (t *Tracker) remove(ctx context.Context, table, player, conn string) (removed bool, left int64, err error) {
	res, err := removeScript.Run(ctx, t.rdb, []string{Key(table, player)}, t.clockArg(), conn).Int64Slice()
	if err != nil {
		return false, 0, err
	}
	if len(res) != 2 {
		return false, 0, fmt.Errorf("presence: the remove script returned %v", res)
	}
	return res[0] == 1, res[1], nil
}

// ErrNotPresent says the connection's entry is gone although the connection
// lives, because its gateway was taken for dead and swept (it stalled, or
// lost Redis, for longer than deadAfter). Connect records it again.
var ErrNotPresent = errors.New("presence: connection not recorded")

// Connect records connection conn of player at table and reports whether it
// is the player's first live connection there. The connection is also listed
// under the tracker's instance, so that if this gateway dies another can
// sweep it (Sweep).
func (t *Tracker) Connect(ctx context.Context, table, player, conn string) (first bool, err error) {
	// Listed first: a connection listed but not counted is swept harmlessly,
	// one counted but not listed would never be.
	if err := t.rdb.SAdd(ctx, connsKey(t.instance), member(table, player, conn)).Err(); err != nil {
		return false, fmt.Errorf("presence: connect: %w", err)
	}
	n, err := connectScript.Run(ctx, t.rdb, []string{Key(table, player)},
		t.clockArg(), conn, t.ttl.Milliseconds(), (2 * t.ttl).Milliseconds()).Int64()
	if err != nil {
		return false, fmt.Errorf("presence: connect: %w", err)
	}
	return n == 1, nil
}

// refreshScript: KEYS[1] = presence key; ARGV = clock, conn, TTL ms, the
// key's TTL ms. Returns 0 when conn is not there (swept) and adds nothing.
var refreshScript = redis.NewScript(nowLua + `
if not redis.call('ZSCORE', KEYS[1], ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], now_ms() + tonumber(ARGV[3]), ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1`)

// Refresh keeps conn alive for another TTL. It returns ErrNotPresent when
// the entry is gone (Connect again).
func (t *Tracker) Refresh(ctx context.Context, table, player, conn string) error {
	ok, err := refreshScript.Run(ctx, t.rdb, []string{Key(table, player)},
		t.clockArg(), conn, t.ttl.Milliseconds(), (2 * t.ttl).Milliseconds()).Int()
	if err != nil {
		return fmt.Errorf("presence: refresh: %w", err)
	}
	if ok == 0 {
		return ErrNotPresent
	}
	return nil
}

// Disconnect removes conn and reports whether it was the player's last live
// connection at table. It may report last together with an error (the
// connection was removed, but is still listed under the instance): the
// player is gone all the same.
func (t *Tracker) Disconnect(ctx context.Context, table, player, conn string) (last bool, err error) {
	// Uncounted first, unlisted after, as Connect lists before it counts: a
	// connection is never counted without being listed, so a gateway that
	// dies between the two leaves at worst a listed connection that a sweep
	// reports away once more (the runner checks an away against presence).
	// A connection already gone (a repeated goodbye) is not the last.
	removed, left, err := t.remove(ctx, table, player, conn)
	if err != nil {
		return false, fmt.Errorf("presence: disconnect: %w", err)
	}
	last = removed && left == 0
	if err := t.rdb.SRem(ctx, connsKey(t.instance), member(table, player, conn)).Err(); err != nil {
		return last, fmt.Errorf("presence: disconnect: %w", err)
	}
	return last, nil
}

// A gateway that dies without closing its connections (SIGKILL, a lost
// node) never reports its players away, so no table would start their
// reconnect grace. Every gateway therefore beats in gatewaysKey (score: the
// moment it counts as dead) and lists its connections in connsKey; every
// gateway sweeps the instances whose beat lapsed. The keys share one hash
// tag, so that a sweep's scripts run on Redis Cluster.

const gatewayKeyPrefix = streams.KeyPrefix + ":{gw}"

func gatewaysKey() string { return gatewayKeyPrefix + ":gateways" }

func connsKey(instance string) string { return gatewayKeyPrefix + ":" + instance + ":conns" }

// member is a connection in connsKey: table, player and connection IDs,
// which never contain the unit separator.
func member(table, player, conn string) string { return table + "\x1f" + player + "\x1f" + conn }

// connsTTL bounds how long the list of a dead instance that nobody swept
// stays in Redis (it is refreshed by every beat of a live one).
const connsTTL = 24 * time.Hour

// nowLua defines now_ms(), the time in Unix ms the scripts use: ARGV[1],
// or Redis's clock when that is empty (WithRedisClock), as the runner's
// check of an away (streams.Connected) reads it.
const nowLua = streams.NowMsLua

// clockArg is ARGV[1] of the scripts.
func (t *Tracker) clockArg() string {
	if t.redisClock {
		return ""
	}
	return strconv.FormatInt(t.now().UnixMilli(), 10)
}

// beatScript: KEYS = gatewaysKey, the instance's connsKey; ARGV = clock,
// instance, deadAfter ms, connsTTL ms.
var beatScript = redis.NewScript(nowLua + `
redis.call('ZADD', KEYS[1], now_ms() + tonumber(ARGV[3]), ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return 1`)

// Beat says this instance is alive for deadAfter more.
func (t *Tracker) Beat(ctx context.Context, deadAfter time.Duration) error {
	err := beatScript.Run(ctx, t.rdb, []string{gatewaysKey(), connsKey(t.instance)},
		t.clockArg(), t.instance, deadAfter.Milliseconds(), connsTTL.Milliseconds()).Err()
	if err != nil {
		return fmt.Errorf("presence: beat: %w", err)
	}
	return nil
}

// Listed reports whether this instance is among the beating ones.
func (t *Tracker) Listed(ctx context.Context) (bool, error) {
	err := t.rdb.ZScore(ctx, gatewaysKey(), t.instance).Err()
	switch {
	case errors.Is(err, redis.Nil):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("presence: %w", err)
	}
	return true, nil
}

// leaveScript: KEYS = gatewaysKey, the instance's connsKey; ARGV =
// instance. Returns 0, leaving nothing, while connections are listed.
var leaveScript = redis.NewScript(`
if redis.call('SCARD', KEYS[2]) > 0 then return 0 end
redis.call('ZREM', KEYS[1], ARGV[1])
return 1`)

// Leave takes this instance out of the beating ones, on a clean shutdown
// once its connections have disconnected. It reports false, and leaves the
// instance to be swept, if some are still listed (a goodbye that failed).
func (t *Tracker) Leave(ctx context.Context) (bool, error) {
	n, err := leaveScript.Run(ctx, t.rdb, []string{gatewaysKey(), connsKey(t.instance)}, t.instance).Int()
	if err != nil {
		return false, fmt.Errorf("presence: leave: %w", err)
	}
	return n == 1, nil
}

// claimKey marks a dead instance's sweep as taken: one sweeper wins it, and
// renews it while it works; if that one dies too, the claim lapses and
// another sweeps what is left.
func claimKey(instance string) string { return gatewayKeyPrefix + ":" + instance + ":sweep" }

// deadScript: KEYS[1] = gatewaysKey; ARGV = clock, most. The instances
// whose beat lapsed, with their scores.
var deadScript = redis.NewScript(nowLua + `
return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now_ms(), 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[2]))`)

// renewScript: KEYS = claimKey, gatewaysKey; ARGV = sweeper, claim ms,
// instance, the score it was seen dead with. Extends the claim and returns
// 1 while the claim is the sweeper's (else 0) and the instance has not
// beaten again (else 2: what it lists now is alive).
var renewScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if tonumber(redis.call('ZSCORE', KEYS[2], ARGV[3])) ~= tonumber(ARGV[4]) then return 2 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`)

// sweptScript: KEYS = gatewaysKey, the instance's connsKey and claimKey;
// ARGV = instance, the score it was seen dead with, the sweeper. The
// instance is forgotten only if it did not beat during the sweep (a beat
// moves its score past now): one that came back keeps its list. The claim
// goes only if it is still the sweeper's.
var sweptScript = redis.NewScript(`
if tonumber(redis.call('ZSCORE', KEYS[1], ARGV[1])) == tonumber(ARGV[2]) then
  redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('DEL', KEYS[2])
end
if redis.call('GET', KEYS[3]) == ARGV[3] then redis.call('DEL', KEYS[3]) end
return 1`)

// Gone is a player left with no live connection at a table by a sweep.
type Gone struct{ Table, Player string }

// sweepBatch is how many connections a sweep takes at a time, renewing its
// claim between batches.
const sweepBatch = 256

// errClaimLost: another sweeper holds the instance now (ours lapsed).
var errClaimLost = errors.New("presence: the sweep's claim lapsed")

// Sweep removes the connections of instances whose beat lapsed and calls
// away for every player left with no connection at a table (the table
// starts their grace; one who is not seated there is ignored by it). It
// returns how many connections it removed. A sweep that fails part way
// leaves the rest for the next, after claim.
func (t *Tracker) Sweep(ctx context.Context, claim time.Duration, away func(Gone) error) (int, error) {
	res, err := deadScript.Run(ctx, t.rdb, []string{gatewaysKey()}, t.clockArg(), 16).StringSlice()
	if err != nil {
		return 0, fmt.Errorf("presence: sweep: %w", err)
	}
	swept := 0
	for i := 0; i+1 < len(res); i += 2 {
		inst, score := res[i], res[i+1]
		if inst == t.instance {
			continue // stalled, not dead: our next beat says so
		}
		won, err := t.rdb.SetNX(ctx, claimKey(inst), t.instance, claim).Result()
		if err != nil {
			return swept, fmt.Errorf("presence: sweep %s: %w", inst, err)
		}
		if !won {
			continue // another gateway is sweeping it
		}
		n, err := t.sweepInstance(ctx, inst, score, claim, away)
		swept += n
		if err != nil {
			return swept, fmt.Errorf("presence: sweep %s: %w", inst, err)
		}
		if err := sweptScript.Run(ctx, t.rdb, []string{gatewaysKey(), connsKey(inst), claimKey(inst)},
			inst, score, t.instance).Err(); err != nil {
			return swept, fmt.Errorf("presence: sweep %s: %w", inst, err)
		}
	}
	return swept, nil
}

// sweepInstance sweeps inst's listed connections, a batch at a time, until
// none is left or inst beats again.
func (t *Tracker) sweepInstance(ctx context.Context, inst, score string, claim time.Duration, away func(Gone) error) (int, error) {
	key := connsKey(inst)
	swept := 0
	for {
		conns, err := t.rdb.SRandMemberN(ctx, key, sweepBatch).Result()
		if err != nil || len(conns) == 0 {
			return swept, err
		}
		for _, m := range conns {
			parts := strings.Split(m, "\x1f")
			if len(parts) == 3 {
				// Whether or not the entry was still there (it may have
				// expired), a player left with none is away.
				_, left, err := t.remove(ctx, parts[0], parts[1], parts[2])
				if err != nil {
					return swept, err
				}
				if left == 0 {
					if err := away(Gone{Table: parts[0], Player: parts[1]}); err != nil {
						return swept, err
					}
				}
			}
			if err := t.rdb.SRem(ctx, key, m).Err(); err != nil {
				return swept, err
			}
			swept++
		}
		ok, err := renewScript.Run(ctx, t.rdb, []string{claimKey(inst), gatewaysKey()},
			t.instance, claim.Milliseconds(), inst, score).Int()
		switch {
		case err != nil:
			return swept, err
		case ok == 0:
			return swept, errClaimLost
		case ok == 2:
			return swept, nil // it came back
		}
	}
}
