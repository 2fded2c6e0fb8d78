package sheetstore

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/pulka/pulka/pkg/streams"
)

// Streams of the scoring service.
const (
	// HandsStream is the scoring service's input: ScoringInput entries
	// appended by the table-runners, read with a consumer group.
	HandsStream = streams.KeyPrefix + ":scoring:hands"
	// StandingsStream carries one FinalStandings per finished game, for the
	// wallet's payouts.
	StandingsStream = streams.KeyPrefix + ":scoring:standings"
)

// MaxIDLen bounds table, game and player ids: they are parts of keys.
const MaxIDLen = 128

// ErrBadID means an id cannot be part of a key: empty, too long, or
// containing a brace (which would break the hash tag), a colon, or a
// control or space character.
var ErrBadID = errors.New("sheetstore: invalid id")

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

func gameKey(tableID, gameID, part string) string {
	return streams.KeyPrefix + ":" + streams.TableTag(tableID) + ":scoring:" + gameID + ":" + part
}

// StartKey holds a game's GameStarted.
func StartKey(tableID, gameID string) string { return gameKey(tableID, gameID, "start") }

// HandsKey holds a game's HandResults by hand index.
func HandsKey(tableID, gameID string) string { return gameKey(tableID, gameID, "hands") }

// EndKey holds a game's GameEnded.
func EndKey(tableID, gameID string) string { return gameKey(tableID, gameID, "end") }

// SheetKey holds a game's committed sheet and its version.
func SheetKey(tableID, gameID string) string { return gameKey(tableID, gameID, "sheet") }

// ResultKey holds a finished game for history. It is keyed by the game
// alone: history outlives the table.
func ResultKey(gameID string) string { return streams.KeyPrefix + ":{g:" + gameID + "}:result" }

// PlayerGamesKey is a player's finished games, newest last by score (the
// end time in Unix milliseconds).
func PlayerGamesKey(playerID string) string { return streams.KeyPrefix + ":{p:" + playerID + "}:games" }

// The dedupe keys of the inputs of one game.
func startDedupeKey(tableID, gameID string) string {
	return streams.TableDedupe(tableID, "scoring:"+gameID+":start")
}

func handDedupeKey(tableID, gameID string, hand uint32) string {
	return streams.TableDedupe(tableID, "scoring:"+gameID+":hand:"+strconv.FormatUint(uint64(hand), 10))
}

func endDedupeKey(tableID, gameID string) string {
	return streams.TableDedupe(tableID, "scoring:"+gameID+":end")
}

// standingsDedupeKey shares StandingsStream's Redis Cluster slot: its hash
// tag is the stream's whole name, which is what the untagged stream key
// hashes by. So the dedupe key and the XADD fit in one script.
func standingsDedupeKey(gameID string) string {
	return streams.KeyPrefix + ":once:{" + StandingsStream + "}:" + gameID
}
