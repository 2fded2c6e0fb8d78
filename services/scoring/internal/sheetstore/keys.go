package sheetstore

import (
	"strconv"

	"github.com/pulka/pulka/pkg/scoringclient"
	"github.com/pulka/pulka/pkg/streams"
)

// The scoring service's working keys: only this package names them. The
// names other services read (streams, history) are scoringclient's.

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
	return streams.KeyPrefix + ":once:{" + scoringclient.StandingsStream + "}:" + gameID
}
