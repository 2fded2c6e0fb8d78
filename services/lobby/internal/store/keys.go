package store

// The lobby's working keys: only this package (and the service's tests)
// names them. The names other services use — the command, reply, view and
// start streams, the snapshot and the table summaries — are the lobby's
// contract, in pkg/lobbyclient. None is under a hash tag: the commit script
// touches several of them (and the contract's) at once, so the lobby needs
// them in one Redis (or, on Cluster, one slot — see docs/lobby.md).
const (
	// ConsumerGroup is the lobby's consumer group on lobbyclient.CommandStream.
	ConsumerGroup = "lobby"
	// MetaKey is a hash: version (of the last LobbyUpdate), stream_id (its
	// view-stream entry) and snapshot_version (of lobbyclient.SnapshotKey).
	MetaKey = "pulka:lobby:meta"
	// ListedKey is a hash: table id → TableSummary of every listed table.
	ListedKey = "pulka:lobby:listed"
	// IdleKey is a sorted set: waiting table id → the moment (Unix ms) it
	// expires unless something changes it first.
	IdleKey = "pulka:lobby:idle"
	// HeldPrefix + a player id is the set of waiting tables the player
	// hosts or sits at (their count is limited).
	HeldPrefix = "pulka:lobby:held:"

	tablePrefix    = "pulka:lobby:table:"
	stakersPrefix  = "pulka:lobby:stakers:"
	creatingPrefix = "pulka:lobby:creating:"
	ratePrefix     = "pulka:lobby:rate:"
	resultPrefix   = "pulka:lobby:done:"
)

// Fields of a table's hash (TableKey).
const (
	// TableFieldSummary holds the TableSummary (never a password).
	TableFieldSummary = "summary"
	// TableFieldRevision counts the table's changes (optimistic locking).
	TableFieldRevision = "rev"
	// TableFieldPassword holds the argon2id hash of the password, if any.
	TableFieldPassword = "pw"
	// TableFieldMembers holds the players a waiting table counts against
	// (space-separated): the sets under HeldPrefix are kept from it.
	TableFieldMembers = "members"
)

// TableKey is the hash of one table, listed or private.
func TableKey(tableID string) string { return tablePrefix + tableID }

// ResultKey holds the first LobbyCommandResult of a command id, so that a
// repeated command gets the same answer and is not applied twice.
func ResultKey(commandID string) string { return resultPrefix + commandID }

// StakersKey is the set of players the lobby asked the wallet to hold a
// stake for at a coin table (written before each hold): at the table's
// start, those not seated get their hold released.
func StakersKey(tableID string) string { return stakersPrefix + tableID }

// CreatingKey holds the table id a coin table's creation (by command id)
// chose, so that its retries create that table, whose stake the first
// attempt may have held already.
func CreatingKey(commandID string) string { return creatingPrefix + commandID }

// HeldKey is the set of waiting tables playerID hosts or sits at.
func HeldKey(playerID string) string { return HeldPrefix + playerID }

// CreateRateKey counts a player's recent table creations (a sorted set of
// command ids by time).
func CreateRateKey(playerID string) string { return ratePrefix + "create:" + playerID }

// GuessRateKey counts recent password guesses at a table: by one player,
// or by everybody when playerID is empty.
func GuessRateKey(tableID, playerID string) string {
	if playerID == "" {
		return ratePrefix + "guess:" + tableID
	}
	return ratePrefix + "guess:" + tableID + ":" + playerID
}

// GuesserRateKey counts a player's recent password guesses at all tables
// together.
func GuesserRateKey(playerID string) string { return ratePrefix + "guesser:" + playerID }
