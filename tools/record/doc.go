// Package record reads, writes and replays Pulka game records: a game's seed,
// settings and every move, which is all it takes to rebuild the game exactly
// (the engines are deterministic). The format is described in
// docs/game-record.md.
//
// Replay checks every move with the rules engine, so a record is also a proof:
// a record that replays is a legal game, and its final sheet is the one the
// server computed.
package record
