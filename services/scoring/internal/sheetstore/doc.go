// Package sheetstore is the scoring service's Redis state: where it keeps
// each game's inputs and committed sheet, and how it publishes sheet
// updates, final standings and finished games. It alone names the working
// keys; the streams and the history read model it writes are the scoring
// service's contract, named in pkg/scoringclient (which other services use
// to read them).
//
// Working keys (every key of a table carries the table's hash tag, so the
// scripts that touch several of them run on Redis Cluster):
//
//	pulka:{t:<table>}:scoring:<game>:start     string   GameStarted
//	pulka:{t:<table>}:scoring:<game>:hands     hash     hand index → HandResult
//	pulka:{t:<table>}:scoring:<game>:end       string   GameEnded
//	pulka:{t:<table>}:scoring:<game>:sheet     hash     v, final, ended_at, sheet (the committed Sheet)
//	pulka:{t:<table>}:dedupe:scoring:<game>:…  string   dedupe keys of the inputs (streams.Once)
//
// Written for others (scoringclient): the table's sheet stream, the
// standings stream, a finished game's record and its players' lists.
//
// Exactly once: every input is stored once per (game, kind, hand) by
// streams.Once (dedupe key and write in one script); a sheet is committed and
// its update published only when its version is higher than the stored one
// and the stored sheet is not final (one script); the final standings are
// appended once per game by streams.Once with a dedupe key in the standings
// stream's slot. Everything else (the history record, the players' lists) is
// an idempotent overwrite of the same values.
package sheetstore
