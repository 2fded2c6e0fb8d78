package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/propagation"
	"google.golang.org/protobuf/proto"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/lobbyclient"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/services/lobby/internal/domain"
)

// ErrConflict means the table changed between Load and Commit (another
// command, maybe on another replica, got there first): load again and retry.
var ErrConflict = errors.New("store: table changed concurrently")

// Config bounds what the lobby keeps.
type Config struct {
	// ViewMaxLen is the approximate length the view stream is trimmed to.
	// It must hold the updates written between two snapshots.
	ViewMaxLen int64
	// StartMaxLen trims lobbyclient.TableStartStream; the assigner must consume
	// faster than this many starts pile up.
	StartMaxLen int64
	// ForwardMaxLen trims a table's command stream when the lobby appends.
	ForwardMaxLen int64
	// ReplyMaxLen and ReplyTTL bound a gateway's reply stream: replies are
	// read within seconds, and the stream of a gateway that is gone expires.
	ReplyMaxLen int64
	ReplyTTL    time.Duration
	// ResultTTL is how long a command's result (its dedupe key) is kept; it
	// must outlast every redelivery and client retry of the command.
	ResultTTL time.Duration
	// FinishedTTL is how long a finished table stays readable by its link.
	FinishedTTL time.Duration
}

// DefaultConfig is what the service uses unless configured otherwise.
func DefaultConfig() Config {
	return Config{
		ViewMaxLen:    10_000,
		StartMaxLen:   100_000,
		ForwardMaxLen: streams.DefaultMaxLen,
		ReplyMaxLen:   1_000,
		ReplyTTL:      10 * time.Minute,
		ResultTTL:     24 * time.Hour,
		FinishedTTL:   time.Hour,
	}
}

// Store is the lobby's Redis state.
type Store struct {
	rdb  redis.UniversalClient
	cfg  Config
	prop propagation.TextMapPropagator
	// replies answers on the gateways' reply streams.
	replies *streams.Replier
	// forwards appends forwarded commands to tables' command streams.
	forwards *streams.Publisher
}

// New makes a store; zero fields of cfg take DefaultConfig's values.
func New(rdb redis.UniversalClient, cfg Config) *Store {
	d := DefaultConfig()
	for _, f := range []struct{ v, def *int64 }{
		{&cfg.ViewMaxLen, &d.ViewMaxLen}, {&cfg.StartMaxLen, &d.StartMaxLen},
		{&cfg.ForwardMaxLen, &d.ForwardMaxLen}, {&cfg.ReplyMaxLen, &d.ReplyMaxLen},
	} {
		if *f.v <= 0 {
			*f.v = *f.def
		}
	}
	for _, f := range []struct{ v, def *time.Duration }{
		{&cfg.ReplyTTL, &d.ReplyTTL}, {&cfg.ResultTTL, &d.ResultTTL}, {&cfg.FinishedTTL, &d.FinishedTTL},
	} {
		if *f.v <= 0 {
			*f.v = *f.def
		}
	}
	return &Store{rdb: rdb, cfg: cfg, prop: propagation.TraceContext{},
		forwards: streams.NewPublisher(rdb, streams.WithMaxLen(cfg.ForwardMaxLen)),
		replies: streams.NewReplier(rdb, streams.NewPublisher(rdb, streams.WithMaxLen(cfg.ReplyMaxLen)),
			lobbyclient.ReplyStream(""), cfg.ReplyTTL)}
}

// Load returns a table and its revision; ErrTableNotFound when there is none.
func (s *Store) Load(ctx context.Context, tableID string) (*domain.Table, int64, error) {
	vals, err := s.rdb.HMGet(ctx, TableKey(tableID),
		TableFieldRevision, TableFieldSummary, TableFieldPassword).Result()
	if err != nil {
		return nil, 0, fmt.Errorf("load table %s: %w", tableID, err)
	}
	revS, _ := vals[0].(string)
	sumS, _ := vals[1].(string)
	pw, _ := vals[2].(string)
	if revS == "" || sumS == "" {
		return nil, 0, fmt.Errorf("%w: %s", domain.ErrTableNotFound, tableID)
	}
	rev, err := strconv.ParseInt(revS, 10, 64)
	if err != nil {
		return nil, 0, fmt.Errorf("load table %s: revision %q: %w", tableID, revS, err)
	}
	var sum lobbyv1.TableSummary
	if err := proto.Unmarshal([]byte(sumS), &sum); err != nil {
		return nil, 0, fmt.Errorf("load table %s: %w", tableID, err)
	}
	t, err := domain.FromSummary(&sum, pw)
	if err != nil {
		return nil, 0, err
	}
	return t, rev, nil
}

// Result returns the stored result of a command id, if it was handled.
func (s *Store) Result(ctx context.Context, commandID string) (*lobbyv1.LobbyCommandResult, bool, error) {
	b, err := s.rdb.Get(ctx, ResultKey(commandID)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("result of %s: %w", commandID, err)
	}
	var r lobbyv1.LobbyCommandResult
	if err := proto.Unmarshal(b, &r); err != nil {
		return nil, false, fmt.Errorf("result of %s: %w", commandID, err)
	}
	// A forward still waiting (see forward) goes out with the repeat.
	fwd, err := s.rdb.HMGet(ctx, ForwardKey(commandID), "table", "data").Result()
	if err != nil {
		return nil, false, fmt.Errorf("result of %s: %w", commandID, err)
	}
	if table, _ := fwd[0].(string); table != "" {
		data, _ := fwd[1].(string)
		if err := s.forward(ctx, commandID, table, []byte(data)); err != nil {
			return nil, false, err
		}
	}
	return &r, true, nil
}

// ListOp is what a change does to the public list.
type ListOp uint8

// The list operations.
const (
	ListNone ListOp = iota
	ListUpsert
	ListRemove
)

// Change is everything one command does, committed at once.
type Change struct {
	CommandID string
	// Result is stored under the command id and returned to repeats.
	Result *lobbyv1.LobbyCommandResult
	// Table is the table after the command; nil when the command changed
	// no table (a refusal).
	Table *domain.Table
	// ExpectRevision is the revision Load returned; 0 for a new table.
	ExpectRevision int64
	// List says how the public list changes.
	List ListOp
	// Started is appended to lobbyclient.TableStartStream when set.
	Started *lobbyv1.TableStarted
	// Forward is appended to the table's command stream when set.
	Forward *tablev1.Command
	// Members are the players the table holds after the change
	// (domain.Table.Members; none unless it is waiting). Each one it did
	// not hold before must hold fewer than WaitingLimit waiting tables, or
	// nothing is written and Commit returns domain.ErrTooManyWaiting.
	Members []string
	// WaitingLimit is the most waiting tables one player may hold; 0: no
	// limit.
	WaitingLimit int
	// IdleDeadline is when the table expires unless changed again (zero:
	// never, it is not waiting).
	IdleDeadline time.Time
}

// Committed is the outcome of Commit.
type Committed struct {
	// Duplicate is the earlier result when the command was already applied
	// (nothing was written).
	Duplicate *lobbyv1.LobbyCommandResult
	// Version is the LobbyUpdate version written (0 when the list did not
	// change).
	Version uint64
	// Revision is the table's new revision (0 when no table was written).
	Revision int64
}

// commitScript: see the package doc. KEYS: 1 result, 2 table, 3 meta,
// 4 listed, 5 view stream, 6 start stream, 7 the command's forward
// (ForwardKey), 8 the idle deadlines (IdleKey), 9 the table's summary read
// model (lobbyclient.SummaryKey) — all in the lobby's slot.
// ARGV: 1 result bytes, 2 result ttl ms, 3 write table (0/1), 4 expected
// revision, 5 summary, 6 password hash, 7 table ttl ms (0 = keep), 8 list op
// (""/"upsert"/"remove"), 9 table id, 10 update bytes (version left out),
// 11 start bytes, 12 forward bytes, 13 view maxlen, 14 start maxlen,
// 15 unused, 16 traceparent, 17 tracestate, 18 members
// (space-separated), 19 waiting limit (0 = none), 20 idle deadline ms
// (0 = not waiting), 21 HeldPrefix.
//
// The held sets are named from player ids inside the script: they share the
// lobby's hash tag, so they are in its slot on Redis Cluster too.
//
// A duplicate returns the stored result and the command's forward if it is
// still waiting (a lobby that died between the commit and the append).
var commitScript = redis.NewScript(`
local prev = redis.call('GET', KEYS[1])
if prev then
  local f = redis.call('HMGET', KEYS[7], 'table', 'data')
  return {'dup', prev, f[1] or '', f[2] or ''}
end
local rev = 0
local old, new = {}, {}
if ARGV[3] == '1' then
  rev = tonumber(redis.call('HGET', KEYS[2], 'rev') or '0')
  if rev ~= tonumber(ARGV[4]) then return {'conflict', tostring(rev)} end
  for m in string.gmatch(redis.call('HGET', KEYS[2], 'members') or '', '%S+') do old[m] = true end
  for m in string.gmatch(ARGV[18], '%S+') do new[m] = true end
  local limit = tonumber(ARGV[19])
  if limit > 0 then
    for m in pairs(new) do
      local held = ARGV[21] .. m
      if not old[m] and redis.call('SCARD', held) >= limit then
        -- Forget tables that stopped waiting some other way (a lost key)
        -- before refusing.
        for _, id in ipairs(redis.call('SMEMBERS', held)) do
          if not redis.call('ZSCORE', KEYS[8], id) then redis.call('SREM', held, id) end
        end
        if redis.call('SCARD', held) >= limit then return {'limit', m} end
      end
    end
  end
  rev = rev + 1
  redis.call('HSET', KEYS[2], 'rev', rev, 'summary', ARGV[5])
  if ARGV[6] ~= '' then redis.call('HSET', KEYS[2], 'pw', ARGV[6]) end
  -- The read model lives exactly as long as the table: KEEPTTL keeps an
  -- expiry set before, as HSET does for the hash.
  redis.call('SET', KEYS[9], ARGV[5], 'KEEPTTL')
  if tonumber(ARGV[7]) > 0 then
    redis.call('PEXPIRE', KEYS[2], ARGV[7])
    redis.call('PEXPIRE', KEYS[9], ARGV[7])
  end
  for m in pairs(old) do
    if not new[m] then redis.call('SREM', ARGV[21] .. m, ARGV[9]) end
  end
  for m in pairs(new) do
    if not old[m] then redis.call('SADD', ARGV[21] .. m, ARGV[9]) end
  end
  if ARGV[18] ~= '' then
    redis.call('HSET', KEYS[2], 'members', ARGV[18])
  else
    redis.call('HDEL', KEYS[2], 'members')
  end
  if tonumber(ARGV[20]) > 0 then
    redis.call('ZADD', KEYS[8], ARGV[20], ARGV[9])
  else
    redis.call('ZREM', KEYS[8], ARGV[9])
  end
end
local function fields(data)
  local f = {'data', data}
  if ARGV[16] ~= '' then f[#f+1] = 'traceparent'; f[#f+1] = ARGV[16] end
  if ARGV[17] ~= '' then f[#f+1] = 'tracestate'; f[#f+1] = ARGV[17] end
  return f
end
local version = 0
if ARGV[8] ~= '' then
  version = redis.call('HINCRBY', KEYS[3], 'version', 1)
  if ARGV[8] == 'upsert' then
    redis.call('HSET', KEYS[4], ARGV[9], ARGV[5])
  else
    redis.call('HDEL', KEYS[4], ARGV[9])
  end
  -- LobbyUpdate field 1 (version, varint) is prepended to the rest of the
  -- message: protobuf fields may come in any order.
  local n, v = version, {string.char(8)}
  while n >= 128 do v[#v+1] = string.char(n % 128 + 128); n = math.floor(n / 128) end
  v[#v+1] = string.char(n)
  local id = redis.call('XADD', KEYS[5], 'MAXLEN', '~', ARGV[13], '*', unpack(fields(table.concat(v) .. ARGV[10])))
  redis.call('HSET', KEYS[3], 'stream_id', id)
end
if ARGV[11] ~= '' then
  redis.call('XADD', KEYS[6], 'MAXLEN', '~', ARGV[14], '*', unpack(fields(ARGV[11])))
end
if ARGV[12] ~= '' then
  -- The table's command stream is in the table's slot: the forward waits
  -- here until Commit appended it there.
  redis.call('HSET', KEYS[7], 'table', ARGV[9], 'data', ARGV[12])
  redis.call('PEXPIRE', KEYS[7], ARGV[2])
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return {'ok', tostring(version), tostring(rev)}
`)

// Commit applies c atomically (see the package doc).
func (s *Store) Commit(ctx context.Context, c Change) (Committed, error) {
	result, err := proto.Marshal(c.Result)
	if err != nil {
		return Committed{}, fmt.Errorf("commit %s: %w", c.CommandID, err)
	}
	tableID := c.Result.GetTableId()
	var summary, pw, update, started, forward []byte
	writeTable, tableTTL := "0", int64(0)
	if c.Table != nil {
		tableID = c.Table.ID
		writeTable, pw = "1", []byte(c.Table.PasswordHash)
		if summary, err = proto.Marshal(c.Table.Summary()); err != nil {
			return Committed{}, fmt.Errorf("commit %s: %w", c.CommandID, err)
		}
		if c.Table.Status == domain.Finished {
			tableTTL = s.cfg.FinishedTTL.Milliseconds()
		}
	}
	listOp := ""
	switch c.List {
	case ListUpsert:
		if c.Table == nil {
			return Committed{}, fmt.Errorf("commit %s: list upsert without a table", c.CommandID)
		}
		listOp = "upsert"
		update, err = proto.Marshal(&lobbyv1.LobbyUpdate{Change: &lobbyv1.LobbyUpdate_TableUpserted{TableUpserted: c.Table.Summary()}})
	case ListRemove:
		listOp = "remove"
		update, err = proto.Marshal(&lobbyv1.LobbyUpdate{Change: &lobbyv1.LobbyUpdate_TableRemoved{TableRemoved: tableID}})
	}
	if err != nil {
		return Committed{}, fmt.Errorf("commit %s: %w", c.CommandID, err)
	}
	if c.Started != nil {
		if started, err = proto.Marshal(c.Started); err != nil {
			return Committed{}, fmt.Errorf("commit %s: %w", c.CommandID, err)
		}
	}
	if c.Forward != nil {
		if forward, err = proto.Marshal(c.Forward); err != nil {
			return Committed{}, fmt.Errorf("commit %s: %w", c.CommandID, err)
		}
	}
	carrier := propagation.MapCarrier{}
	s.prop.Inject(ctx, carrier)
	keys := []string{
		ResultKey(c.CommandID), TableKey(tableID), MetaKey,
		ListedKey, lobbyclient.ViewStream, lobbyclient.TableStartStream, ForwardKey(c.CommandID),
		IdleKey, lobbyclient.SummaryKey(tableID),
	}
	for _, m := range c.Members {
		if m == "" || strings.ContainsFunc(m, unicode.IsSpace) {
			return Committed{}, fmt.Errorf("commit %s: player id %q cannot be a member", c.CommandID, m)
		}
	}
	var idle int64
	if !c.IdleDeadline.IsZero() {
		idle = max(c.IdleDeadline.UnixMilli(), 1)
	}
	res, err := commitScript.Run(ctx, s.rdb, keys,
		result, s.cfg.ResultTTL.Milliseconds(), writeTable, c.ExpectRevision, summary, pw, tableTTL,
		listOp, tableID, update, started, forward,
		s.cfg.ViewMaxLen, s.cfg.StartMaxLen, s.cfg.ForwardMaxLen,
		carrier.Get("traceparent"), carrier.Get("tracestate"),
		strings.Join(c.Members, " "), c.WaitingLimit, idle, HeldPrefix,
	).StringSlice()
	if err != nil {
		return Committed{}, fmt.Errorf("commit %s: %w", c.CommandID, err)
	}
	switch {
	case len(res) >= 2 && res[0] == "dup":
		var prev lobbyv1.LobbyCommandResult
		if err := proto.Unmarshal([]byte(res[1]), &prev); err != nil {
			return Committed{}, fmt.Errorf("commit %s: stored result: %w", c.CommandID, err)
		}
		if len(res) == 4 && res[3] != "" {
			if err := s.forward(ctx, c.CommandID, res[2], []byte(res[3])); err != nil {
				return Committed{}, err
			}
		}
		return Committed{Duplicate: &prev}, nil
	case len(res) >= 2 && res[0] == "limit":
		return Committed{}, fmt.Errorf("%w: %s already holds %d waiting tables", domain.ErrTooManyWaiting, res[1], c.WaitingLimit)
	case len(res) >= 2 && res[0] == "conflict":
		return Committed{}, fmt.Errorf("%w: %s at revision %s, expected %d", ErrConflict, tableID, res[1], c.ExpectRevision)
	case len(res) == 3 && res[0] == "ok":
		v, _ := strconv.ParseUint(res[1], 10, 64)
		r, _ := strconv.ParseInt(res[2], 10, 64)
		if forward != nil {
			if err := s.forward(ctx, c.CommandID, tableID, forward); err != nil {
				return Committed{}, err
			}
		}
		return Committed{Version: v, Revision: r}, nil
	}
	return Committed{}, fmt.Errorf("commit %s: unexpected reply %q", c.CommandID, res)
}

// forward appends a committed command's forward (a tablev1.Command) to its
// table's command stream, then drops it from ForwardKey. A lobby that dies
// in between leaves it there: the command's redelivery finds its result
// (Commit's duplicate, or Result) and appends it then. The runner dedupes
// table commands by command id, so an append made twice is harmless.
func (s *Store) forward(ctx context.Context, commandID, tableID string, data []byte) error {
	if _, err := s.forwards.Publish(ctx, streams.Entry{Stream: streams.TableCommands(tableID), Data: data}); err != nil {
		return fmt.Errorf("forward of %s to table %s: %w", commandID, tableID, err)
	}
	if err := s.rdb.Del(ctx, ForwardKey(commandID)).Err(); err != nil {
		return fmt.Errorf("forward of %s: %w", commandID, err)
	}
	return nil
}

// stakersTTL bounds a coin table's stakers set: it is read when the table
// starts, which a waiting table does within its waiting TTL of its last
// change (each hold renews it).
const stakersTTL = 7 * 24 * time.Hour

// AddStaker records that the lobby asks the wallet to hold playerID's stake
// at tableID (see StakersKey).
func (s *Store) AddStaker(ctx context.Context, tableID, playerID string) error {
	pipe := s.rdb.TxPipeline()
	pipe.SAdd(ctx, StakersKey(tableID), playerID)
	pipe.PExpire(ctx, StakersKey(tableID), stakersTTL)
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("add staker at %s: %w", tableID, err)
	}
	return nil
}

// ReserveTableID returns the table id the creation commandID uses: id the
// first time, the first one for every later call (kept ResultTTL, the
// command's dedupe window).
func (s *Store) ReserveTableID(ctx context.Context, commandID, id string) (string, error) {
	key := CreatingKey(commandID)
	ok, err := s.rdb.SetNX(ctx, key, id, s.cfg.ResultTTL).Result()
	if err != nil {
		return "", fmt.Errorf("reserve table id of %s: %w", commandID, err)
	}
	if ok {
		return id, nil
	}
	got, err := s.rdb.Get(ctx, key).Result()
	if err != nil {
		return "", fmt.Errorf("reserve table id of %s: %w", commandID, err)
	}
	return got, nil
}

// Stakers lists the players AddStaker recorded at tableID.
func (s *Store) Stakers(ctx context.Context, tableID string) ([]string, error) {
	out, err := s.rdb.SMembers(ctx, StakersKey(tableID)).Result()
	if err != nil {
		return nil, fmt.Errorf("stakers at %s: %w", tableID, err)
	}
	return out, nil
}

// Reply writes result to the gateway's reply stream (a lobbyclient reply
// stream, else streams.ErrNotReplyStream and nothing is written), which
// expires ReplyTTL after its last reply.
func (s *Store) Reply(ctx context.Context, stream string, result *lobbyv1.LobbyCommandResult) error {
	b, err := proto.Marshal(result)
	if err != nil {
		return fmt.Errorf("reply %s: %w", result.GetCommandId(), err)
	}
	if err := s.replies.Reply(ctx, stream, b); err != nil {
		return fmt.Errorf("reply %s: %w", result.GetCommandId(), err)
	}
	return nil
}

// Forget deletes a handled command entry. Commands may carry a table
// password in the clear; deleting the entry once handled keeps it in Redis
// for milliseconds, not until the stream is trimmed.
func (s *Store) Forget(ctx context.Context, stream, id string) error {
	if err := s.rdb.XDel(ctx, stream, id).Err(); err != nil {
		return fmt.Errorf("forget %s %s: %w", stream, id, err)
	}
	return nil
}

// snapshotReadScript returns {version, snapshot_version} when the snapshot
// is current, else {version, snapshot_version, stream_id, summaries...},
// read atomically so the summaries are exactly the list at version.
var snapshotReadScript = redis.NewScript(`
local m = redis.call('HMGET', KEYS[1], 'version', 'snapshot_version', 'stream_id')
local v, sv = m[1] or '0', m[2] or '-1'
if v == sv and ARGV[1] ~= 'force' then return {v, sv} end
local out = {v, sv, m[3] or '0'}
for _, s in ipairs(redis.call('HVALS', KEYS[2])) do out[#out+1] = s end
return out
`)

// snapshotWriteScript stores a snapshot unless a newer one is there (two
// replicas may write concurrently).
var snapshotWriteScript = redis.NewScript(`
local cur = tonumber(redis.call('HGET', KEYS[1], 'snapshot_version') or '-1')
if tonumber(ARGV[1]) <= cur then return 0 end
redis.call('SET', KEYS[2], ARGV[2])
redis.call('HSET', KEYS[1], 'snapshot_version', ARGV[1])
return 1
`)

// WriteSnapshot writes the current list as a LobbyView unless the stored
// snapshot is already at the current version. It returns the version of
// the list and whether it wrote.
func (s *Store) WriteSnapshot(ctx context.Context) (uint64, bool, error) {
	return s.writeSnapshot(ctx, false)
}

func (s *Store) writeSnapshot(ctx context.Context, force bool) (uint64, bool, error) {
	arg := ""
	if force {
		arg = "force"
	}
	res, err := snapshotReadScript.Run(ctx, s.rdb, []string{MetaKey, ListedKey}, arg).StringSlice()
	if err != nil {
		return 0, false, fmt.Errorf("read lobby list: %w", err)
	}
	version, err := strconv.ParseUint(res[0], 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("read lobby list: version %q: %w", res[0], err)
	}
	if len(res) == 2 {
		return version, false, nil
	}
	view, err := BuildView(version, res[2], res[3:])
	if err != nil {
		return 0, false, err
	}
	b, err := proto.Marshal(view)
	if err != nil {
		return 0, false, fmt.Errorf("snapshot: %w", err)
	}
	n, err := snapshotWriteScript.Run(ctx, s.rdb, []string{MetaKey, lobbyclient.SnapshotKey}, version, b).Int()
	if err != nil {
		return 0, false, fmt.Errorf("write snapshot: %w", err)
	}
	return version, n == 1, nil
}

// backfillScript copies a table's summary to its read model when the read
// model is missing, with the table's expiry. KEYS: table, summary.
var backfillScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
local sum = redis.call('HGET', KEYS[1], 'summary')
if not sum then return 0 end
redis.call('SET', KEYS[2], sum)
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl) end
return 1
`)

// PublishSummaries writes the summary read model of every table that has
// none (tables written before the lobby kept it), so that they can be read
// by id again. Commit keeps the read model from then on; this is safe to run
// on every start, by every replica, concurrently with commits. It returns
// how many it wrote.
func (s *Store) PublishSummaries(ctx context.Context) (int, error) {
	n := 0
	// SCAN walks one node: on Redis Cluster, the master of the lobby's slot,
	// where every table key is.
	var scanner redis.Cmdable = s.rdb
	if cc, ok := s.rdb.(*redis.ClusterClient); ok {
		m, err := cc.MasterForKey(ctx, MetaKey)
		if err != nil {
			return 0, fmt.Errorf("publish summaries: %w", err)
		}
		scanner = m
	}
	iter := scanner.Scan(ctx, 0, tablePrefix+"*", 1000).Iterator()
	for iter.Next(ctx) {
		key := iter.Val()
		tableID := strings.TrimPrefix(key, tablePrefix)
		wrote, err := backfillScript.Run(ctx, s.rdb, []string{key, lobbyclient.SummaryKey(tableID)}).Int()
		if err != nil {
			return n, fmt.Errorf("publish the summary of %s: %w", tableID, err)
		}
		n += wrote
	}
	if err := iter.Err(); err != nil {
		return n, fmt.Errorf("publish summaries: %w", err)
	}
	return n, nil
}

// BuildView assembles a LobbyView from stored summaries, newest first (ties
// by id, so every replica builds the same bytes).
func BuildView(version uint64, streamID string, summaries []string) (*lobbyv1.LobbyView, error) {
	view := &lobbyv1.LobbyView{Version: version, StreamId: streamID, Tables: make([]*lobbyv1.TableSummary, 0, len(summaries))}
	for _, raw := range summaries {
		var t lobbyv1.TableSummary
		if err := proto.Unmarshal([]byte(raw), &t); err != nil {
			return nil, fmt.Errorf("snapshot: stored summary: %w", err)
		}
		view.Tables = append(view.Tables, &t)
	}
	slices.SortFunc(view.Tables, func(a, b *lobbyv1.TableSummary) int {
		if c := b.GetCreatedAt().AsTime().Compare(a.GetCreatedAt().AsTime()); c != 0 {
			return c
		}
		return strings.Compare(a.GetTableId(), b.GetTableId())
	})
	return view, nil
}

// Rate is one sliding-window limit: at most Limit requests in any Window,
// counted in the sorted set Key.
type Rate struct {
	Key    string
	Limit  int
	Window time.Duration
}

// takeScript counts one request (member ARGV[2] at ARGV[1] ms) against every
// key, or against none when one of them is full: KEYS[i] has limit
// ARGV[2i+2] in window ARGV[2i+1] ms. It returns {0, 0}, or {i, ms until
// key i has room}. A member counted already (a retried command) is only
// moved to now.
var takeScript = redis.NewScript(`
local now = tonumber(ARGV[1])
for i = 1, #KEYS do
  local w, lim = tonumber(ARGV[2*i+1]), tonumber(ARGV[2*i+2])
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now - w)
  if not redis.call('ZSCORE', KEYS[i], ARGV[2]) and redis.call('ZCARD', KEYS[i]) >= lim then
    local oldest = redis.call('ZRANGE', KEYS[i], 0, 0, 'WITHSCORES')
    return {i, tonumber(oldest[2]) + w - now}
  end
end
for i = 1, #KEYS do
  redis.call('ZADD', KEYS[i], now, ARGV[2])
  redis.call('PEXPIRE', KEYS[i], ARGV[2*i+1])
end
return {0, 0}
`)

// Take counts one request, named member (its command id), against every
// rate at once, before the work it guards: parallel requests cannot slip
// past a limit. full is the index of the rate that refused (nothing was
// counted) and retryAfter when it has room again; full is -1 when the
// request was counted.
func (s *Store) Take(ctx context.Context, now time.Time, member string, rates ...Rate) (full int, retryAfter time.Duration, err error) {
	if len(rates) == 0 {
		return -1, 0, nil
	}
	keys := make([]string, len(rates))
	args := []interface{}{now.UnixMilli(), member}
	for i, r := range rates {
		if r.Limit < 1 || r.Window < time.Millisecond {
			return 0, 0, fmt.Errorf("rate %s: limit %d per %v", r.Key, r.Limit, r.Window)
		}
		keys[i] = r.Key
		args = append(args, r.Window.Milliseconds(), r.Limit)
	}
	res, err := takeScript.Run(ctx, s.rdb, keys, args...).Int64Slice()
	if err != nil || len(res) != 2 {
		return 0, 0, fmt.Errorf("rate %s: %w (reply %v)", keys[0], err, res)
	}
	if res[0] == 0 {
		return -1, 0, nil
	}
	i := int(res[0] - 1)
	// A clock that went back (another replica's) must not ask for more than
	// the window, nor for nothing.
	wait := min(max(time.Duration(res[1])*time.Millisecond, time.Millisecond), rates[i].Window)
	return i, wait, nil
}

// DueIdle returns up to n waiting tables whose idle deadline is at or
// before now, soonest first.
func (s *Store) DueIdle(ctx context.Context, now time.Time, n int64) ([]string, error) {
	ids, err := s.rdb.ZRangeByScore(ctx, IdleKey, &redis.ZRangeBy{
		Min: "-inf", Max: strconv.FormatInt(now.UnixMilli(), 10), Count: n,
	}).Result()
	if err != nil {
		return nil, fmt.Errorf("due idle tables: %w", err)
	}
	return ids, nil
}

// IdleDeadline returns when a waiting table expires; ok is false when it is
// not waiting (or unknown).
func (s *Store) IdleDeadline(ctx context.Context, tableID string) (time.Time, bool, error) {
	ms, err := s.rdb.ZScore(ctx, IdleKey, tableID).Result()
	if errors.Is(err, redis.Nil) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, fmt.Errorf("idle deadline of %s: %w", tableID, err)
	}
	return time.UnixMilli(int64(ms)), true, nil
}

// Held returns the waiting tables playerID hosts or sits at.
func (s *Store) Held(ctx context.Context, playerID string) ([]string, error) {
	ids, err := s.rdb.SMembers(ctx, HeldKey(playerID)).Result()
	if err != nil {
		return nil, fmt.Errorf("tables held by %s: %w", playerID, err)
	}
	slices.Sort(ids)
	return ids, nil
}

// DropIdle forgets a table's idle deadline (the table is gone or no longer
// waiting).
func (s *Store) DropIdle(ctx context.Context, tableID string) error {
	if err := s.rdb.ZRem(ctx, IdleKey, tableID).Err(); err != nil {
		return fmt.Errorf("drop idle %s: %w", tableID, err)
	}
	return nil
}
