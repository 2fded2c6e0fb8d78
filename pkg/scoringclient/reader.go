package scoringclient

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"google.golang.org/protobuf/proto"

	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	"github.com/pulka/pulka/pkg/streams"
)

// ErrNotFound means there is no such sheet or finished game (never played,
// not finished yet, or expired).
var ErrNotFound = errors.New("scoring: not found")

// History page sizes.
const (
	DefaultPageSize = 20
	MaxPageSize     = 100
)

// Reader reads the scoring service's read models: a table's latest sheet
// update and players' finished games.
type Reader struct {
	rdb redis.UniversalClient
}

// NewReader makes a reader.
func NewReader(rdb redis.UniversalClient) *Reader { return &Reader{rdb: rdb} }

// FinishedGame is a game kept for history.
type FinishedGame struct {
	GameID, TableID string
	EndedAt         time.Time
	Sheet           *scoringv1.Sheet
	Standings       *scoringv1.FinalStandings
}

// Game reads a finished game.
func (r *Reader) Game(ctx context.Context, gameID string) (FinishedGame, error) {
	if err := CheckID("game", gameID); err != nil {
		return FinishedGame{}, err
	}
	h, err := r.rdb.HGetAll(ctx, ResultKey(gameID)).Result()
	if err != nil {
		return FinishedGame{}, fmt.Errorf("scoringclient: game %s: %w", gameID, err)
	}
	if len(h) == 0 {
		return FinishedGame{}, fmt.Errorf("%w: game %s", ErrNotFound, gameID)
	}
	return decodeRecord(gameID, h)
}

func decodeRecord(gameID string, h map[string]string) (FinishedGame, error) {
	g := FinishedGame{GameID: gameID, TableID: h[RecordFieldTable], Sheet: &scoringv1.Sheet{}, Standings: &scoringv1.FinalStandings{}}
	ms, err := strconv.ParseInt(h[RecordFieldEndedAt], 10, 64)
	if err != nil {
		return FinishedGame{}, fmt.Errorf("scoringclient: game %s: bad ended_at %q", gameID, h[RecordFieldEndedAt])
	}
	g.EndedAt = time.UnixMilli(ms)
	if err := proto.Unmarshal([]byte(h[RecordFieldSheet]), g.Sheet); err != nil {
		return FinishedGame{}, fmt.Errorf("scoringclient: game %s: sheet: %w", gameID, err)
	}
	if err := proto.Unmarshal([]byte(h[RecordFieldStandings]), g.Standings); err != nil {
		return FinishedGame{}, fmt.Errorf("scoringclient: game %s: standings: %w", gameID, err)
	}
	return g, nil
}

// Page selects part of a player's history: games that ended strictly before
// Before (zero: the newest), at most Limit of them (zero: DefaultPageSize;
// at most MaxPageSize). The next page starts before the last game's EndedAt.
type Page struct {
	Before time.Time
	Limit  int
}

// window is the page's size (DefaultPageSize when unset, at most
// MaxPageSize) and the ZRANGEBYSCORE bound of its newest game: games
// strictly before Before, or all.
func (p Page) window() (limit int, maxScore string) {
	limit = p.Limit
	if limit <= 0 {
		limit = DefaultPageSize
	}
	limit = min(limit, MaxPageSize)
	maxScore = "+inf"
	if !p.Before.IsZero() {
		maxScore = "(" + strconv.FormatInt(p.Before.UnixMilli(), 10)
	}
	return limit, maxScore
}

// History returns a player's finished games, newest first. Games whose
// record has expired are left out.
func (r *Reader) History(ctx context.Context, playerID string, p Page) ([]FinishedGame, error) {
	if err := CheckID("player", playerID); err != nil {
		return nil, err
	}
	limit, maxScore := p.window()
	ids, err := r.rdb.ZRevRangeByScore(ctx, PlayerGamesKey(playerID), &redis.ZRangeBy{
		Max: maxScore, Min: "-inf", Count: int64(limit),
	}).Result()
	if err != nil {
		return nil, fmt.Errorf("scoringclient: history of %s: %w", playerID, err)
	}
	return r.games(ctx, playerID, ids)
}

// games reads the records of ids, leaving out expired ones.
func (r *Reader) games(ctx context.Context, playerID string, ids []string) ([]FinishedGame, error) {
	if len(ids) == 0 {
		return []FinishedGame{}, nil
	}
	pipe := r.rdb.Pipeline()
	cmds := make([]*redis.MapStringStringCmd, len(ids))
	for i, id := range ids {
		cmds[i] = pipe.HGetAll(ctx, ResultKey(id))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("scoringclient: history of %s: %w", playerID, err)
	}
	out := make([]FinishedGame, 0, len(ids))
	for i, cmd := range cmds {
		h := cmd.Val()
		if len(h) == 0 {
			continue // expired record
		}
		g, err := decodeRecord(ids[i], h)
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, nil
}

// HistoryCount is how many finished games a player's list holds.
func (r *Reader) HistoryCount(ctx context.Context, playerID string) (int64, error) {
	if err := CheckID("player", playerID); err != nil {
		return 0, err
	}
	n, err := r.rdb.ZCard(ctx, PlayerGamesKey(playerID)).Result()
	if err != nil {
		return 0, fmt.Errorf("scoringclient: history count of %s: %w", playerID, err)
	}
	return n, nil
}

// Latest returns a table's last sheet update and its stream ID, which a
// gateway sends a player who joins or reconnects before following
// SheetStream from that ID.
func (r *Reader) Latest(ctx context.Context, tableID string) (*scoringv1.SheetUpdate, string, error) {
	if err := CheckID("table", tableID); err != nil {
		return nil, "", err
	}
	xs, err := r.rdb.XRevRangeN(ctx, SheetStream(tableID), "+", "-", 1).Result()
	if err != nil {
		return nil, "", fmt.Errorf("scoringclient: latest sheet of %s: %w", tableID, err)
	}
	if len(xs) == 0 {
		return nil, "", fmt.Errorf("%w: no sheet for table %s", ErrNotFound, tableID)
	}
	u, err := DecodeUpdate(streams.Message{Data: fieldBytes(xs[0].Values[streams.FieldData])})
	if err != nil {
		return nil, "", err
	}
	return u, xs[0].ID, nil
}

// DecodeUpdate decodes a SheetStream entry (read with a streams.Tailer or
// ReadAfter).
func DecodeUpdate(m streams.Message) (*scoringv1.SheetUpdate, error) {
	u := &scoringv1.SheetUpdate{}
	if err := proto.Unmarshal(m.Data, u); err != nil {
		return nil, fmt.Errorf("scoringclient: sheet update %s: %w", m.ID, err)
	}
	return u, nil
}

// DecodeStandings decodes a StandingsStream entry.
func DecodeStandings(m streams.Message) (*scoringv1.FinalStandings, error) {
	s := &scoringv1.FinalStandings{}
	if err := proto.Unmarshal(m.Data, s); err != nil {
		return nil, fmt.Errorf("scoringclient: standings %s: %w", m.ID, err)
	}
	return s, nil
}

// InputEntry is the HandsStream entry of a scoring input, for the
// table-runners to publish with a streams.Publisher.
func InputEntry(in *scoringv1.ScoringInput) (streams.Entry, error) {
	if err := CheckID("table", in.GetTableId()); err != nil {
		return streams.Entry{}, err
	}
	if err := CheckID("game", in.GetGameId()); err != nil {
		return streams.Entry{}, err
	}
	b, err := proto.Marshal(in)
	if err != nil {
		return streams.Entry{}, fmt.Errorf("scoringclient: encode input: %w", err)
	}
	return streams.Entry{Stream: HandsStream, Data: b}, nil
}

// EntryTime is when a stream entry was appended, from its ID ("ms-seq").
func EntryTime(id string) (time.Time, bool) {
	ms := id
	for i := 0; i < len(id); i++ {
		if id[i] == '-' {
			ms = id[:i]
			break
		}
	}
	n, err := strconv.ParseInt(ms, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/int64(time.Millisecond) {
		return time.Time{}, false
	}
	return time.UnixMilli(n), true
}

func fieldBytes(v interface{}) []byte {
	s, _ := v.(string)
	return []byte(s)
}
