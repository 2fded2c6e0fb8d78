package assign

import "github.com/pulka/pulka/pkg/streams"

// Keys of the assignment. They share the hash tag {assign}, so the scripts
// that touch several of them (a move fenced by the leader lease, a heartbeat
// that also prunes) run on Redis Cluster; the whole assignment is one slot,
// which is small (one field per live table, one member per runner).
const (
	// RunnersKey is a sorted set: runner id → heartbeat deadline (Redis
	// server time, ms). A runner is live while its deadline is ahead of
	// the server's clock.
	RunnersKey = streams.KeyPrefix + ":{assign}:runners"
	// RunnerInfoKey is a hash: runner id → "capacity,draining".
	RunnerInfoKey = streams.KeyPrefix + ":{assign}:runner-info"
	// OwnersKey is a hash: table id → owning runner id ("" while no runner
	// can take it).
	OwnersKey = streams.KeyPrefix + ":{assign}:owners"
	// LeaderKey is the assigner's leader lease (a streams lease: owner,
	// epoch). Moves are fenced by it.
	LeaderKey = streams.KeyPrefix + ":{assign}:leader"
	// StartGroup is the assigner's consumer group on the start stream.
	StartGroup = "assigner"
)

// RunnerTablesKey is the set of tables assigned to runner, kept beside
// OwnersKey so a runner reads only its own tables.
func RunnerTablesKey(runner string) string {
	return streams.KeyPrefix + ":{assign}:runner:" + runner
}

// RunnerBell is the Pub/Sub channel rung (with an empty message) each time
// a table is placed on runner, moved to it or moved away from it: the name
// of its set (RunnerTablesKey; channels and keys are separate namespaces).
// It is a wake-up, not the truth: the runner then reads its set, and still
// reads it every poll interval, so a bell lost in a reconnect only delays a
// table to the next poll (Store.Watch).
func RunnerBell(runner string) string { return RunnerTablesKey(runner) }

// StartKey holds a table's TableStarted (the seats, settings and the random
// game id the game is created from; no seed: every hand's server seed is
// drawn by the table-runner when the hand is committed) until its game is
// over. The assigner writes it
// before it gives the table an owner; the owner reads it to create the
// game. It is under the table's tag like every other key of the table.
func StartKey(tableID string) string {
	return streams.KeyPrefix + ":" + streams.TableTag(tableID) + ":start"
}
