package sheetstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/propagation"

	"github.com/pulka/pulka/pkg/scoringclient"
	"github.com/pulka/pulka/pkg/streams"
)

// Defaults of WriterOptions.
const (
	DefaultGameTTL            = 7 * 24 * time.Hour
	DefaultDedupeTTL          = 7 * 24 * time.Hour
	DefaultStandingsDedupeTTL = 90 * 24 * time.Hour
	DefaultSheetStreamLen     = 64
	DefaultStandingsStreamLen = 100_000
	DefaultHistoryPerPlayer   = 1000
)

// WriterOptions tune how long things are kept. The zero value of a field
// means its default.
type WriterOptions struct {
	// GameTTL: a game's inputs and live sheet expire this long after their
	// last write (an abandoned game disappears; a finished one lives on in
	// history).
	GameTTL time.Duration
	// DedupeTTL must outlast every redelivery of an input.
	DedupeTTL time.Duration
	// StandingsDedupeTTL guards the standings (payouts hang on them) for
	// much longer than the inputs.
	StandingsDedupeTTL time.Duration
	// SheetStreamLen is the approximate length a table's sheet stream is
	// trimmed to: readers need only its latest entries.
	SheetStreamLen int64
	// StandingsStreamLen is the approximate length of the standings stream.
	StandingsStreamLen int64
	// HistoryPerPlayer is how many finished games a player's list keeps.
	HistoryPerPlayer int64
	// HistoryTTL, when positive, expires finished games' records and lists;
	// zero keeps them.
	HistoryTTL time.Duration
}

func (o WriterOptions) withDefaults() WriterOptions {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	defN := func(v *int64, d int64) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.GameTTL, DefaultGameTTL)
	def(&o.DedupeTTL, DefaultDedupeTTL)
	def(&o.StandingsDedupeTTL, DefaultStandingsDedupeTTL)
	defN(&o.SheetStreamLen, DefaultSheetStreamLen)
	defN(&o.StandingsStreamLen, DefaultStandingsStreamLen)
	defN(&o.HistoryPerPlayer, DefaultHistoryPerPlayer)
	if o.HistoryTTL < 0 {
		o.HistoryTTL = 0
	}
	return o
}

// Writer is the scoring service's side of the store.
type Writer struct {
	rdb  redis.UniversalClient
	opts WriterOptions
	prop propagation.TextMapPropagator
}

// NewWriter makes a writer. Trace context is stored in published entries with
// the W3C propagator, as streams.Publisher does.
func NewWriter(rdb redis.UniversalClient, opts WriterOptions) *Writer {
	return &Writer{rdb: rdb, opts: opts.withDefaults(), prop: propagation.TraceContext{}}
}

// Stored says whether a store call wrote its input.
type Stored struct {
	// Applied: this call stored the input; false: an earlier delivery did.
	Applied bool
	// Mark is the mark of the delivery that stored it (e.g. its message key).
	Mark string
}

// StoreStart stores a game's GameStarted once.
func (w *Writer) StoreStart(ctx context.Context, tableID, gameID string, data []byte, mark string) (Stored, error) {
	return w.storeOnce(ctx, startDedupeKey(tableID, gameID), mark,
		new(streams.Effect).Do("SET", StartKey(tableID, gameID), data, "NX", "PX", w.opts.GameTTL.Milliseconds()))
}

// StoreHand stores hand `hand` of a game once. A hand already stored is never
// overwritten, even after its dedupe key expired.
func (w *Writer) StoreHand(ctx context.Context, tableID, gameID string, hand uint32, data []byte, mark string) (Stored, error) {
	key := HandsKey(tableID, gameID)
	return w.storeOnce(ctx, handDedupeKey(tableID, gameID, hand), mark,
		new(streams.Effect).
			Do("HSETNX", key, strconv.FormatUint(uint64(hand), 10), data).
			Do("PEXPIRE", key, w.opts.GameTTL.Milliseconds()))
}

// StoreEnd stores a game's GameEnded once.
func (w *Writer) StoreEnd(ctx context.Context, tableID, gameID string, data []byte, mark string) (Stored, error) {
	return w.storeOnce(ctx, endDedupeKey(tableID, gameID), mark,
		new(streams.Effect).Do("SET", EndKey(tableID, gameID), data, "NX", "PX", w.opts.GameTTL.Milliseconds()))
}

func (w *Writer) storeOnce(ctx context.Context, dedupe, mark string, e *streams.Effect) (Stored, error) {
	r, err := streams.Once(ctx, w.rdb, dedupe, w.opts.DedupeTTL, mark, e)
	if err != nil {
		return Stored{}, fmt.Errorf("sheetstore: store: %w", err)
	}
	// The write itself is conditional too (SET NX, HSETNX): after the
	// dedupe key expired, a very late duplicate runs the effect but must not
	// count as stored. SET NX replies nil and HSETNX 0 when they did nothing.
	applied := r.Applied && len(r.Replies) > 0 && r.Replies[0] != nil && r.Replies[0] != int64(0)
	return Stored{Applied: applied, Mark: r.Mark}, nil
}

// Game is everything stored about one game, still encoded.
type Game struct {
	// Start is the GameStarted, nil until it arrived.
	Start []byte
	// Hands are the HandResults by hand index, as they arrived (maybe with
	// gaps).
	Hands map[uint32][]byte
	// End is the GameEnded, nil until it arrived.
	End []byte
	// Committed is the sheet last committed.
	Committed Committed
}

// Committed is the state of a game's stored sheet.
type Committed struct {
	// Version is 0 when no sheet was committed yet.
	Version uint64
	// Final: the game is over and the sheet can no longer change.
	Final bool
	// EndedAt is when the game ended (set with Final).
	EndedAt time.Time
	// Sheet is the encoded Sheet.
	Sheet []byte
	// Standings is the encoded FinalStandings of a final sheet, frozen with
	// it so that every later delivery archives and publishes the same.
	Standings []byte
}

// Load reads a game's inputs and committed sheet in one round trip.
func (w *Writer) Load(ctx context.Context, tableID, gameID string) (Game, error) {
	pipe := w.rdb.Pipeline()
	start := pipe.Get(ctx, StartKey(tableID, gameID))
	hands := pipe.HGetAll(ctx, HandsKey(tableID, gameID))
	end := pipe.Get(ctx, EndKey(tableID, gameID))
	sheet := pipe.HGetAll(ctx, SheetKey(tableID, gameID))
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return Game{}, fmt.Errorf("sheetstore: load %s/%s: %w", tableID, gameID, err)
	}
	var g Game
	var err error
	if g.Start, err = optionalBytes(start); err != nil {
		return Game{}, err
	}
	if g.End, err = optionalBytes(end); err != nil {
		return Game{}, err
	}
	hm := hands.Val()
	g.Hands = make(map[uint32][]byte, len(hm))
	for k, v := range hm {
		i, err := strconv.ParseUint(k, 10, 32)
		if err != nil {
			return Game{}, fmt.Errorf("sheetstore: %s: bad hand index %q", HandsKey(tableID, gameID), k)
		}
		g.Hands[uint32(i)] = []byte(v)
	}
	if g.Committed, err = parseCommitted(sheet.Val()); err != nil {
		return Game{}, fmt.Errorf("sheetstore: %s: %w", SheetKey(tableID, gameID), err)
	}
	return g, nil
}

func optionalBytes(c *redis.StringCmd) ([]byte, error) {
	b, err := c.Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sheetstore: %w", err)
	}
	return b, nil
}

func parseCommitted(h map[string]string) (Committed, error) {
	var c Committed
	if len(h) == 0 {
		return c, nil
	}
	v, err := strconv.ParseUint(h["v"], 10, 64)
	if err != nil {
		return c, fmt.Errorf("bad version %q", h["v"])
	}
	c.Version, c.Final, c.Sheet = v, h["final"] == "1", []byte(h["sheet"])
	if st, ok := h["standings"]; ok {
		c.Standings = []byte(st)
	}
	if s := h["ended_at"]; s != "" {
		ms, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return c, fmt.Errorf("bad ended_at %q", s)
		}
		c.EndedAt = time.UnixMilli(ms)
	}
	return c, nil
}

// Commit is a sheet to store and publish.
type Commit struct {
	// Version must grow whenever the sheet's content does.
	Version uint64
	// Final marks the game's last sheet: no later commit is accepted.
	Final bool
	// EndedAt is the end time to record if this commit is the final one.
	EndedAt time.Time
	// Sheet is the encoded Sheet, Update the encoded SheetUpdate published
	// to the table's sheet stream.
	Sheet, Update []byte
	// Standings is stored with a final sheet (ignored otherwise).
	Standings []byte
}

// CommitResult is the state after a commit.
type CommitResult struct {
	// Published: this commit was stored and its update appended.
	Published bool
	// Committed is the stored state (this commit's, or the newer or final
	// one that refused it). Its Sheet is only filled when it is not this
	// commit's.
	Committed Committed
}

// commitScript stores a sheet and appends its update unless the stored
// sheet is final or at least as new. KEYS: sheet hash, sheet stream.
// ARGV: version, final (0/1), sheet, ended_at ms, ttl ms, stream maxlen,
// standings, then the update entry's field/value pairs.
var commitScript = redis.NewScript(`
local cur = redis.call('HMGET', KEYS[1], 'v', 'final', 'ended_at', 'sheet', 'standings')
local v = tonumber(cur[1] or '0')
if cur[2] == '1' or tonumber(ARGV[1]) <= v then
  return {0, v, cur[2] or '0', cur[3] or '', cur[4] or '', cur[5] or ''}
end
redis.call('HSET', KEYS[1], 'v', ARGV[1], 'final', ARGV[2], 'sheet', ARGV[3])
local ended = ''
if ARGV[2] == '1' then
  redis.call('HSET', KEYS[1], 'ended_at', ARGV[4], 'standings', ARGV[7])
  ended = ARGV[4]
end
redis.call('PEXPIRE', KEYS[1], ARGV[5])
local x = {'XADD', KEYS[2], 'MAXLEN', '~', ARGV[6], '*'}
for i = 8, #ARGV do x[#x + 1] = ARGV[i] end
redis.call(unpack(x))
redis.call('PEXPIRE', KEYS[2], ARGV[5])
-- Ring the stream's bell (streams.Bell: its key) for the gateways' Tailers.
redis.call('PUBLISH', KEYS[2], '')
return {1, tonumber(ARGV[1]), ARGV[2], ended, '', ''}
`)

// Commit stores c as the game's sheet and appends its update to the table's
// sheet stream, atomically, if c is newer than the stored sheet and the
// stored sheet is not final. A duplicate or stale commit changes nothing, so
// every version is published at most once, and the final sheet's end time is
// the one recorded by the first final commit.
func (w *Writer) Commit(ctx context.Context, tableID, gameID string, c Commit) (CommitResult, error) {
	final := "0"
	if c.Final {
		final = "1"
	}
	args := []interface{}{c.Version, final, c.Sheet, c.EndedAt.UnixMilli(), w.opts.GameTTL.Milliseconds(),
		w.opts.SheetStreamLen, c.Standings}
	args = append(args, w.entryFields(ctx, c.Update)...)
	res, err := commitScript.Run(ctx, w.rdb, []string{SheetKey(tableID, gameID), scoringclient.SheetStream(tableID)}, args...).Slice()
	if err != nil {
		return CommitResult{}, fmt.Errorf("sheetstore: commit %s/%s v%d: %w", tableID, gameID, c.Version, err)
	}
	if len(res) != 6 {
		return CommitResult{}, fmt.Errorf("sheetstore: commit: unexpected reply %v", res)
	}
	applied, _ := res[0].(int64)
	v, _ := res[1].(int64)
	fin, _ := res[2].(string)
	ended, _ := res[3].(string)
	sheet, _ := res[4].(string)
	standings, _ := res[5].(string)
	out := CommitResult{Published: applied == 1, Committed: Committed{Version: uint64(v), Final: fin == "1"}}
	if out.Published {
		out.Committed.Sheet = c.Sheet
		if c.Final {
			out.Committed.Standings = c.Standings
		}
	} else {
		out.Committed.Sheet, out.Committed.Standings = []byte(sheet), []byte(standings)
	}
	if ended != "" {
		ms, err := strconv.ParseInt(ended, 10, 64)
		if err != nil {
			return CommitResult{}, fmt.Errorf("sheetstore: commit: bad ended_at %q", ended)
		}
		out.Committed.EndedAt = time.UnixMilli(ms)
	}
	return out, nil
}

// entryFields are the stream fields of a published entry: the payload and
// the caller's trace context, as streams.Publisher writes them, so that
// streams readers continue the trace.
func (w *Writer) entryFields(ctx context.Context, data []byte) []interface{} {
	carrier := propagation.MapCarrier{}
	w.prop.Inject(ctx, carrier)
	out := []interface{}{streams.FieldData, data}
	for _, k := range []string{streams.FieldTraceParent, streams.FieldTraceState} {
		if v := carrier.Get(k); v != "" {
			out = append(out, k, v)
		}
	}
	return out
}

// Record is a finished game as history keeps it.
type Record struct {
	TableID, GameID string
	EndedAt         time.Time
	// Sheet is the encoded final Sheet; Standings the encoded
	// FinalStandings (without trace context, so every delivery writes the
	// same bytes).
	Sheet, Standings []byte
	// PlayerIDs are the game's human players (bots have no history).
	PlayerIDs []string
}

// Archive writes a finished game's record and adds it to its players' lists.
// It overwrites with the same values when repeated, so a redelivery is
// harmless. The record is written first, so a list never names a game that
// cannot be read.
func (w *Writer) Archive(ctx context.Context, r Record) error {
	ttl := w.opts.HistoryTTL
	key := scoringclient.ResultKey(r.GameID)
	pipe := w.rdb.Pipeline()
	pipe.HSet(ctx, key, scoringclient.RecordFieldTable, r.TableID, scoringclient.RecordFieldEndedAt, r.EndedAt.UnixMilli(),
		scoringclient.RecordFieldSheet, r.Sheet, scoringclient.RecordFieldStandings, r.Standings)
	if ttl > 0 {
		pipe.PExpire(ctx, key, ttl)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("sheetstore: archive %s: %w", r.GameID, err)
	}
	if len(r.PlayerIDs) == 0 {
		return nil
	}
	// Each player's list is in its own slot: a pipeline, not a script. ZADD
	// of the same member and score is a no-op, so repeating is harmless.
	pipe = w.rdb.Pipeline()
	for _, p := range r.PlayerIDs {
		pk := scoringclient.PlayerGamesKey(p)
		pipe.ZAdd(ctx, pk, redis.Z{Score: float64(r.EndedAt.UnixMilli()), Member: r.GameID})
		pipe.ZRemRangeByRank(ctx, pk, 0, -w.opts.HistoryPerPlayer-1)
		if ttl > 0 {
			pipe.PExpire(ctx, pk, ttl)
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("sheetstore: archive %s in players' lists: %w", r.GameID, err)
	}
	return nil
}

// PublishStandings appends a game's encoded FinalStandings to
// StandingsStream once per game, whatever is redelivered. It returns whether
// this call appended it.
func (w *Writer) PublishStandings(ctx context.Context, gameID string, data []byte, mark string) (bool, error) {
	args := []interface{}{"MAXLEN", "~", w.opts.StandingsStreamLen, "*"}
	args = append(args, w.entryFields(ctx, data)...)
	r, err := streams.Once(ctx, w.rdb, standingsDedupeKey(gameID), w.opts.StandingsDedupeTTL, mark,
		new(streams.Effect).Do("XADD", scoringclient.StandingsStream, args...))
	if err != nil {
		return false, fmt.Errorf("sheetstore: publish standings of %s: %w", gameID, err)
	}
	return r.Applied, nil
}
