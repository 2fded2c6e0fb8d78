// Package scoringclient is what other services use to talk to the scoring
// service: the names and formats of the streams and read models the scoring
// service publishes (its contract; see proto/pulka/scoring/v1/scoring.proto),
// a Reader of live sheets and players' histories, and the encoding of its
// input stream for the table-runners. The scoring service's working keys
// (a game's stored inputs and committed sheet, the dedupe keys) are its own
// (services/scoring/internal/sheetstore) and are not named here.
//
// The contract (every key of a table carries the table's hash tag):
//
//	pulka:scoring:hands                  stream   ScoringInput, from the runners (HandsStream)
//	pulka:scoring:standings              stream   FinalStandings, once per game (StandingsStream)
//	pulka:{t:<table>}:sheet              stream   SheetUpdate of the table's games (SheetStream)
//	pulka:{g:<game>}:result              hash     a finished game: table, ended_at, sheet, standings (ResultKey)
//	pulka:{p:<player>}:games             zset     the player's finished games, scored by end time in ms (PlayerGamesKey)
//
// Only the scoring service writes them; gateways and tools only read.
package scoringclient
