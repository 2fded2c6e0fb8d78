// Package sheetstore is the Redis layout of score sheets: where the scoring
// service keeps each game's inputs and sheet, where it publishes sheet updates
// and final standings, and where finished games are kept for history. It
// owns the key names and the read and write functions, so that the scoring
// service (the only writer) and the gateway (a reader: live sheets, a
// player's history) agree on them without importing each other.
//
// Keys (every key of a table carries the table's hash tag, so the scripts
// that touch several of them run on Redis Cluster):
//
//	pulka:scoring:hands                        stream   ScoringInput, from the runners (HandsStream)
//	pulka:scoring:standings                    stream   FinalStandings, once per game (StandingsStream)
//	pulka:{t:<table>}:sheet                    stream   SheetUpdate of the table's games (SheetStream)
//	pulka:{t:<table>}:scoring:<game>:start     string   GameStarted
//	pulka:{t:<table>}:scoring:<game>:hands     hash     hand index → HandResult
//	pulka:{t:<table>}:scoring:<game>:end       string   GameEnded
//	pulka:{t:<table>}:scoring:<game>:sheet     hash     v, final, ended_at, sheet (the committed Sheet)
//	pulka:{t:<table>}:dedupe:scoring:<game>:…  string   dedupe keys of the inputs (streams.Once)
//	pulka:{g:<game>}:result                    hash     a finished game: table, ended_at, sheet, standings
//	pulka:{p:<player>}:games                   zset     the player's finished games, scored by end time (ms)
//
// Exactly once: every input is stored once per (game, kind, hand) by
// streams.Once (dedupe key and write in one script); a sheet is committed and
// its update published only when its version is higher than the stored one
// and the stored sheet is not final (one script); the final standings are
// appended once per game by streams.Once with a dedupe key in the standings
// stream's slot. Everything else (the history record, the players' lists) is
// an idempotent overwrite of the same values.
package sheetstore
