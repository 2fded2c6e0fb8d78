package scoringclient

import (
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/pulka/pulka/pkg/streams"
)

// Streams of the scoring service's contract.
const (
	// HandsStream is the scoring service's input: ScoringInput entries
	// appended by the table-runners, read with a consumer group.
	HandsStream = streams.KeyPrefix + ":scoring:hands"
	// StandingsStream carries one FinalStandings per finished game, for the
	// wallet's payouts.
	StandingsStream = streams.KeyPrefix + ":scoring:standings"
)

// Fields of a finished game's record (ResultKey), the history read model.
const (
	// RecordFieldTable holds the table id.
	RecordFieldTable = "table"
	// RecordFieldEndedAt holds the end time in Unix milliseconds (decimal).
	RecordFieldEndedAt = "ended_at"
	// RecordFieldSheet holds the final Sheet.
	RecordFieldSheet = "sheet"
	// RecordFieldStandings holds the FinalStandings.
	RecordFieldStandings = "standings"
)

// MaxIDLen bounds table, game and player ids: they are parts of keys.
const MaxIDLen = 128

// ErrBadID means an id cannot be part of a key: empty, too long, or
// containing a brace (which would break the hash tag), a colon, or a
// control or space character.
var ErrBadID = errors.New("scoring: invalid id")

// CheckID reports whether id may be used as a table, game or player id.
func CheckID(kind, id string) error {
	if id == "" || len(id) > MaxIDLen {
		return fmt.Errorf("%w: %s id %q must have 1..%d bytes", ErrBadID, kind, id, MaxIDLen)
	}
	if i := strings.IndexFunc(id, func(r rune) bool {
		return r == '{' || r == '}' || r == ':' || unicode.IsSpace(r) || unicode.IsControl(r)
	}); i >= 0 {
		return fmt.Errorf("%w: %s id %q contains %q", ErrBadID, kind, id, id[i:i+1])
	}
	return nil
}

// SheetStream is the stream of SheetUpdates of a table's games, which
// gateways follow for the players at the table.
func SheetStream(tableID string) string {
	return streams.KeyPrefix + ":" + streams.TableTag(tableID) + ":sheet"
}

// ResultKey holds a finished game for history (a hash of the RecordField*
// fields). It is keyed by the game alone: history outlives the table.
func ResultKey(gameID string) string { return streams.KeyPrefix + ":{g:" + gameID + "}:result" }

// PlayerGamesKey is a player's finished games, newest last by score (the
// end time in Unix milliseconds).
func PlayerGamesKey(playerID string) string { return streams.KeyPrefix + ":{p:" + playerID + "}:games" }
