package lobbyclient

// The lobby's contract: the streams and read models other services use,
// documented with their formats in proto/pulka/lobby/v1/lobby.proto. Only
// the lobby writes the read models (SnapshotKey, SummaryKey) and the view,
// start and reply streams. Its working keys (tables, counters, limits) are
// its own (services/lobby/internal/store) and are not named here.
const (
	// CommandStream carries LobbyCommands from gateways (and runners) to
	// the lobby.
	CommandStream = "pulka:lobby:cmd"
	// ViewStream carries LobbyUpdates, one per change of the public list,
	// with versions 1, 2, 3, … in stream order.
	ViewStream = "pulka:lobby:view"
	// SnapshotKey holds the latest LobbyView the lobby wrote.
	SnapshotKey = "pulka:lobby:snapshot"
	// TableStartStream carries TableStarted messages for the assigner.
	TableStartStream = "pulka:tables:start"

	replyPrefix   = "pulka:lobby:reply:"
	summaryPrefix = "pulka:lobby:summary:"
)

// ReplyStream is the stream the lobby answers a gateway instance on.
func ReplyStream(instance string) string { return replyPrefix + instance }

// SummaryKey holds the TableSummary of one table, listed or private (never
// a password), for reading a table by id. It expires with the table.
func SummaryKey(tableID string) string { return summaryPrefix + tableID }
