package assign

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pulka/pulka/pkg/streams"
)

// Membership is where the runner pool comes from: Redis heartbeats
// (Heartbeats) in docker-compose and the local mode, Kubernetes pods in the
// operator. Members returns every runner the source knows, live or not.
type Membership interface {
	Members(ctx context.Context) ([]Member, error)
}

// ErrBadID means a runner or table id cannot be used: empty, or with a
// character that would break keys or the info encoding.
var ErrBadID = errors.New("assign: invalid id")

func checkID(kind, id string) error {
	if id == "" || len(id) > 256 || strings.ContainsAny(id, "{}, \t\r\n") {
		return fmt.Errorf("%w: %s id %q", ErrBadID, kind, id)
	}
	return nil
}

// Heartbeats is the Redis membership source: every runner calls Beat well
// within the TTL, and a runner whose last beat is older than the TTL is not
// Ready. Deadlines are taken from the Redis server's clock in the scripts,
// so the runners' and the assigner's clocks need not agree.
type Heartbeats struct {
	rdb   redis.UniversalClient
	ttl   time.Duration
	prune time.Duration
}

// NewHeartbeats makes a heartbeat source whose beats live ttl. Members dead
// for longer than 20×ttl (at least a minute) are removed by the next Beat.
func NewHeartbeats(rdb redis.UniversalClient, ttl time.Duration) *Heartbeats {
	return &Heartbeats{rdb: rdb, ttl: ttl, prune: max(20*ttl, time.Minute)}
}

// TTL is how long one beat keeps a runner live.
func (h *Heartbeats) TTL() time.Duration { return h.ttl }

// beatScript: KEYS[1]=runners KEYS[2]=info; ARGV[1]=id ARGV[2]=ttl ms
// ARGV[3]=info ARGV[4]=prune ms. The deadline comes from the server's TIME.
var beatScript = redis.NewScript(`
redis.replicate_commands()
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
local dead = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[4]))
for _, id in ipairs(dead) do
  redis.call('ZREM', KEYS[1], id)
  redis.call('HDEL', KEYS[2], id)
end
return now
`)

// Beat marks m live for the TTL from now (Redis time), with its capacity and
// draining flag. m.Ready is ignored: beating is being ready.
func (h *Heartbeats) Beat(ctx context.Context, m Member) error {
	if err := checkID("runner", m.ID); err != nil {
		return err
	}
	info := strconv.Itoa(m.Capacity) + "," + boolDigit(m.Draining)
	err := beatScript.Run(ctx, h.rdb, []string{RunnersKey, RunnerInfoKey},
		m.ID, h.ttl.Milliseconds(), info, h.prune.Milliseconds()).Err()
	if err != nil {
		return fmt.Errorf("assign: heartbeat of %s: %w", m.ID, err)
	}
	return nil
}

// Leave removes a runner at once (a clean shutdown), so its tables move at
// the assigner's next pass instead of after the TTL.
func (h *Heartbeats) Leave(ctx context.Context, id string) error {
	pipe := h.rdb.TxPipeline()
	pipe.ZRem(ctx, RunnersKey, id)
	pipe.HDel(ctx, RunnerInfoKey, id)
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("assign: leave %s: %w", id, err)
	}
	return nil
}

// membersScript returns {now, id1, deadline1, info1, ...}.
var membersScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = {now}
local zs = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
for i = 1, #zs, 2 do
  out[#out + 1] = zs[i]
  out[#out + 1] = zs[i + 1]
  out[#out + 1] = redis.call('HGET', KEYS[2], zs[i]) or ''
end
return out
`)

// Members returns every runner that beat within the pruning window; Ready
// is false for those whose TTL ran out.
func (h *Heartbeats) Members(ctx context.Context) ([]Member, error) {
	res, err := membersScript.Run(ctx, h.rdb, []string{RunnersKey, RunnerInfoKey}).Slice()
	if err != nil {
		return nil, fmt.Errorf("assign: members: %w", err)
	}
	if len(res) < 1 || (len(res)-1)%3 != 0 {
		return nil, fmt.Errorf("assign: members: unexpected reply of %d items", len(res))
	}
	now, _ := res[0].(int64)
	out := make([]Member, 0, (len(res)-1)/3)
	for i := 1; i < len(res); i += 3 {
		id, _ := res[i].(string)
		ds, _ := res[i+1].(string)
		info, _ := res[i+2].(string)
		deadline, err := strconv.ParseFloat(ds, 64)
		if err != nil {
			return nil, fmt.Errorf("assign: members: deadline %q of %s", ds, id)
		}
		m := Member{ID: id, Ready: int64(deadline) > now}
		if m.Ready {
			// In Redis time, so the clocks of the runners and the
			// assigner need not agree: the reader counts from when it
			// got the reply, a little after now, so never early.
			m.LiveFor = time.Duration(int64(deadline)-now) * time.Millisecond
		}
		capS, drain, _ := strings.Cut(info, ",")
		m.Capacity, _ = strconv.Atoi(capS)
		m.Draining = drain == "1"
		out = append(out, m)
	}
	return out, nil
}

func boolDigit(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// Store is the assignment in Redis: which runner owns which table
// (OwnersKey) and, per runner, the set of its tables (RunnerTablesKey),
// changed together by scripts.
type Store struct {
	rdb redis.UniversalClient
}

// NewStore makes the assignment store.
func NewStore(rdb redis.UniversalClient) *Store { return &Store{rdb: rdb} }

// ErrConflict means a move's expected current owner was not the current
// owner: someone else changed the table first.
var ErrConflict = errors.New("assign: the table's owner changed meanwhile")

// moveScript: KEYS[1]=leader lease KEYS[2]=owners KEYS[3]=from set
// KEYS[4]=to set; ARGV[1]=leader owner ("" = unfenced) ARGV[2]=leader epoch
// ARGV[3]=table ARGV[4]=from ("" = no owner / not assigned) ARGV[5]=to ("" =
// unplaced) ARGV[6]=create ("1": the table may be new; "0": it must exist).
// Returns 1 when moved, 0 when the current owner was not ARGV[4]. A move
// rings the bells of both runners (RunnerBell: the channel is the set's
// key), after its writes, so a runner woken by it reads its new set.
var moveScript = redis.NewScript(`
if ARGV[1] ~= '' then
  local cur = redis.call('HMGET', KEYS[1], 'owner', 'epoch')
  if cur[1] ~= ARGV[1] or cur[2] ~= ARGV[2] then
    return redis.error_reply('STALEEPOCH leader is ' .. tostring(cur[2]) .. ':' .. tostring(cur[1]))
  end
end
local cur = redis.call('HGET', KEYS[2], ARGV[3])
if cur == false then
  if ARGV[6] ~= '1' then return 0 end
  cur = ''
elseif ARGV[6] == '1' then
  return 0
end
if cur ~= ARGV[4] then return 0 end
if cur ~= '' then redis.call('SREM', KEYS[3], ARGV[3]) end
redis.call('HSET', KEYS[2], ARGV[3], ARGV[5])
if ARGV[5] ~= '' then redis.call('SADD', KEYS[4], ARGV[3]) end
if cur ~= '' then redis.call('PUBLISH', KEYS[3], '') end
if ARGV[5] ~= '' then redis.call('PUBLISH', KEYS[4], '') end
return 1
`)

// Add records a brand-new table with owner to ("" while no runner can take
// it). It returns false when the table is already recorded (a redelivered
// start): the first placement stands. leader fences the write (the zero
// Lease writes unfenced); a stale leader gets streams.ErrStaleEpoch.
func (s *Store) Add(ctx context.Context, leader streams.Lease, table, to string) (bool, error) {
	return s.move(ctx, leader, table, "", to, true)
}

// Move gives table from `from` to `to` if `from` still owns it ("" for a
// table no runner could take yet); false when the owner is not `from`.
func (s *Store) Move(ctx context.Context, leader streams.Lease, table, from, to string) (bool, error) {
	return s.move(ctx, leader, table, from, to, false)
}

func (s *Store) move(ctx context.Context, leader streams.Lease, table, from, to string, create bool) (bool, error) {
	if err := checkID("table", table); err != nil {
		return false, err
	}
	for _, r := range []string{from, to} {
		if r != "" {
			if err := checkID("runner", r); err != nil {
				return false, err
			}
		}
	}
	fromSet, toSet := OwnersKey, OwnersKey // placeholders when unused
	if from != "" {
		fromSet = RunnerTablesKey(from)
	}
	if to != "" {
		toSet = RunnerTablesKey(to)
	}
	var epoch int64
	if leader.Owner != "" {
		epoch = leader.Epoch
	}
	n, err := moveScript.Run(ctx, s.rdb, []string{LeaderKey, OwnersKey, fromSet, toSet},
		leader.Owner, epoch, table, from, to, boolDigit(create)).Int()
	if err != nil {
		if redis.HasErrorPrefix(err, "STALEEPOCH") {
			return false, fmt.Errorf("assign: move %s: %w: %w", table, streams.ErrStaleEpoch, err)
		}
		return false, fmt.Errorf("assign: move %s: %w", table, err)
	}
	return n == 1, nil
}

// removeScript: KEYS[1]=owners KEYS[2]=runner set; ARGV[1]=table
// ARGV[2]=runner. Only the owner removes.
var removeScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('SREM', KEYS[2], ARGV[1])
return 1
`)

// Remove forgets a finished table, if runner still owns it (a table that
// was moved meanwhile is the new owner's to finish).
func (s *Store) Remove(ctx context.Context, table, runner string) (bool, error) {
	n, err := removeScript.Run(ctx, s.rdb, []string{OwnersKey, RunnerTablesKey(runner)}, table, runner).Int()
	if err != nil {
		return false, fmt.Errorf("assign: remove %s: %w", table, err)
	}
	return n == 1, nil
}

// Owners returns the whole assignment: table → runner ("" = unplaced).
func (s *Store) Owners(ctx context.Context) (map[string]string, error) {
	m, err := s.rdb.HGetAll(ctx, OwnersKey).Result()
	if err != nil {
		return nil, fmt.Errorf("assign: owners: %w", err)
	}
	return m, nil
}

// Owner returns table's runner; ok is false when the table is not assigned.
func (s *Store) Owner(ctx context.Context, table string) (runner string, ok bool, err error) {
	v, err := s.rdb.HGet(ctx, OwnersKey, table).Result()
	if errors.Is(err, redis.Nil) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("assign: owner of %s: %w", table, err)
	}
	return v, true, nil
}

// TablesOf returns the tables assigned to runner.
func (s *Store) TablesOf(ctx context.Context, runner string) ([]string, error) {
	v, err := s.rdb.SMembers(ctx, RunnerTablesKey(runner)).Result()
	if err != nil {
		return nil, fmt.Errorf("assign: tables of %s: %w", runner, err)
	}
	return v, nil
}
