package lobbyclient

// The lobby's contract: the streams and read models other services use,
// documented with their formats in proto/pulka/lobby/v1/lobby.proto. Only
// the lobby writes the read models (SnapshotKey, SummaryKey) and the view,
// start and reply streams. Its working keys (tables, counters, limits) are
// its own (services/lobby/internal/store) and are not named here.
//
// The keys the lobby's commit writes together — its working keys, the view
// and start streams, the snapshot and the summaries — share the hash tag
// Tag, so that on Redis Cluster they live in one slot (a script may only
// touch one slot). The command and reply streams are read and written one
// at a time and keep their own slots.
const (
	// Tag is the hash tag of the lobby's slot.
	Tag = "{lobby}"

	// CommandStream carries LobbyCommands from gateways (and runners) to
	// the lobby.
	CommandStream = "pulka:lobby:cmd"
	// ViewStream carries LobbyUpdates, one per change of the public list,
	// with versions 1, 2, 3, … in stream order.
	ViewStream = "pulka:" + Tag + ":view"
	// SnapshotKey holds the latest LobbyView the lobby wrote.
	SnapshotKey = "pulka:" + Tag + ":snapshot"
	// TableStartStream carries TableStarted messages for the assigner.
	TableStartStream = "pulka:" + Tag + ":tables:start"

	replyPrefix   = "pulka:lobby:reply:"
	summaryPrefix = "pulka:" + Tag + ":summary:"
)

// ReplyStream is the stream the lobby answers a gateway instance on.
func ReplyStream(instance string) string { return replyPrefix + instance }

// SummaryKey holds the TableSummary of one table, listed or private (never
// a password), for reading a table by id. It expires with the table.
func SummaryKey(tableID string) string { return summaryPrefix + tableID }
