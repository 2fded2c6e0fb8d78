package store

import "github.com/pulka/pulka/pkg/lobbyclient"

// The lobby's working keys: only this package (and the service's tests)
// names them. The names other services use — the command, reply, view and
// start streams, the snapshot and the table summaries — are the lobby's
// contract, in pkg/lobbyclient. Every one is under the lobby's hash tag
// (lobbyclient.Tag): the commit script touches several of them (and the
// contract's) at once, so on Redis Cluster they must share one slot (see
// docs/lobby.md).
const (
	// ConsumerGroup is the lobby's consumer group on lobbyclient.CommandStream.
	ConsumerGroup = "lobby"
	// MetaKey is a hash: version (of the last LobbyUpdate), stream_id (its
	// view-stream entry) and snapshot_version (of lobbyclient.SnapshotKey).
	MetaKey = "pulka:" + lobbyclient.Tag + ":meta"
	// ListedKey is a hash: table id → TableSummary of every listed table.
	ListedKey = "pulka:" + lobbyclient.Tag + ":listed"
	// IdleKey is a sorted set: waiting table id → the moment (Unix ms) it
	// expires unless something changes it first.
	IdleKey = "pulka:" + lobbyclient.Tag + ":idle"
	// HeldPrefix + a player id is the set of waiting tables the player
	// hosts or sits at (their count is limited).
	HeldPrefix = "pulka:" + lobbyclient.Tag + ":held:"

	tablePrefix    = "pulka:" + lobbyclient.Tag + ":table:"
	stakersPrefix  = "pulka:" + lobbyclient.Tag + ":stakers:"
	creatingPrefix = "pulka:" + lobbyclient.Tag + ":creating:"
	ratePrefix     = "pulka:" + lobbyclient.Tag + ":rate:"
	resultPrefix   = "pulka:" + lobbyclient.Tag + ":done:"
	forwardPrefix  = "pulka:" + lobbyclient.Tag + ":forward:"
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

// ForwardKey is a hash (table: the table id, data: the tablev1.Command)
// holding the command a commit forwards to a table,
// from the commit until it is on the table's command stream: that
// stream is in the table's slot, not the lobby's, so the commit script
// cannot append to it (see Store.Commit).
func ForwardKey(commandID string) string { return forwardPrefix + commandID }

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

// CommandRateKey counts a player's recent lobby commands of every kind
// (a sorted set of command ids by time).
func CommandRateKey(playerID string) string { return ratePrefix + "cmd:" + playerID }

// CoinSitRateKey counts a player's recent stake holds: sit-downs at Domino
// Coin tables, and coin tables created with the host seated.
func CoinSitRateKey(playerID string) string { return ratePrefix + "coinsit:" + playerID }

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
